// Batches in DynamoDB Local: created once, listed newest first in pages, moved through the lifecycle with
// conditional writes (racing steps: exactly one wins, the others see its result).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createDocumentClient } from '../../lambdas/platform/dynamo/client.js';
import { BatchRepository, COMPLETION_WINDOW_SECONDS, NO_USAGE, type BatchRecord } from '../../lambdas/batches/batch-repository.js';
import { BatchStateError } from '../../lambdas/batches/lifecycle.js';
import { ConflictError } from '../../lambdas/platform/errors.js';
import { createTestStore, type TestStore } from '../support/store.js';

let store: TestStore;
let batches: BatchRepository;

beforeAll(async () => {
  store = await createTestStore();
  batches = new BatchRepository(createDocumentClient({ endpoint: store.endpoint }), store.tableName);
}, 60_000);

afterAll(async () => {
  await store?.drop();
});

let n = 0;
const batch = (overrides: Partial<BatchRecord> = {}): BatchRecord => {
  n += 1;
  const created = 1_795_000_000 + n;
  return {
    id: `batch_test${String(n).padStart(4, '0')}`, org_id: 'org-b', workspace_id: 'ws-b', key_hash: 'k'.repeat(64), status: 'validating',
    endpoint: '/v1/chat/completions', model: 'simulator/echo', completion_window: '24h', created_at: created, expires_at: created + COMPLETION_WINDOW_SECONDS,
    finalized_at: null, cancelling_at: null, error: null, request_counts: { total: 3, completed: 0, failed: 0 }, provider_only: null, metadata: { team: 'a' },
    input: { kind: 'inline', bytes: 120 }, queued: false, last_line: null, lease: null, provider_batch: null, output: null, usage: { ...NO_USAGE }, version: 1, ...overrides,
  };
};

describe('BatchRepository', () => {
  it('stores a batch once and reads it back as stored', async () => {
    const created = batch({ provider_only: ['simulator'], input: { kind: 's3', bucket: 'b', key: 'inputs/x.jsonl', bytes: 10 } });
    await batches.create(created);
    expect(await batches.get(created.id)).toEqual(created);
    await expect(batches.create(created)).rejects.toBeInstanceOf(ConflictError);
    expect(await batches.get('batch_nobody')).toBeUndefined();
  });

  it('lists a workspace\'s batches newest first, in pages, and no other workspace\'s', async () => {
    const mine = [batch({ workspace_id: 'ws-list' }), batch({ workspace_id: 'ws-list' }), batch({ workspace_id: 'ws-list' }), batch({ workspace_id: 'ws-list' }), batch({ workspace_id: 'ws-list' })];
    await batches.create(batch({ workspace_id: 'ws-other' }));
    for (const item of mine) await batches.create(item);
    const first = await batches.list('org-b', 'ws-list', { limit: 2 });
    expect(first.batches.map((b) => b.id)).toEqual([mine[4]!.id, mine[3]!.id]);
    expect(first.more).toBe(true);
    const last = first.batches[1]!;
    const second = await batches.list('org-b', 'ws-list', { limit: 2, before: { created_at: last.created_at, id: last.id } });
    expect(second.batches.map((b) => b.id)).toEqual([mine[2]!.id, mine[1]!.id]);
    const rest = await batches.list('org-b', 'ws-list', { limit: 2, before: { created_at: mine[1]!.created_at, id: mine[1]!.id } });
    expect(rest).toEqual({ batches: [mine[0]], more: false });
  });

  it('moves a batch through its lifecycle, stamping finalized_at only at the end', async () => {
    const created = batch();
    await batches.create(created);
    expect(await batches.move(created.id, 'validated', 1_795_000_100)).toMatchObject({ status: 'in_progress', finalized_at: null, version: 2 });
    expect(await batches.move(created.id, 'items_done', 1_795_000_200)).toMatchObject({ status: 'finalizing', finalized_at: null });
    const done = await batches.move(created.id, 'finalized', 1_795_000_300);
    expect(done).toMatchObject({ status: 'completed', finalized_at: 1_795_000_300, version: 4 });
    expect(await batches.get(created.id)).toEqual(done);
    await expect(batches.move(created.id, 'cancel', 1_795_000_400)).rejects.toBeInstanceOf(BatchStateError);
    expect(await batches.move('batch_nobody', 'cancel', 1)).toBeUndefined();
  });

  it('stamps cancelling_at when a cancel moves a batch, and keeps it to the end', async () => {
    const created = batch({ status: 'in_progress' });
    await batches.create(created);
    expect(await batches.move(created.id, 'cancel', 1_795_000_500)).toMatchObject({ status: 'cancelling', cancelling_at: 1_795_000_500, finalized_at: null });
    // A second cancel changes nothing.
    expect(await batches.move(created.id, 'cancel', 1_795_000_600)).toMatchObject({ cancelling_at: 1_795_000_500 });
    const ended = await batches.move(created.id, 'cancelled', 1_795_000_700, { set: { output: 'batches/x/results.jsonl' } });
    expect(ended).toMatchObject({ status: 'cancelled', cancelling_at: 1_795_000_500, finalized_at: 1_795_000_700, output: 'batches/x/results.jsonl' });
    expect(await batches.get(created.id)).toEqual(ended);
  });

  it('records why a batch failed', async () => {
    const created = batch();
    await batches.create(created);
    expect(await batches.move(created.id, 'validation_failed', 1_795_000_500, { error: 'No item of the input can run' })).toMatchObject({ status: 'failed', error: { message: 'No item of the input can run' } });
  });

  it('lets exactly one of racing steps move a batch; the others are answered from its result', async () => {
    const created = batch({ status: 'in_progress' });
    await batches.create(created);
    // 10 cancels and 10 "every item done" at once: whichever is first decides.
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => batches.move(created.id, i % 2 ? 'cancel' : 'items_done', 1_795_000_600)));
    const stored = (await batches.get(created.id))!;
    expect(['cancelling', 'finalizing']).toContain(stored.status);
    // One write per change of state: the version moved once.
    expect(stored.version).toBe(2);
    for (const outcome of outcomes) {
      if (outcome.status === 'fulfilled') expect(outcome.value!.status).toBe(stored.status);
      else expect(outcome.reason).toBeInstanceOf(BatchStateError);
    }
    // A second cancel of a cancelling batch is answered, not refused.
    if (stored.status === 'cancelling') expect(outcomes.filter((o, i) => i % 2 === 1 && o.status === 'rejected')).toEqual([]);
  });

  it('answers the same move made twice at once (a redelivered step) with its result, not a 409', async () => {
    const created = batch({ status: 'in_progress' });
    await batches.create(created);
    const moved = await Promise.all(Array.from({ length: 10 }, () => batches.move(created.id, 'items_done', 1_795_000_700)));
    expect(moved.map((b) => b!.status)).toEqual(Array(10).fill('finalizing'));
    expect((await batches.get(created.id))!.version).toBe(2);
  });

  it('moves an item stored without a version (written by hand) once', async () => {
    const created = batch();
    await batches.create(created);
    const { UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
    await createDocumentClient({ endpoint: store.endpoint }).send(new UpdateCommand({ TableName: store.tableName, Key: { pk: `BATCH#${created.id}`, sk: 'BATCH' }, UpdateExpression: 'REMOVE version' }));
    expect((await batches.get(created.id))!.version).toBe(0);
    expect(await batches.move(created.id, 'validated', 1_795_000_800)).toMatchObject({ status: 'in_progress', version: 1 });
  });
});
