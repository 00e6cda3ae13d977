// A shard's items run in lanes (itemConcurrency at once): every runnable item of the range runs once, however
// the lanes' turns fall, and a lane never takes an item past the end of the range.
import { describe, expect, it } from '@jest/globals';
import { BatchWorker, ItemBusyError, type BatchItem, type BatchWorkerPorts } from '../../lambdas/batches/worker.js';
import { NO_USAGE, type BatchRecord } from '../../lambdas/batches/batch-repository.js';
import { Logger } from '../../lambdas/platform/logger.js';

const BATCH: BatchRecord = {
  id: 'batch_shard', org_id: 'org', workspace_id: 'ws', key_hash: 'hash', status: 'in_progress', endpoint: '/v1/chat/completions',
  model: 'simulator/echo', completion_window: '24h', created_at: 1_800_000_000, expires_at: 1_800_086_400, finalized_at: null,
  cancelling_at: null, error: null, request_counts: { total: 0, completed: 0, failed: 0 }, provider_only: null, metadata: null,
  input: { kind: 's3', bucket: 'batches', key: 'input', bytes: 0 }, queued: true, last_line: null, lease: null, provider_batch: null,
  output: null, usage: { ...NO_USAGE }, version: 1,
};

function inputOf(items: number): Buffer {
  return Buffer.from(Array.from({ length: items }, (_, i) => JSON.stringify({ custom_id: `c${i + 1}`, body: { messages: [{ role: 'user', content: `item ${i + 1}` }] } })).join('\n') + '\n');
}

function workerOver(input: Buffer, itemConcurrency: number, runItem: BatchWorkerPorts['runItem'], done: number[] = [], get: BatchWorkerPorts['batches']['get'] = async () => BATCH): { worker: BatchWorker; logged: string[] } {
  const logged: string[] = [];
  const unused = async (): Promise<never> => { throw new Error('not used by a shard'); };
  const worker = new BatchWorker({
    batches: { get, move: unused, plan: unused, claimLease: unused, leaseReturned: unused },
    results: { page: unused, linesDone: async () => new Set(done) },
    commits: { commit: unused },
    objects: { read: unused, readRange: async (_key: string, start: number, end: number) => input.subarray(start, end), writeOutput: unused },
    queue: { send: unused },
    runItem,
    clock: () => new Date(),
    log: new Logger((line) => logged.push(line)),
    checkEverySeconds: 1,
    itemConcurrency,
    settleSeconds: 1,
  });
  return { worker, logged };
}

const shardOf = (input: Buffer, items: number) => ({ kind: 'shard' as const, batch_id: BATCH.id, shard: { firstLine: 1, start: 0, end: input.length, items } });

describe('a shard of a batch', () => {
  it('runs each item once when the lanes finish their items in the same turn (an item run that answers at once)', async () => {
    for (const [items, lanes] of [[10, 4], [3, 2], [7, 8], [16, 16], [5, 1]] as const) {
      const input = inputOf(items);
      const ran: number[] = [];
      const { worker } = workerOver(input, lanes, async (_batch, item: BatchItem) => { ran.push(item.line); });
      await worker.handle(shardOf(input, items));
      expect(ran.sort((a, b) => a - b)).toStrictEqual(Array.from({ length: items }, (_, i) => i + 1));
    }
  });

  it('runs each item once when item runs end in an arbitrary order', async () => {
    const input = inputOf(40);
    const ran: number[] = [];
    let turn = 0;
    const { worker } = workerOver(input, 6, async (_batch, item) => {
      // Some end at once, some a few turns later, some after a timer.
      turn += 1;
      if (turn % 3 === 0) await new Promise((resolve) => setTimeout(resolve, turn % 5));
      else for (let i = 0; i < turn % 4; i += 1) await Promise.resolve();
      ran.push(item.line);
    });
    await worker.handle(shardOf(input, 40));
    expect(ran.sort((a, b) => a - b)).toStrictEqual(Array.from({ length: 40 }, (_, i) => i + 1));
  });

  it('skips the items done already and those another run holds; a failing item fails the step once the others have ended', async () => {
    const input = inputOf(8);
    const ran: number[] = [];
    const { worker } = workerOver(input, 3, async (_batch, item) => {
      if (item.line === 4) throw new ItemBusyError('gen-4');
      ran.push(item.line);
    }, [2, 5]);
    await worker.handle(shardOf(input, 8));
    expect(ran.sort((a, b) => a - b)).toStrictEqual([1, 3, 6, 7, 8]);

    let running = 0;
    let ended = 0;
    const failing = workerOver(input, 3, async (_batch, item) => {
      running += 1;
      await new Promise((resolve) => setTimeout(resolve, 5));
      running -= 1;
      if (item.line === 1) throw new Error('the store failed');
      ended += 1;
    });
    await expect(failing.worker.handle(shardOf(input, 8))).rejects.toThrow('the store failed');
    // Nothing of the step outlives it: the items running beside the failed one had ended.
    expect(running).toBe(0);
    expect(ended).toBeGreaterThan(0);
    expect(ended).toBeLessThan(8);
  });

  it('starts no item once a cancel has been answered: each start waits for a read of the state begun after it was due', async () => {
    const input = inputOf(40);
    const started: number[] = [];
    let cancelled = false;
    let reads = 0;
    // A read sees the state as it was when it began, and answers a little later.
    const get = async () => {
      reads += 1;
      const status = cancelled ? 'cancelling' as const : 'in_progress' as const;
      await new Promise((resolve) => setTimeout(resolve, 2));
      return { ...BATCH, status };
    };
    let startedBeforeCancel = 0;
    const { worker } = workerOver(input, 4, async (_batch, item) => {
      started.push(item.line);
      if (started.length === 5) {
        // The cancel's write lands (and is answered) while this item runs.
        cancelled = true;
        startedBeforeCancel = started.length;
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }, [], get);
    await worker.handle(shardOf(input, 40));
    // Only lanes whose read was already under way when the cancel landed may start one more item each.
    expect(started.length).toBeLessThanOrEqual(startedBeforeCancel + 3);
    expect(reads).toBeLessThanOrEqual(started.length + 4);
  });
});
