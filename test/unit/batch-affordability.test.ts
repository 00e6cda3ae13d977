// The batch's checks against the key's money: at creation (batchAffordability: a read, a 402 naming the limit)
// and when validating (the lease's cover: a refusal fails the batch, contention is tried again), over a
// catalog and a ledger stood in for.
import { describe, expect, it, jest } from '@jest/globals';
import { batchAffordability, batchLeases } from '../../lambdas/app/batch-lease.js';
import { KeyLimitExceeded, ReservationContended } from '../../lambdas/billing/errors.js';
import { InsufficientFundsError } from '../../lambdas/platform/errors.js';
import type { EngineDeps } from '../../lambdas/inference/engine.js';
import type { ApiKey } from '../../lambdas/keys/index.js';
import type { BatchRecord } from '../../lambdas/batches/index.js';

const price = (nanos: bigint) => ({ prompt: nanos, completion: nanos, request: 0n, input_cache_read: 0n, input_cache_write: 0n, internal_reasoning: 0n });
const models = new Map([
  ['free/model', { id: 'free/model', endpoints: [{ pricing: price(0n), batch_api: 'openai' }] }],
  ['paid/model', { id: 'paid/model', endpoints: [{ pricing: price(1_000n), batch_api: 'openai' }] }],
]);
const key = { org_id: 'org', workspace_id: 'ws', hash: 'h' } as ApiKey;
const limitLeft = new KeyLimitExceeded('refused', { reason: 'key_limit', remaining: 0n, required: 1n, state: "The key's total limit of $0 has $0 left", remedy: "raise the key's limit" }, {
  metadata: { reason: 'key_limit', required: '0.000000001', remaining: '0' },
});

function engineWith(ledger: Record<string, unknown>): EngineDeps {
  return { catalog: { byId: models }, ledger: { workspaceOf: async () => ({ id: 'ws' }), ...ledger } } as unknown as EngineDeps;
}

describe('a batch checked at creation', () => {
  it('lets a batch of a model free on every endpoint through without reading the limits', async () => {
    const refusalOf = jest.fn(async () => limitLeft);
    await expect(batchAffordability(engineWith({ refusalOf }))(key, { endpoint: '/v1/chat/completions', model: 'free/model', provider_only: null }, undefined)).resolves.toBeUndefined();
    expect(refusalOf).not.toHaveBeenCalled();
  });

  it('refuses an uploaded input of a priced model only when nothing is left, without the 1 nano it asked as a figure', async () => {
    const refusalOf = jest.fn(async (_key: unknown, _workspace: unknown, amount: bigint) => (amount === 1n ? limitLeft : undefined));
    const check = batchAffordability(engineWith({ refusalOf }));
    const refused = await check(key, { endpoint: '/v1/chat/completions', model: 'paid/model', provider_only: null }, undefined).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(InsufficientFundsError);
    expect((refused as InsufficientFundsError).message).toBe("This batch cannot run: nothing is left to pay for it. The key's total limit of $0 has $0 left. To run it, raise the key's limit.");
    expect((refused as InsufficientFundsError).metadata).toEqual({ reason: 'key_limit', remaining: '0' });
    expect(refusalOf).toHaveBeenCalledWith(key, { id: 'ws' }, 1n);
  });
});

describe('a batch\'s lease when validating', () => {
  const batch = { id: 'batch_x', key_hash: 'h', expires_at: 1_000 } as BatchRecord;
  const leases = (leaseOrRefusal: () => Promise<unknown>) => batchLeases({ engine: engineWith({ leaseOrRefusal }), keys: { get: async () => key } });

  it('fails the batch naming the limit that refused its lease', async () => {
    await expect(leases(async () => limitLeft).cover(batch, 5n)).resolves.toEqual({
      refused: "This batch can cost up to $0.000000001 (every item at its most: set max_tokens to lower it). The key's total limit of $0 has $0 left. To run it, raise the key's limit.",
    });
  });

  it('throws contention that outlasted the retries, so that the step is tried again instead of failing the batch', async () => {
    await expect(leases(async () => new ReservationContended()).cover(batch, 5n)).rejects.toBeInstanceOf(ReservationContended);
  });
});
