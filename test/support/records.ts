// A generation record with every field filled, for tests that write pages or feed the aggregator directly.
import type { GenerationRecord } from '../../lambdas/billing/generation-record.js';

export function generationRecord(id: string, overrides: Partial<GenerationRecord> = {}): GenerationRecord {
  return {
    id, org_id: 'org1', workspace_id: 'ws1', key_hash: 'k1', model: 'm/a', provider: 'a', upstream_model: 'a', provider_id: null, api: 'chat',
    streamed: false, status: 'completed', finish_reason: 'stop', native_finish_reason: null,
    usage: { input_tokens: 10, output_tokens: 5, reasoning_tokens: 0, cached_input_tokens: 0, cache_write_tokens: 0 } as GenerationRecord['usage'],
    cost: { prompt: 1n, completion: 2n, cache_read: 0n, cache_write: 0n, reasoning: 0n, request: 0n, total: 30n }, is_byok: false,
    service_tier: null, attempts: 1, created_at: '2026-11-24T09:59:59.000Z', latency_ms: 10, first_token_ms: 5, generation_time_ms: 5,
    session_id: null, user_hash: null, error: null, reserved: 100n, usage_estimated: false, provider_responses: [],
    ...overrides,
  };
}
