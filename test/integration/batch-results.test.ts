// A batch's results in DynamoDB Local: each item's end committed and counted once however many copies of it
// run (SQS redelivery, a retried worker, a restarted execution), counts exact under concurrent workers, pages
// in input order.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createDocumentClient } from '../../lambdas/platform/dynamo/client.js';
import { BatchRepository, COMPLETION_WINDOW_SECONDS, NO_USAGE } from '../../lambdas/batches/batch-repository.js';
import { BatchResultRepository, type StoredResult } from '../../lambdas/batches/result-repository.js';
import { ItemCommitter } from '../../lambdas/batches/item-commits.js';
import { Logger } from '../../lambdas/platform/logger.js';
import { createTestStore, type TestStore } from '../support/store.js';
import { TransactionCanceledException, TransactionConflictException } from '@aws-sdk/client-dynamodb';

let store: TestStore;
let batches: BatchRepository;
let results: BatchResultRepository;
let commits: ItemCommitter;
const log = new Logger(() => undefined);

beforeAll(async () => {
  store = await createTestStore();
  const db = createDocumentClient({ endpoint: store.endpoint });
  batches = new BatchRepository(db, store.tableName);
  results = new BatchResultRepository(db, store.tableName);
  commits = new ItemCommitter(db, store.tableName, log);
}, 60_000);

/** An item's end, through the committer (no record: these items carry no usage). */
const record = (committer: ItemCommitter, batchId: string, stored: StoredResult) => committer.commit({ batchId, line: stored.line, result: stored.result, usage: { ...NO_USAGE } });

afterAll(async () => {
  await store?.drop();
});

async function newBatch(id: string, total: number): Promise<void> {
  await batches.create({
    id, org_id: 'org-r', workspace_id: 'ws-r', key_hash: 'k', status: 'in_progress', endpoint: '/v1/chat/completions', model: null,
    completion_window: '24h', created_at: 1_795_000_000, expires_at: 1_795_000_000 + COMPLETION_WINDOW_SECONDS, finalized_at: null, cancelling_at: null, error: null,
    request_counts: { total, completed: 0, failed: 0 }, provider_only: null, metadata: null, input: { kind: 'inline', bytes: 1 }, queued: true, last_line: null, lease: null, provider_batch: null, output: null, usage: { ...NO_USAGE }, version: 1,
  });
}

const done = (line: number, status = 200): StoredResult => ({
  line,
  result: status === 200
    ? { custom_id: `c${line}`, id: `gen-${line}`, error: null, response: { body: { id: `gen-${line}`, object: 'chat.completion', choices: [] }, request_id: `req-${line}`, status_code: 200 } }
    : { custom_id: `c${line}`, id: `gen-${line}`, error: { message: 'Upstream failed', param: null, type: 'server_error', error_type: 'provider_unavailable' }, response: { body: { error: { code: status } }, request_id: `req-${line}`, status_code: status } },
});

describe('batch results', () => {
  it('records an item once: a second copy learns it was done and changes nothing', async () => {
    await newBatch('batch_r1', 2);
    expect(await record(commits, 'batch_r1', done(1))).toBe('committed');
    expect(await record(commits, 'batch_r1', { ...done(1), result: { ...done(1).result, id: 'gen-other' } })).toBe('already');
    expect((await batches.get('batch_r1'))!.request_counts).toEqual({ total: 2, completed: 1, failed: 0 });
    expect((await results.page('batch_r1', 0, 10)).results).toEqual([done(1)]);
  });

  it('counts exactly under concurrent workers with redelivered copies', async () => {
    await newBatch('batch_r2', 40);
    // 40 items, each delivered three times, all at once; every 4th item failed upstream.
    const copies = Array.from({ length: 40 }, (_, i) => i + 1).flatMap((line) => [line, line, line]);
    const outcomes = await Promise.all(copies.map((line) => record(commits, 'batch_r2', done(line, line % 4 === 0 ? 502 : 200))));
    expect(outcomes.filter((o) => o === 'committed')).toHaveLength(40);
    expect(outcomes.filter((o) => o === 'already')).toHaveLength(80);
    expect((await batches.get('batch_r2'))!.request_counts).toEqual({ total: 40, completed: 30, failed: 10 });
  });

  it('pages results in input order', async () => {
    await newBatch('batch_r3', 25);
    await Promise.all([25, 3, 14, 1, 2, 9, 10, 11, 20].map((line) => record(commits, 'batch_r3', done(line))));
    const first = await results.page('batch_r3', 0, 4);
    expect(first.results.map((r) => r.line)).toEqual([1, 2, 3, 9]);
    expect(first.more).toBe(true);
    const second = await results.page('batch_r3', 9, 4);
    expect(second.results.map((r) => r.line)).toEqual([10, 11, 14, 20]);
    expect(await results.page('batch_r3', 20, 4)).toEqual({ results: [done(25)], more: false });
  });

  it('pages the same in windows once the last line is known, however sparse the results', async () => {
    await newBatch('batch_r5', 400);
    const lines = [1, 2, 3, 9, 10, 11, 14, 20, 25, 26, 150, 151, 399, 400];
    await Promise.all(lines.map((line) => record(commits, 'batch_r5', done(line))));
    const walk = async (lastLine: number | null, limit: number) => {
      const seen: number[][] = [];
      let after = 0;
      for (;;) {
        const page = await results.page('batch_r5', after, limit, lastLine);
        seen.push(page.results.map((r) => r.line));
        if (!page.more) return seen;
        after = page.results[page.results.length - 1]!.line;
      }
    };
    for (const limit of [1, 3, 4, 100]) {
      const windowed = await walk(400, limit);
      expect(windowed).toEqual(await walk(null, limit));
      expect(windowed.flat()).toEqual(lines);
    }
    // Past the last line there is nothing, and the walk says so.
    expect(await results.page('batch_r5', 400, 10, 400)).toEqual({ results: [], more: false });
    expect((await results.page('batch_r5', 26, 2, 400)).results.map((r) => r.line)).toEqual([150, 151]);
  });

  it('tries again when AWS refuses the transaction for a concurrent one (DynamoDB Local never does)', async () => {
    await newBatch('batch_r4', 3);
    const db = createDocumentClient({ endpoint: store.endpoint });
    let refused = 0;
    db.middlewareStack.add((next, context) => async (args) => {
      if (context.commandName === 'TransactWriteItemsCommand' && refused < 4) {
        refused += 1;
        // Nothing is written, as on AWS: half as a cancellation naming a conflict, half as the conflict exception.
        if (refused % 2) throw new TransactionCanceledException({ message: 'Transaction cancelled', $metadata: {}, CancellationReasons: [{ Code: 'None' }, { Code: 'TransactionConflict' }] });
        throw new TransactionConflictException({ message: 'Transaction is ongoing for the item', $metadata: {} });
      }
      return next(args);
    }, { step: 'initialize', name: 'injectConflicts' });
    const conflicted = new ItemCommitter(db, store.tableName, log);
    expect(await record(conflicted, 'batch_r4', done(1))).toBe('committed');
    expect(await record(conflicted, 'batch_r4', done(2, 502))).toBe('committed');
    expect(refused).toBe(4);
    expect((await batches.get('batch_r4'))!.request_counts).toEqual({ total: 3, completed: 1, failed: 1 });
  });

  it('records nothing for a batch that is gone', async () => {
    expect(await record(commits, 'batch_gone', done(1))).toBe('already');
    expect((await results.page('batch_gone', 0, 10)).results).toEqual([]);
  });
});
