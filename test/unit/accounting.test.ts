// Reset windows, the maximum-cost estimate, the infrastructure cost arithmetic and the analytics engine.
import { describe, expect, it } from '@jest/globals';
import { currentPeriods, windowEnd, windowStart } from '../../lambdas/billing/periods.js';
import { meterAt, newMeter, spent } from '../../lambdas/billing/meter.js';
import { IMAGE_TOKENS, MESSAGE_OVERHEAD_TOKENS, maxCost, outputTokenBound, promptTokenBound, reservationFor } from '../../lambdas/inference/estimate.js';
import { attoToDecimal, infrastructureCost, type Invocation } from '../../lambdas/billing/infrastructure.js';
import { priceToAttoUsd, pricesFor } from '../../lambdas/billing/aws-prices.js';
import { emfLine } from '../../lambdas/billing/metrics.js';
import { runAnalyticsQuery } from '../../lambdas/analytics/analytics.js';
import type { RollupRow } from '../../lambdas/billing/rollup-repository.js';
import type { CatalogEndpoint } from '../../lambdas/catalog/types.js';
import type { GenerationRecord } from '../../lambdas/billing/generation-record.js';
import { emptyUsage } from '../../lambdas/providers/types.js';
import { HttpError, httpErrorOf } from '../../lambdas/platform/http/errors.js';
import { DomainError } from '../../lambdas/platform/errors.js';

describe('reset windows (UTC)', () => {
  it.each([
    ['2026-11-22T23:59:59.999Z', '2026-11-22', '2026-11-16', '2026-11-01'], // Sunday: still the week of Monday the 16th
    ['2026-11-23T00:00:00.000Z', '2026-11-23', '2026-11-23', '2026-11-01'], // Monday midnight starts a week
    ['2026-12-31T12:00:00.000Z', '2026-12-31', '2026-12-28', '2026-12-01'],
    ['2027-01-01T00:00:00.000Z', '2027-01-01', '2026-12-28', '2027-01-01'], // a week spans the new year
    ['2028-02-29T05:00:00.000Z', '2028-02-29', '2028-02-28', '2028-02-01'], // leap day
  ])('%s is in day %s, week %s, month %s', (at, day, week, month) => {
    expect(currentPeriods(new Date(at))).toEqual({ daily: day, weekly: week, monthly: month });
  });

  it('ends each window at the next one\'s start', () => {
    const at = new Date('2026-02-28T10:00:00Z');
    expect(windowEnd('daily', at)).toBe('2026-03-01T00:00:00.000Z');
    expect(windowEnd('weekly', at)).toBe('2026-03-02T00:00:00.000Z');
    expect(windowEnd('monthly', at)).toBe('2026-03-01T00:00:00.000Z');
    expect(windowEnd('monthly', new Date('2026-12-15T00:00:00Z'))).toBe('2027-01-01T00:00:00.000Z');
    expect(windowStart('weekly', new Date('2026-03-01T23:00:00Z'))).toBe('2026-02-23');
  });

  it('reads counters of ended windows as zero without touching the rest', () => {
    const meter = { ...newMeter(new Date('2026-11-21T10:00:00Z')), held: 5n };
    meter.usage = { total: 100n, daily: 10n, weekly: 40n, monthly: 70n };
    meter.byok_usage = { total: 9n, daily: 1n, weekly: 2n, monthly: 3n };
    const nextDay = meterAt(meter, new Date('2026-11-22T00:00:00Z')); // Sunday: same week
    expect(nextDay.usage).toEqual({ total: 100n, daily: 0n, weekly: 40n, monthly: 70n });
    expect(spent(nextDay, 'weekly', true)).toBe(42n);
    expect(spent(nextDay, 'daily', false)).toBe(0n);
    expect(nextDay.held).toBe(5n);
    const nextMonth = meterAt(meter, new Date('2026-12-01T00:00:00Z'));
    expect(nextMonth.usage).toEqual({ total: 100n, daily: 0n, weekly: 0n, monthly: 0n });
  });
});

const endpoint = (overrides: Partial<CatalogEndpoint> = {}): CatalogEndpoint => ({
  model: 'm/x', provider: 'p', provider_name: 'P', adapter: 'openai-chat', upstream_model: 'x',
  pricing: { prompt: 1000n, completion: 3000n, request: 7n, input_cache_read: 100n, input_cache_write: 1250n, internal_reasoning: 3000n },
  context_length: 10_000, max_completion_tokens: 500, supported_parameters: [], input_modalities: ['text'], output_modalities: ['text'],
  service_tiers: [], data_collection: 'allow', throughput_tps: 1, latency_ms: 1, ...overrides,
});

describe('maximum cost of a request', () => {
  it('bounds prompt tokens by UTF-8 bytes plus a per-message allowance, and images by a fixed allowance', () => {
    const params = {
      messages: [
        { role: 'system' as const, content: [{ type: 'text' as const, text: 'be brief' }] },
        { role: 'user' as const, content: [{ type: 'text' as const, text: 'héllo' }, { type: 'image' as const, url: 'data:image/png;base64,AAAA' }] },
      ],
    };
    expect(promptTokenBound(params)).toBe(8 + 6 + IMAGE_TOKENS + 2 * MESSAGE_OVERHEAD_TOKENS);
  });

  it('caps the output by the endpoint\'s maximum (or its context length) and prices it at the dearer rate', () => {
    const params = { messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'abcd' }] }] };
    expect(outputTokenBound(params, endpoint())).toBe(500);
    expect(outputTokenBound({ ...params, max_output_tokens: 50 }, endpoint())).toBe(50);
    expect(outputTokenBound({ ...params, max_output_tokens: 5000 }, endpoint())).toBe(500);
    expect(outputTokenBound(params, endpoint({ max_completion_tokens: null }))).toBe(endpoint().context_length);
    const prompt = 4 + MESSAGE_OVERHEAD_TOKENS;
    // prompt at the dearest input rate (cache write 1250), output at completion 3000, plus the request fee
    expect(maxCost({ ...params, max_output_tokens: 10 }, endpoint())).toBe(BigInt(prompt) * 1250n + 10n * 3000n + 7n);
    expect(maxCost({ ...params, max_output_tokens: 10 }, endpoint({ pricing: { ...endpoint().pricing, internal_reasoning: 9000n } }))).toBe(BigInt(prompt) * 1250n + 10n * 9000n + 7n);
  });

  it('holds max_tokens of output even when the prompt\'s byte bound exceeds the context (the real prompt may be far shorter)', () => {
    // 9 KB of text: a bound of ~9,000 tokens, about 2,250 real ones, in an 8,192-token context without a
    // completion maximum: the output may really use ~5,900 tokens, so max_tokens 5,000 must be held in full.
    const long = { messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'abcd '.repeat(1800) }] }], max_output_tokens: 5_000 };
    const small = endpoint({ max_completion_tokens: null, context_length: 8_192 });
    expect(promptTokenBound(long)).toBeGreaterThan(8_192);
    expect(outputTokenBound(long, small)).toBe(5_000);
    expect(maxCost(long, small)).toBeGreaterThanOrEqual(5_000n * 3000n);
  });

  it('reserves for the dearest of the candidate endpoints', () => {
    const params = { messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }] }], max_output_tokens: 10 };
    const cheap = endpoint();
    const dear = endpoint({ provider: 'q', pricing: { ...cheap.pricing, completion: 30_000n, internal_reasoning: 0n } });
    expect(reservationFor(params, [cheap, dear])).toBe(maxCost(params, dear));
    expect(reservationFor(params, [])).toBe(0n);
  });
});

const invocation = (overrides: Partial<Invocation> = {}): Invocation => ({
  startedAt: 1000, coldStart: false, initMs: null, memoryMb: 1024, architecture: 'arm64', region: 'us-east-1', responseBytes: 1000, ...overrides,
});

describe('infrastructure cost', () => {
  it('prices Lambda compute as memory × billed duration (rounded up to 1 ms) × the architecture\'s GB-second rate', () => {
    const cost = infrastructureCost(invocation(), { writeUnits: 0, readUnits: 0, kmsRequests: 0 }, 1000 + 99.2);
    expect(cost.billed_duration_ms).toBe(100);
    // 1 GB × 0.1 s × $0.0000133334 per GB-s = $0.00000133334
    expect(attoToDecimal(cost.lambda_compute)).toBe('0.00000133334');
    expect(attoToDecimal(cost.lambda_request)).toBe('0.0000002');
    expect(cost.lambda_streaming).toBe(0n);
    const x86 = infrastructureCost(invocation({ architecture: 'x86_64', memoryMb: 512 }), { writeUnits: 0, readUnits: 0, kmsRequests: 0 }, 1100);
    expect(attoToDecimal(x86.lambda_compute)).toBe('0.000000833335');
  });

  it('bills the INIT phase of a cold start, DynamoDB request units, KMS calls and streamed bytes past the free 6 MB', () => {
    const prices = pricesFor('eu-west-1').prices;
    const free = prices.lambdaStreamingFreeBytes;
    const cost = infrastructureCost(invocation({ region: 'eu-west-1', coldStart: true, initMs: 250, responseBytes: free + 1024 ** 3 }), { writeUnits: 12, readUnits: 0.5, kmsRequests: 2 }, 1010);
    expect(cost.billed_duration_ms).toBe(10 + 250);
    expect(cost.lambda_streaming).toBe(priceToAttoUsd(prices.lambdaStreamingGb));
    expect(cost.dynamodb).toBe(12n * priceToAttoUsd(prices.dynamodbWriteRequestUnit) + priceToAttoUsd(prices.dynamodbReadRequestUnit) / 2n);
    expect(cost.kms).toBe(2n * priceToAttoUsd(prices.kmsRequest));
    expect(cost.total).toBe(cost.lambda_compute + cost.lambda_request + cost.lambda_streaming + cost.dynamodb + cost.kms);
    expect(cost.price_fallback).toBe(false);
    expect(infrastructureCost(invocation({ region: 'local' }), { writeUnits: 0, readUnits: 0, kmsRequests: 0 }, 1001).price_fallback).toBe(true);
  });
});

describe('CloudWatch embedded metrics', () => {
  it('writes one EMF document with cost, tokens and latency metrics by model and provider', () => {
    const record = {
      id: 'gen-1', org_id: 'o', workspace_id: 'w', key_hash: 'k', model: 'm/x', provider: 'p', status: 'completed', is_byok: false, streamed: true,
      usage: { ...emptyUsage(), input_tokens: 10, output_tokens: 20, reasoning_tokens: 3 }, latency_ms: 120, first_token_ms: 40,
      cost: { prompt: 0n, completion: 0n, cache_read: 0n, cache_write: 0n, reasoning: 0n, request: 0n, total: 12_345n },
    } as unknown as GenerationRecord;
    const infra = infrastructureCost(invocation({ coldStart: true, initMs: 100 }), { writeUnits: 10, readUnits: 0, kmsRequests: 0 }, 1050);
    const line = JSON.parse(emfLine(record, infra, 1_700_000_000_000)) as Record<string, any>;
    const directive = line._aws.CloudWatchMetrics[0];
    expect(directive.Namespace).toBe('ModelGateway');
    expect(directive.Dimensions).toEqual([['Model'], ['Provider'], []]);
    for (const metric of directive.Metrics as Array<{ Name: string }>) expect(typeof line[metric.Name]).toBe('number');
    expect(line).toMatchObject({ Model: 'm/x', Provider: 'p', UpstreamCostUSD: 0.000012345, PromptTokens: 10, CompletionTokens: 20, Latency: 120, ColdStart: 1, generation_id: 'gen-1' });
    expect(line.InfrastructureCostUSD).toBeGreaterThan(0);
  });
});

function row(hour: string, model: string, provider: string, counters: Partial<RollupRow['counters']>): RollupRow {
  const zero = {
    requests: 0n, cost: 0n, byok_cost: 0n, prompt_tokens: 0n, completion_tokens: 0n, reasoning_tokens: 0n, cached_tokens: 0n,
    latency_ms: 0n, first_token_ms: 0n, generation_time_ms: 0n, errors: 0n, cancelled: 0n, streamed: 0n, infra_atto: 0n,
  };
  return { hour, workspace_id: 'w1', key_hash: 'k1', model, provider, counters: { ...zero, ...counters } };
}

describe('analytics queries over rollups', () => {
  const rows = [
    row('2026-11-20T10', 'a', 'p1', { requests: 2n, cost: 3_000n, errors: 1n, latency_ms: 100n, completion_tokens: 50n, generation_time_ms: 500n }),
    row('2026-11-20T11', 'a', 'p1', { requests: 2n, cost: 1_000n, latency_ms: 300n }),
    row('2026-11-21T09', 'b', 'p2', { requests: 1n, cost: 7n }),
  ];
  const names = new Map([['p1', 'Provider One']]);

  it('sums by dimension and time bucket exactly, and derives rates from the sums', () => {
    const result = runAnalyticsQuery(rows, { metrics: ['requests', 'cost', 'error_rate', 'avg_latency_ms', 'tokens_per_second'], dimensions: ['model'], granularity: 'day' }, names);
    expect(result.rows).toEqual([
      { time_bucket: '2026-11-20T00:00:00.000Z', model: 'a', requests: 4, cost: 0.000004, error_rate: 0.25, avg_latency_ms: 100, tokens_per_second: 100 },
      { time_bucket: '2026-11-21T00:00:00.000Z', model: 'b', requests: 1, cost: 0.000000007, error_rate: 0, avg_latency_ms: 0, tokens_per_second: null },
    ]);
    expect(result.truncated).toBe(false);
  });

  it('filters, orders, limits and keeps the top groups', () => {
    const filtered = runAnalyticsQuery(rows, { metrics: ['requests'], dimensions: ['provider'], filters: [{ field: 'provider', operator: 'neq', value: 'Provider One' }] }, names);
    expect(filtered.rows).toEqual([{ provider: 'p2', requests: 1 }]);
    const ordered = runAnalyticsQuery(rows, { metrics: ['cost'], dimensions: ['model'], order_by: { field: 'cost', direction: 'asc' } }, names);
    expect(ordered.rows.map((r) => r.model)).toEqual(['b', 'a']);
    const limited = runAnalyticsQuery(rows, { metrics: ['requests'], granularity: 'hour', limit: 2 }, names);
    expect(limited).toMatchObject({ truncated: true, rows: [{ time_bucket: '2026-11-20T10:00:00.000Z' }, { time_bucket: '2026-11-20T11:00:00.000Z' }] });
    const top = runAnalyticsQuery(rows, { metrics: ['requests'], dimensions: ['model'], granularity: 'hour', group_limit: 1 }, names);
    expect(new Set(top.rows.map((r) => r.model))).toEqual(new Set(['a']));
    const weekly = runAnalyticsQuery(rows, { metrics: ['requests'], granularity: 'week' }, names);
    expect(weekly.rows).toEqual([{ time_bucket: '2026-11-16T00:00:00.000Z', requests: 5 }]);
  });

  it.each([
    [{ metrics: ['nope'] }, /unknown metric "nope"/],
    [{ metrics: ['cost'], dimensions: ['color'] }, /unknown dimension "color"/],
    [{ metrics: ['cost', 'requests', 'cost'] }, /Invalid metrics: "cost" is named twice/],
    [{ metrics: ['cost'], dimensions: ['model', 'model'] }, /Invalid dimensions: "model" is named twice/],
    [{ metrics: ['cost'], granularity: 'fortnight' }, /Invalid granularity/],
    [{ metrics: ['cost'], filters: [{ field: 'cost', operator: 'eq', value: 1 }] }, /"cost" is not a dimension/],
    [{ metrics: ['cost'], filters: [{ field: 'model', operator: 'like', value: 'a' }] }, /unknown operator "like"/],
    [{ metrics: ['cost'], filters: [{ field: 'model', operator: 'in', value: 'a' }] }, /takes an array/],
    [{ metrics: ['cost'], order_by: { field: 'color', direction: 'asc' as const } }, /order_by.field/],
  ])('refuses %j with a 400 naming the problem', (query, message) => {
    let error: unknown;
    try {
      runAnalyticsQuery(rows, query, names);
    } catch (err) {
      // The analytics engine throws domain errors; the reply is what the HTTP error map makes of them.
      error = err instanceof DomainError ? httpErrorOf(err) : err;
    }
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).status).toBe(400);
    expect((error as HttpError).message).toMatch(message);
  });
});
