// Hourly rollup rows, one per (hour, workspace, key, model, provider), added to by the meter aggregator
// for every generation (aggregation.ts). Reports (/activity, /analytics/query) read these rows, never the
// generations themselves, so a month of reports is at most 720 rows per combination in use.
import type { GenerationRecord } from './generation-record.js';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { nanosToStore } from '../platform/money.js';
import { shuttingDownError } from '../platform/shutdown.js';

/** Rows are kept for 400 days (DynamoDB TTL), beyond which reports have nothing to read. */
export const ROLLUP_RETENTION_S = 400 * 86_400;

/**
 * Histogram buckets of time to first token (ms) and of output tokens per second after it: bucket i counts
 * the hour's generations up to bound i (the last bucket everything above), so that an endpoint's latency
 * and throughput percentiles can be read from rollups, which every function sees (the router's in-memory
 * EndpointHealth lives in one inference instance only). The latency bounds reach past the default request
 * deadline (120 s, within which every first token arrives), so that only a deadline configured above
 * 128 s can leave generations in the open bucket.
 */
export const LATENCY_BUCKETS_MS = [100, 250, 500, 1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000] as const;
export const THROUGHPUT_BUCKETS_TPS = [10, 25, 50, 100, 200, 400] as const;
export const LATENCY_COUNTERS = ['lat0', 'lat1', 'lat2', 'lat3', 'lat4', 'lat5', 'lat6', 'lat7', 'lat8', 'lat9', 'lat10', 'lat11'] as const;
export const THROUGHPUT_COUNTERS = ['tps0', 'tps1', 'tps2', 'tps3', 'tps4', 'tps5', 'tps6'] as const;
/** Counters beside ROLLUP_COUNTERS that only endpoint health reads (reports do not). */
export const HEALTH_COUNTERS = [...LATENCY_COUNTERS, ...THROUGHPUT_COUNTERS] as const;
export type HealthCounter = (typeof HEALTH_COUNTERS)[number];
/**
 * Of `errors`, the generations the gateway itself cut short by shutting down (a stream ended with its 503
 * error event): errors of the generation, which reports count, but not of its endpoint, which uptime
 * leaves out. Only endpoint health reads it.
 */
export const SHUTDOWN_ERRORS = 'shutdown_errors';
const SHUTTING_DOWN_MESSAGE = shuttingDownError().message;

/** The rule: a generation in error whose error is the gateway's own shutdown reply (503, its message). */
export function endedByShutdown(record: Pick<GenerationRecord, 'status' | 'error'>): boolean {
  return record.status === 'error' && record.error?.status === 503 && record.error.message === SHUTTING_DOWN_MESSAGE;
}

/** The counters of a rollup row; every one is a sum over the hour's generations. */
export const ROLLUP_COUNTERS = [
  'requests', 'cost', 'byok_cost', 'prompt_tokens', 'completion_tokens', 'reasoning_tokens', 'cached_tokens',
  'latency_ms', 'first_token_ms', 'generation_time_ms', 'errors', 'cancelled', 'streamed',
] as const;
export type RollupCounter = (typeof ROLLUP_COUNTERS)[number];

export const hourOf = (iso: string) => iso.slice(0, 13);

/**
 * GSI1 listing of rollup rows by endpoint (model@provider) and hour, across organizations: the public
 * GET /models/{author}/{slug}/endpoints reads an endpoint's last hours from it. Set on the row itself (no
 * extra item in the settlement transaction); the sort key varies per row, so the index can split the load.
 */
export const endpointRollupListing = (orgId: string, hour: string, workspaceId: string, keyHash: string, model: string, provider: string) => ({
  gsi1pk: endpointRollupsOf(model, provider).gsi1pk, gsi1sk: `${hour}#${orgId}#${workspaceId}#${keyHash}`,
});
export const endpointRollupsOf = (model: string, provider: string) => ({ gsi1pk: `RU#EP#${model}@${provider}` });

function bucketOf(value: number, bounds: readonly number[]): number {
  const index = bounds.findIndex((bound) => value <= bound);
  return index === -1 ? bounds.length : index;
}

/** The histogram counters one generation adds to (none when it produced no first token or no output). */
function histogram(record: GenerationRecord): Partial<Record<HealthCounter, number>> {
  const counters: Partial<Record<HealthCounter, number>> = {};
  if (record.status === 'error' || record.status === 'cancelled') return counters;
  const firstToken = record.first_token_ms ?? record.latency_ms;
  counters[LATENCY_COUNTERS[bucketOf(firstToken, LATENCY_BUCKETS_MS)]!] = 1;
  if (record.streamed && record.generation_time_ms > 0 && record.usage.output_tokens > 0) {
    const tps = record.usage.output_tokens / (record.generation_time_ms / 1000);
    counters[THROUGHPUT_COUNTERS[bucketOf(tps, THROUGHPUT_BUCKETS_TPS)]!] = 1;
  }
  return counters;
}

/** What one generation (or a batch of them, summed) adds to its rollup row. */
export interface RollupDelta {
  key: { pk: string; sk: string };
  /** Plain attributes (dimensions, ttl), SET on every update. */
  dimensions: Record<string, string | number>;
  /** Counters, ADDed. */
  counters: Record<string, number | bigint>;
}

export function rollupDelta(record: GenerationRecord): RollupDelta {
  const hour = hourOf(record.created_at);
  const counters: Record<RollupCounter | HealthCounter | typeof SHUTDOWN_ERRORS, number | bigint> = {
    requests: 1,
    cost: record.is_byok ? 0 : nanosToStore(record.cost.total),
    byok_cost: record.is_byok ? nanosToStore(record.cost.total) : 0,
    prompt_tokens: record.usage.input_tokens,
    completion_tokens: record.usage.output_tokens,
    reasoning_tokens: record.usage.reasoning_tokens,
    cached_tokens: record.usage.cached_input_tokens,
    latency_ms: record.latency_ms,
    first_token_ms: record.first_token_ms ?? 0,
    generation_time_ms: record.generation_time_ms,
    errors: record.status === 'error' ? 1 : 0,
    cancelled: record.status === 'cancelled' ? 1 : 0,
    streamed: record.streamed ? 1 : 0,
    [SHUTDOWN_ERRORS]: endedByShutdown(record) ? 1 : 0,
    ...Object.fromEntries(HEALTH_COUNTERS.map((name) => [name, 0])) as Record<HealthCounter, number>,
    ...histogram(record),
  };
  // What serving it cost on AWS, for reports (the record carries it when it is written: pages.ts).
  if (record.infra) (counters as Record<string, number | bigint>).infra_atto = nanosToStore(record.infra.total);
  return {
    key: itemKeys.rollup(record.org_id, hour, record.workspace_id, record.key_hash, record.model, record.provider),
    dimensions: {
      type: 'rollup',
      hour,
      workspace_id: record.workspace_id,
      key_hash: record.key_hash,
      model: record.model,
      provider: record.provider,
      ...endpointRollupListing(record.org_id, hour, record.workspace_id, record.key_hash, record.model, record.provider),
      ttl: Math.floor(Date.parse(`${hour}:00:00Z`) / 1000) + ROLLUP_RETENTION_S,
    },
    counters,
  };
}
