// Hourly rollup rows, one per (hour, workspace, key, model, provider), added to in the settlement
// transaction of every generation. Reports (/activity, /analytics/query) read these rows, never the
// generations themselves, so a month of reports is at most 720 rows per combination in use.
import type { GenerationRecord } from '../store/generation-repository.js';
import type { RollupDelta } from '../store/ledger-repository.js';
import { itemKeys } from '../store/item-keys.js';
import { nanosToStore } from '../shared/money.js';

/** Rows are kept for 400 days (DynamoDB TTL), beyond which reports have nothing to read. */
export const ROLLUP_RETENTION_S = 400 * 86_400;

/** The counters of a rollup row; every one is a sum over the hour's generations. */
export const ROLLUP_COUNTERS = [
  'requests', 'cost', 'byok_cost', 'prompt_tokens', 'completion_tokens', 'reasoning_tokens', 'cached_tokens',
  'latency_ms', 'first_token_ms', 'generation_time_ms', 'errors', 'cancelled', 'streamed',
] as const;
export type RollupCounter = (typeof ROLLUP_COUNTERS)[number];

export const hourOf = (iso: string) => iso.slice(0, 13);

export function rollupDelta(record: GenerationRecord): RollupDelta {
  const hour = hourOf(record.created_at);
  const counters: Record<RollupCounter, number | bigint> = {
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
  };
  return {
    key: itemKeys.rollup(record.org_id, hour, record.workspace_id, record.key_hash, record.model, record.provider),
    dimensions: {
      type: 'rollup',
      hour,
      workspace_id: record.workspace_id,
      key_hash: record.key_hash,
      model: record.model,
      provider: record.provider,
      ttl: Math.floor(Date.parse(`${hour}:00:00Z`) / 1000) + ROLLUP_RETENTION_S,
    },
    counters,
  };
}
