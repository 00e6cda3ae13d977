import { describe, expect, it } from '@jest/globals';
import { batchView } from '../../lambdas/batches/view.js';
import { batchObject, createBatchBody } from '../../lambdas/batches/schemas.js';
import type { BatchRecord } from '../../lambdas/batches/batch-repository.js';

const record: BatchRecord = {
  id: 'batch_1', org_id: 'o', workspace_id: 'w', key_hash: 'k', status: 'completed', endpoint: '/v1/chat/completions', model: 'simulator/echo',
  completion_window: '24h', created_at: 1_795_000_000, expires_at: 1_795_086_400, finalized_at: 1_795_000_050, cancelling_at: null, error: null,
  request_counts: { total: 2, completed: 1, failed: 1 }, provider_only: null, metadata: null, input: { kind: 'inline', bytes: 10 }, version: 4,
  queued: true, last_line: 3, lease: null, provider_batch: null, output: null, usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, cost_nanos: 100_000 },
};

describe('batch view', () => {
  it('shows a stored batch as SPEC\'s Batch object, without its store-only fields', () => {
    const results = [
      { custom_id: 'a', id: 'gen-1', error: null, response: { body: { id: 'gen-1', object: 'chat.completion', choices: [] }, request_id: 'req-1', status_code: 200 } },
      { custom_id: 'b', id: null, error: { message: 'Item 2: Invalid body.messages', param: 'body.messages', type: 'invalid_request_error', error_type: 'invalid_body' }, response: null },
    ];
    const view = batchView(record, results, 1);
    expect(batchObject.parse(view)).toEqual(view);
    expect(view).toMatchObject({ object: 'batch', status: 'completed', created_at: 1_795_000_000, finalized_at: 1_795_000_050, request_counts: { total: 2, completed: 1, failed: 1 }, results_next: 1 });
    expect(view.usage).toEqual({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, cost: 0.0001 });
    for (const hidden of ['org_id', 'key_hash', 'input', 'version', 'queued', 'last_line', 'cancelling_at', 'provider_batch', 'lease']) expect(Object.keys(view)).not.toContain(hidden);
    // A batch nothing of which has been counted yet has no usage.
    expect(batchView({ ...record, request_counts: { total: 2, completed: 0, failed: 0 } }).usage).toBeNull();
  });

  it('takes a create body per SPEC and refuses other windows and empty batches', () => {
    expect(createBatchBody.parse({ requests: [{}], endpoint: '/v1/responses' })).toMatchObject({ completion_window: '24h' });
    expect(createBatchBody.safeParse({ requests: [], endpoint: '/v1/responses' }).success).toBe(false);
    expect(createBatchBody.safeParse({ requests: [{}], endpoint: '/v1/responses', completion_window: '48h' }).success).toBe(false);
    expect(createBatchBody.safeParse({ requests: [{}], endpoint: '/v1/images' }).success).toBe(false);
    expect(createBatchBody.safeParse({ requests: [{}], endpoint: '/v1/responses', provider: { only: ['openai'], order: ['x'] } }).success).toBe(false);
  });
});

describe('a failed item\'s error', () => {
  it('names its type by status as the SDKs name their errors, beside the error_type', async () => {
    const { failedResult } = await import('../../lambdas/app/batch-items.js');
    const { HttpError } = await import('../../lambdas/platform/http/errors.js');
    const typeOf = (status: number) => failedResult('c', 'gen-1', new HttpError(status, `failed with ${status}`)).error;
    expect(typeOf(429)).toMatchObject({ type: 'rate_limit_error', error_type: 'rate_limit_exceeded' });
    expect(typeOf(408)).toMatchObject({ type: 'timeout_error', error_type: 'timeout' });
    expect(typeOf(524)).toMatchObject({ type: 'timeout_error', error_type: 'timeout' });
    expect(typeOf(400)).toMatchObject({ type: 'invalid_request_error', error_type: 'invalid_request' });
    expect(typeOf(402)).toMatchObject({ type: 'billing_error', error_type: 'insufficient_credits' });
    expect(typeOf(404)).toMatchObject({ type: 'not_found_error', error_type: 'not_found' });
    expect(typeOf(504)).toMatchObject({ type: 'timeout_error', error_type: 'timeout' });
    expect(typeOf(502)).toMatchObject({ type: 'api_error', error_type: 'server' });
  });
});
