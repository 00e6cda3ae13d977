// A batch whose `npm start` is killed outright (SIGKILL) mid-run, with items in flight: the restart (same data
// directory) queues its steps again, each shard is delivered again and skips the items with a result, and
// an item whose record was written but whose result was not runs again without being charged again. In the
// end every item has exactly one result and one generation record, and every meter holds exactly the sum
// of those records.
import { afterEach, expect, it } from '@jest/globals';
import { generateKeyText } from '../../lambdas/keys/key-format.js';
import { itemKeys } from '../../lambdas/platform/dynamo/item-keys.js';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';
import { killAll, processTree, survivors, type ProcessId } from '../support/process-tree.js';
import { api, createRegularKey, readStoppedStore, until } from '../support/gateway-money.js';
import { batchGenerationId } from '../../lambdas/app/batch-items.js';

const ADMIN_KEY = generateKeyText();
const CREDITS = 25_000_000_000n;
const ITEMS = 240;

let gateway: GatewayProcess | undefined;
let started: ProcessId[] = [];

afterEach(() => {
  killAll(started);
  started = [];
  gateway = undefined;
});

it('a batch killed mid-shard resumes after the restart: every item one result, one record, charged once', async () => {
  // Each upstream reply takes 40 ms, two items at once: the batch runs for seconds, long enough to kill it mid-way.
  const env = { GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_INITIAL_CREDITS: '25', SIMULATOR_FIRST_BYTE_DELAY_MS: '40', GATEWAY_BATCH_ITEM_CONCURRENCY: '2' };
  gateway = await startGatewayProcess(env);
  started = processTree(gateway.child.pid!);
  const { dataDir } = gateway;
  const user = await createRegularKey(gateway.baseUrl, ADMIN_KEY, 'batch crash');
  const requests = Array.from({ length: ITEMS }, (_, i) => ({ custom_id: `item-${i}`, body: { messages: [{ role: 'user', content: `Item number ${i}.` }] } }));
  const submitted = await api(gateway.baseUrl, user.key, 'POST', '/batches', { endpoint: '/v1/chat/completions', model: 'simulator/echo', requests });
  const id = submitted.id as string;
  let done = 0;
  const midway = await until(async () => {
    const batch = await api(gateway!.baseUrl, user.key, 'GET', `/batches/${id}?results_limit=1`);
    done = batch.request_counts.completed + batch.request_counts.failed;
    return done >= 20;
  }, Date.now() + 30_000);
  expect(midway).toBe(true);
  await gateway.stop('SIGKILL');
  expect((await survivors(started, 15_000)).map((proc) => proc.command)).toEqual([]);

  gateway = await startGatewayProcess({ ...env, GATEWAY_DATA_DIR: dataDir });
  started = processTree(gateway.child.pid!);
  // The batch runner (a process of its own) says so once it has started the batches it found unfinished.
  expect(await until(async () => /resumed 1 batch\(es\)/.test(gateway!.output()), Date.now() + 30_000)).toBe(true);
  let batch: Record<string, any> = {};
  const ended = await until(async () => {
    batch = await api(gateway!.baseUrl, user.key, 'GET', `/batches/${id}?results_limit=1000`);
    return batch.status === 'completed';
  }, Date.now() + 60_000);
  expect(ended).toBe(true);
  expect(await gateway.stop('SIGTERM')).toBe(0);
  console.log(`killed with ${done} of ${ITEMS} items done`);
  expect(done).toBeLessThan(ITEMS);

  expect(batch.request_counts).toEqual({ total: ITEMS, completed: ITEMS, failed: 0 });
  expect(batch.results.map((result: { custom_id: string }) => result.custom_id)).toEqual(requests.map((request) => request.custom_id));

  const table = await readStoppedStore(dataDir);
  // One result item per input line, no more.
  const results = table.items.filter((item) => item.pk === itemKeys.batch(id).pk && String(item.sk).startsWith('R#'));
  expect(results).toHaveLength(ITEMS);
  // One generation record per item, under the item's own id, however often the item ran.
  const records = table.pages.flatMap((page) => page.entries.map((entry) => entry.record)).filter((record) => record.org_id === user.orgId);
  const expected = Array.from({ length: ITEMS }, (_, i) => batchGenerationId({ id, created_at: submitted.created_at as number }, i + 1));
  expect(records.map((record) => record.id).sort()).toEqual([...expected].sort());
  expect(table.unapplied).toEqual([]);
  // Charged exactly once: every meter holds the sum of the records, nothing is held, and the batch's usage agrees.
  const charged = records.reduce((total, record) => total + record.cost.total, 0n);
  expect(charged).toBeGreaterThan(0n);
  expect(table.organization(user.orgId)).toEqual({ credits: CREDITS, usage: charged, balance: CREDITS - charged, held: 0n });
  expect(table.key(user.hash)).toEqual({ usage: charged, held: 0n });
  expect(table.workspace(user.orgId, user.workspaceId)).toEqual({ usage: charged, held: 0n });
  expect(table.holds(user.orgId)).toEqual([]);
  expect(BigInt(Math.round(batch.usage.cost * 1e9))).toBe(charged);
}, 180_000);
