// POST /analytics/query over hourly rollup rows: filter by dimension, group by dimensions and a time
// bucket, sum counters, then derive the metrics. Every metric is computed from sums, so a day's figure
// equals the sum of its hours exactly (money in nano-dollars until the reply).
import type { z } from 'zod';
import { InvalidInputError } from '../platform/errors.js';
import { nanosToUsd } from '../platform/money.js';
import type { RollupRow } from '../billing/rollup-repository.js';
import { attoToUsd } from '../billing/infrastructure.js';
import { windowStart } from '../billing/periods.js';
import { ANALYTICS_DIMENSIONS, ANALYTICS_GRANULARITIES, ANALYTICS_OPERATORS, type analyticsQueryBody } from './schemas.js';

type Dimension = (typeof ANALYTICS_DIMENSIONS)[number];
type Granularity = (typeof ANALYTICS_GRANULARITIES)[number];
type Sums = RollupRow['counters'];

interface MetricDef {
  label: string;
  format: 'number' | 'currency' | 'percent' | 'latency' | 'throughput';
  rate: boolean;
  value: (sums: Sums) => number | null;
}

const ratio = (numerator: bigint, denominator: bigint) => (denominator === 0n ? null : Number(numerator) / Number(denominator));

const METRICS: Record<string, MetricDef> = {
  requests: { label: 'Requests', format: 'number', rate: false, value: (s) => Number(s.requests) },
  cost: { label: 'Spend (credits)', format: 'currency', rate: false, value: (s) => nanosToUsd(s.cost) },
  byok_cost: { label: 'BYOK spend', format: 'currency', rate: false, value: (s) => nanosToUsd(s.byok_cost) },
  infrastructure_cost: { label: 'Infrastructure cost (AWS)', format: 'currency', rate: false, value: (s) => attoToUsd(s.infra_atto) },
  avg_cost: { label: 'Average spend per request', format: 'currency', rate: true, value: (s) => (s.requests === 0n ? null : nanosToUsd(s.cost / s.requests)) },
  prompt_tokens: { label: 'Prompt tokens', format: 'number', rate: false, value: (s) => Number(s.prompt_tokens) },
  completion_tokens: { label: 'Completion tokens', format: 'number', rate: false, value: (s) => Number(s.completion_tokens) },
  reasoning_tokens: { label: 'Reasoning tokens', format: 'number', rate: false, value: (s) => Number(s.reasoning_tokens) },
  cached_tokens: { label: 'Cached prompt tokens', format: 'number', rate: false, value: (s) => Number(s.cached_tokens) },
  total_tokens: { label: 'Total tokens', format: 'number', rate: false, value: (s) => Number(s.prompt_tokens + s.completion_tokens) },
  errors: { label: 'Errors', format: 'number', rate: false, value: (s) => Number(s.errors) },
  cancelled: { label: 'Cancelled', format: 'number', rate: false, value: (s) => Number(s.cancelled) },
  error_rate: { label: 'Error rate', format: 'percent', rate: true, value: (s) => ratio(s.errors, s.requests) },
  avg_latency_ms: { label: 'Average latency', format: 'latency', rate: true, value: (s) => ratio(s.latency_ms, s.requests) },
  avg_first_token_ms: { label: 'Average time to first token', format: 'latency', rate: true, value: (s) => ratio(s.first_token_ms, s.requests) },
  tokens_per_second: { label: 'Output tokens per second', format: 'throughput', rate: true, value: (s) => ratio(s.completion_tokens * 1000n, s.generation_time_ms) },
};

const DIMENSION_LABELS: Record<Dimension, string> = { model: 'Model', provider: 'Provider', api_key: 'API key (hash)', workspace: 'Workspace' };
const GRANULARITY_LABELS: Record<Granularity, string> = { hour: 'Hour', day: 'Day', week: 'Week (from Monday)', month: 'Month' };

export const ANALYTICS_META = {
  dimensions: ANALYTICS_DIMENSIONS.map((name) => ({ name, display_label: DIMENSION_LABELS[name] })),
  granularities: ANALYTICS_GRANULARITIES.map((name) => ({ name, display_label: GRANULARITY_LABELS[name] })),
  metrics: Object.entries(METRICS).map(([name, metric]) => ({ name, display_label: metric.label, display_format: metric.format, is_rate: metric.rate })),
  operators: ANALYTICS_OPERATORS.map((name) => ({ name, value_type: name === 'in' || name === 'not_in' ? 'array' : 'scalar' })),
};

function dimensionValue(row: RollupRow, dimension: Dimension, providerNames: ReadonlyMap<string, string>): string {
  if (dimension === 'model') return row.model;
  if (dimension === 'provider') return providerNames.get(row.provider) ?? row.provider;
  if (dimension === 'api_key') return row.key_hash;
  return row.workspace_id;
}

function bucketOf(hour: string, granularity: Granularity): string {
  if (granularity === 'hour') return `${hour}:00:00.000Z`;
  const date = new Date(`${hour}:00:00Z`);
  const start = granularity === 'day' ? windowStart('daily', date) : granularity === 'week' ? windowStart('weekly', date) : windowStart('monthly', date);
  return `${start}T00:00:00.000Z`;
}

const zeroSums = (): Sums => ({
  requests: 0n, cost: 0n, byok_cost: 0n, prompt_tokens: 0n, completion_tokens: 0n, reasoning_tokens: 0n, cached_tokens: 0n,
  latency_ms: 0n, first_token_ms: 0n, generation_time_ms: 0n, errors: 0n, cancelled: 0n, streamed: 0n, infra_atto: 0n,
});

function add(into: Sums, from: Sums): void {
  for (const name of Object.keys(into) as Array<keyof Sums>) into[name] += from[name];
}

function isDimension(name: string): name is Dimension {
  return (ANALYTICS_DIMENSIONS as readonly string[]).includes(name);
}

type Query = z.infer<typeof analyticsQueryBody>;
type Row = Record<string, string | number | null>;

export function runAnalyticsQuery(rows: RollupRow[], query: Query, providerNames: ReadonlyMap<string, string>): { rows: Row[]; truncated: boolean; warnings: string[] } {
  const warnings: string[] = [];
  query.metrics.forEach((metric, index) => {
    if (!Object.hasOwn(METRICS, metric)) throw new InvalidInputError(`Invalid metrics: unknown metric "${metric}"; see GET /analytics/meta`);
    if (query.metrics.indexOf(metric) !== index) throw new InvalidInputError(`Invalid metrics: "${metric}" is named twice`);
  });
  const dimensions = query.dimensions ?? [];
  dimensions.forEach((dimension, index) => {
    if (!isDimension(dimension)) throw new InvalidInputError(`Invalid dimensions: unknown dimension "${dimension}"; one of ${ANALYTICS_DIMENSIONS.join(', ')}`);
    if (dimensions.indexOf(dimension) !== index) throw new InvalidInputError(`Invalid dimensions: "${dimension}" is named twice`);
  });
  const granularity = query.granularity;
  if (granularity !== undefined && !(ANALYTICS_GRANULARITIES as readonly string[]).includes(granularity)) {
    throw new InvalidInputError(`Invalid granularity: "${granularity}"; one of ${ANALYTICS_GRANULARITIES.join(', ')}`);
  }
  const filters = (query.filters ?? []).map((filter) => {
    if (!isDimension(filter.field)) throw new InvalidInputError(`Invalid filters: "${filter.field}" is not a dimension; one of ${ANALYTICS_DIMENSIONS.join(', ')}`);
    if (!(ANALYTICS_OPERATORS as readonly string[]).includes(filter.operator)) throw new InvalidInputError(`Invalid filters: unknown operator "${filter.operator}"; one of ${ANALYTICS_OPERATORS.join(', ')}`);
    const many = filter.operator === 'in' || filter.operator === 'not_in';
    if (many !== Array.isArray(filter.value)) throw new InvalidInputError(`Invalid filters: operator "${filter.operator}" takes ${many ? 'an array' : 'a single value'}`);
    const values = new Set([filter.value].flat().map(String));
    const negate = filter.operator === 'neq' || filter.operator === 'not_in';
    return { field: filter.field, values, negate };
  });
  if (query.classifier_dimensions !== undefined || query.classifier_filters !== undefined) {
    warnings.push('classifier_dimensions and classifier_filters are not supported by this gateway and were ignored');
  }

  const groups = new Map<string, { keys: Row; sums: Sums }>();
  for (const row of rows) {
    if (!filters.every((filter) => filter.values.has(dimensionValue(row, filter.field, providerNames)) !== filter.negate)) continue;
    const keys: Row = {};
    if (granularity) keys.time_bucket = bucketOf(row.hour, granularity as Granularity);
    for (const dimension of dimensions as Dimension[]) keys[dimension] = dimensionValue(row, dimension, providerNames);
    const id = JSON.stringify(keys);
    let group = groups.get(id);
    if (!group) {
      group = { keys, sums: zeroSums() };
      groups.set(id, group);
    }
    add(group.sums, row.counters);
  }

  let selected = [...groups.values()];
  if (query.group_limit !== undefined && dimensions.length > 0) {
    // Keep the top groups by the first metric over the whole range, across time buckets.
    const totals = new Map<string, Sums>();
    for (const group of selected) {
      const id = JSON.stringify(dimensions.map((dimension) => group.keys[dimension]));
      const sums = totals.get(id) ?? zeroSums();
      add(sums, group.sums);
      totals.set(id, sums);
    }
    const first = METRICS[query.metrics[0]!]!;
    const keep = new Set([...totals.entries()].sort(([, a], [, b]) => (first.value(b) ?? 0) - (first.value(a) ?? 0)).slice(0, query.group_limit).map(([id]) => id));
    selected = selected.filter((group) => keep.has(JSON.stringify(dimensions.map((dimension) => group.keys[dimension]))));
  }

  const result: Row[] = selected.map((group) => {
    const row: Row = { ...group.keys };
    for (const metric of query.metrics) row[metric] = METRICS[metric]!.value(group.sums);
    return row;
  });
  const order = query.order_by ?? (granularity ? { field: 'time_bucket', direction: 'asc' as const } : { field: query.metrics[0]!, direction: 'desc' as const });
  if (order.field !== 'time_bucket' && !query.metrics.includes(order.field) && !dimensions.includes(order.field)) {
    throw new InvalidInputError(`Invalid order_by.field: "${order.field}" is neither a requested metric, a requested dimension nor time_bucket`);
  }
  const sign = order.direction === 'asc' ? 1 : -1;
  result.sort((a, b) => {
    const x = a[order.field] ?? null;
    const y = b[order.field] ?? null;
    if (x === y) return 0;
    if (x === null) return 1;
    if (y === null) return -1;
    return (x < y ? -1 : 1) * sign;
  });
  const limit = query.limit ?? 1000;
  return { rows: result.slice(0, limit), truncated: result.length > limit, warnings };
}
