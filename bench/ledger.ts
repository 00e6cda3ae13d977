// What the money path adds to a request, measured on its own against DynamoDB Local (on disk, as under
// npm start): the latency of the reservation (before the provider call; it adds to every reply) and of the
// record's page write (after the reply; it adds to the invocation's duration), the DynamoDB write capacity
// each consumes (ReturnConsumedCapacity), and the meter aggregator applying the pages in stream-sized
// batches. Then the same cycle with 10 requests in flight on one key, where reservations contend for the
// same organization, key and workspace items.
//
//   npm run bench:ledger [-- --quick] [--in-memory]
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { startDynamoDbLocal } from '../bin/local/dynamodb-local.js';
import { ensureTable } from '../lambdas/platform/dynamo/create-table.js';
import { createDocumentClient } from '../lambdas/platform/dynamo/client.js';
import { OrganizationRepository } from '../lambdas/organizations/organization-repository.js';
import { WorkspaceRepository } from '../lambdas/organizations/workspace-repository.js';
import { ApiKeyRepository } from '../lambdas/keys/api-key-repository.js';
import type { GenerationRecord } from '../lambdas/billing/generation-record.js';
import { GenerationIds, PageWriter, type Page } from '../lambdas/billing/pages.js';
import { PageRepository, pageToItem } from '../lambdas/billing/page-repository.js';
import { createOrganization } from '../lambdas/organizations/create-organization.js';
import { newApiKey } from '../lambdas/keys/new-key.js';
import { createLedger } from '../lambdas/app/engine-deps.js';
import { createAggregator } from '../lambdas/app/aggregator-deps.js';
import { Logger } from '../lambdas/platform/logger.js';
import { rollupDelta } from '../lambdas/billing/rollups.js';
import { computeCost } from '../lambdas/billing/cost.js';
import { emptyUsage } from '../lambdas/providers/types.js';
import { distribution } from './stats.js';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { itemKeys } from '../lambdas/platform/dynamo/item-keys.js';
import { itemSize } from '../lambdas/platform/dynamo/item-size.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const QUICK = process.argv.includes('--quick');
const IN_MEMORY = process.argv.includes('--in-memory');
const SEQUENTIAL = QUICK ? 200 : 1000;
const CONCURRENT_MS = QUICK ? 3000 : 10_000;
const IN_FLIGHT = 10;

const dir = mkdtempSync(join(tmpdir(), 'gateway-ledger-bench-'));
const ddb = await startDynamoDbLocal(IN_MEMORY ? {} : { dataDir: join(dir, 'dynamodb') });
const tableName = 'ledger-bench';
const admin = new DynamoDBClient({ endpoint: ddb.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
await ensureTable(admin, tableName);
const db = createDocumentClient({ endpoint: ddb.endpoint });
const organizations = new OrganizationRepository(db, tableName);
const workspaces = new WorkspaceRepository(db, tableName);
const keys = new ApiKeyRepository(db, tableName);
const { org, workspace } = await createOrganization(organizations, { name: 'Bench', kind: 'organization', credits: 1_000_000n * 1_000_000_000n, now: new Date() });
const { key } = newApiKey({ orgId: org.id, orgKind: 'organization', workspaceId: workspace.id, kind: 'standard', name: 'bench', limit: 500_000n * 1_000_000_000n, limitReset: 'daily', now: new Date() });
await keys.create(key);
await workspaces.putBudget(org.id, workspace.id, 'monthly', { id: 'b', limit: 500_000n * 1_000_000_000n, created_at: new Date().toISOString(), updated_at: new Date().toISOString() }, undefined, new Date().toISOString());
const log = new Logger(() => undefined);
const ledger = createLedger(db, tableName, { log, workspaceCacheTtlMs: 60_000 });
const aggregator = createAggregator(db, tableName, { log });
const pageRepository = new PageRepository(db, tableName);
/** Every page written, in order, as the stream hands them to the aggregator. */
const written: Page[] = [];
const pages = new PageWriter({ store: { put: async (page) => { const result = await pageRepository.put(page); written.push(page); return result; } }, log, sleep: async () => undefined });
const ids = new GenerationIds();

let n = 0;
function record(id: string): GenerationRecord {
  const usage = { ...emptyUsage(), input_tokens: 50, output_tokens: 50 };
  return {
    id, org_id: org.id, workspace_id: workspace.id, key_hash: key.hash, model: 'simulator/echo', provider: 'simulator', upstream_model: 'echo',
    provider_id: `chatcmpl-${id}`, api: 'chat', streamed: false, status: 'completed', finish_reason: 'stop', native_finish_reason: 'stop', usage,
    cost: computeCost(usage, { prompt: 1000n, completion: 2000n, request: 0n, input_cache_read: 1000n, input_cache_write: 1000n, internal_reasoning: 2000n }),
    is_byok: false, service_tier: 'default', attempts: 1, created_at: new Date().toISOString(), latency_ms: 3, first_token_ms: 3, generation_time_ms: 0,
    session_id: null, user_hash: 'a'.repeat(32), error: null, reserved: 150_000n, usage_estimated: false, provider_responses: [{ provider: 'simulator', model: 'simulator/echo', status: 200 }],
  };
}

interface Cycle { reserveMs: number; pageMs: number; reserveWcu: number; pageWcu: number; attempts: number }

/** Cycles between their start and their record's hand-over to the page writer. */
let running = 0;

async function cycle(): Promise<Cycle> {
  n += 1;
  running += 1;
  const id = ids.next(Date.now());
  const t0 = performance.now();
  const hold = await ledger.reserve(id, key, 150_000n);
  const t1 = performance.now();
  const adding = pages.add({ record: record(id), claim: { kind: 'hold', amount: hold.amount } });
  // As the inference handler does: the last invocation running writes what waits at once.
  running -= 1;
  if (running === 0) void pages.flush();
  const stored = await adding;
  const t2 = performance.now();
  if (!stored.stored) throw new Error('page not stored');
  return { reserveMs: t1 - t0, pageMs: t2 - t1, reserveWcu: hold.writeUnits, pageWcu: stored.writeUnits, attempts: hold.attempts };
}

/** The aggregator over everything written since `from`, in batches of `batch` pages (the event source's batch size). */
async function aggregate(from: number, batch: number): Promise<{ ms: number[]; records: number; transactions: number; writeUnits: number }> {
  const ms: number[] = [];
  let records = 0;
  let transactions = 0;
  let writeUnits = 0;
  for (let i = from; i < written.length; i += batch) {
    const slice = written.slice(i, i + batch);
    const t0 = performance.now();
    const result = await aggregator.apply(slice);
    ms.push(performance.now() - t0);
    records += slice.reduce((sum, page) => sum + page.entries.length, 0);
    transactions += result.transactions;
    writeUnits += result.writeUnits;
  }
  return { ms, records, transactions, writeUnits };
}

const ms = (value: number) => `${value.toFixed(2)} ms`;
const summary = (cycles: Cycle[], pick: (c: Cycle) => number) => {
  const d = distribution(cycles.map(pick));
  return `${ms(d.p50)} / ${ms(d.p99)}`;
};

try {
  for (let i = 0; i < 100; i += 1) await cycle(); // warm-up: JIT, connections, DynamoDB Local's first writes
  await aggregate(0, 100);
  const sequential: Cycle[] = [];
  const firstSequential = written.length;
  const cpuBefore = process.cpuUsage();
  for (let i = 0; i < SEQUENTIAL; i += 1) sequential.push(await cycle());
  const cpu = process.cpuUsage(cpuBefore);
  const cpuPerCycleUs = (cpu.user + cpu.system) / SEQUENTIAL;
  const aggregatorCpuBefore = process.cpuUsage();
  const applied = await aggregate(firstSequential, 100);
  const aggregatorCpu = process.cpuUsage(aggregatorCpuBefore);

  const concurrent: Cycle[] = [];
  const firstConcurrent = written.length;
  const end = performance.now() + CONCURRENT_MS;
  const started = performance.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (performance.now() < end) concurrent.push(await cycle());
  }));
  const elapsedS = (performance.now() - started) / 1000;
  const concurrentPages = written.length - firstConcurrent;
  const appliedConcurrent = await aggregate(firstConcurrent, 100);
  const retried = concurrent.filter((c) => c.attempts > 1).length;
  const wcu = distribution(sequential.map((c) => c.reserveWcu + c.pageWcu));
  // What AWS would charge: 2 write units per started KB of each item a transaction writes (updates count
  // the larger of the item before and after), 1 per started KB of a plain put, at DynamoDB's item sizes.
  const sizeOf = async (itemKey: { pk: string; sk: string }) => {
    const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: itemKey }));
    return itemSize(Item ?? {});
  };
  const json = (item: Record<string, unknown>) => itemSize(item);
  const lastId = ids.next(Date.now());
  await ledger.reserve(lastId, key, 150_000n);
  const holdBytes = await sizeOf(itemKeys.hold(lastId));
  const [orgBytes, keyBytes, wsBytes] = await Promise.all([sizeOf(itemKeys.organization(org.id)), sizeOf(itemKeys.apiKey(key.hash)), sizeOf(itemKeys.workspace(org.id, workspace.id))]);
  const lastRecord = record(lastId);
  const onePageBytes = json(pageToItem({ block: 'b'.repeat(12), seq: 1, entries: [{ record: lastRecord, claim: { kind: 'hold', amount: 150_000n } }] }));
  const rollupBytes = await sizeOf(rollupDelta(record(ids.next(Date.now()))).key);
  const units = (bytes: number) => 2 * Math.ceil(bytes / 1024);
  const awsReserve = units(holdBytes) + units(orgBytes) + units(keyBytes) + units(wsBytes);
  // On Lambda a page holds the invocation's one record.
  const awsPage = Math.ceil(onePageBytes / 1024);
  // The aggregator: per record, the hold's delete; per transaction, the marker, organization, key, workspace
  // and rollup row, shared by the records it applies (as measured in the sequential run's batches).
  const recordsPerTransaction = applied.records / applied.transactions;
  const awsShared = units(200) + units(orgBytes) + units(keyBytes) + units(wsBytes) + units(rollupBytes);
  const awsAggregate = units(holdBytes) + awsShared / recordsPerTransaction;
  const awsTotal = awsReserve + awsPage + awsAggregate;
  // With a lease covering the request: no hold to write or delete; the lease's own take and return are
  // shared by the hundreds of requests it covers.
  const awsLeased = awsPage + awsShared / recordsPerTransaction;
  const dist = (values: number[]) => distribution(values);

  const lines = [
    `## Ledger benchmark — ${new Date().toISOString()}`,
    '',
    `DynamoDB Local ${IN_MEMORY ? 'in memory' : 'on disk'}, one organization / key (daily limit) / workspace (monthly budget); ${SEQUENTIAL} sequential cycles after 100 warm-up, then ${IN_FLIGHT} in flight on the same key for ${CONCURRENT_MS / 1000} s. Each cycle: reserve, then hand the record to the page writer and wait until its page is stored; the aggregator then applies the pages in batches of 100 (the event source's batch size).`,
    '',
    '| Step | p50 / p99 (sequential) | p50 / p99 (10 in flight, one key) | DynamoDB write units (DynamoDB Local) |',
    '|---|---|---|---|',
    `| Reservation (before the provider call: adds to every reply) | ${summary(sequential, (c) => c.reserveMs)} | ${summary(concurrent, (c) => c.reserveMs)} | ${sequential[0]!.reserveWcu} (TransactWriteItems of 4 items) |`,
    `| Record stored in its page (after the reply) | ${summary(sequential, (c) => c.pageMs)} | ${summary(concurrent, (c) => c.pageMs)} | ${sequential[0]!.pageWcu} (its share of a PutItem) |`,
    `| Whole money path per request (in the invocation) | ${summary(sequential, (c) => c.reserveMs + c.pageMs)} | ${summary(concurrent, (c) => c.reserveMs + c.pageMs)} | p50 ${wcu.p50}, max ${wcu.max} |`,
    `| Aggregator, per batch of 100 pages | ${ms(dist(applied.ms).p50)} / ${ms(dist(applied.ms).p99)} (${applied.records} records in ${applied.transactions} transactions) | ${ms(dist(appliedConcurrent.ms).p50)} / ${ms(dist(appliedConcurrent.ms).p99)} (${concurrentPages} pages, ${appliedConcurrent.records} records in ${appliedConcurrent.transactions} transactions) | ${(applied.writeUnits / applied.records).toFixed(2)} per record |`,
    '',
    `- Cycles per second with ${IN_FLIGHT} in flight on one key: ${(concurrent.length / elapsedS).toFixed(0)}; ${retried} of ${concurrent.length} reservations (${(100 * retried / concurrent.length).toFixed(1)}%) needed more than one attempt (transaction conflicts on the shared items).`,
    `- Node CPU (this process: the SDK's marshalling, signing and HTTP) per cycle (a reservation and a page write): ${cpuPerCycleUs.toFixed(0)} µs; the aggregator's per record: ${((aggregatorCpu.user + aggregatorCpu.system) / applied.records).toFixed(0)} µs.`,
    `- On AWS (2 write units per started KB of each item in a transaction, 1 per KB of a put; item sizes as DynamoDB counts them: hold ${holdBytes} B, organization ${orgBytes} B, key ${keyBytes} B, workspace ${wsBytes} B, a one-record page (its record compressed) ${onePageBytes} B, rollup row ${rollupBytes} B): reservation ${awsReserve}, page ${awsPage} (Lambda: one record a page), aggregator ${awsAggregate.toFixed(2)} per record (${recordsPerTransaction.toFixed(1)} records per transaction here): ${awsTotal.toFixed(2)} write units, $${(awsTotal * 0.000000625).toFixed(9)} per request at the us-east-1 on-demand price ($0.625 per million). A request a lease covers writes no hold: ${awsLeased.toFixed(2)} write units ($${(awsLeased * 0.000000625).toFixed(9)}).`,
    '',
  ];
  const report = lines.join('\n');
  console.log(report);
  mkdirSync(join(process.cwd(), 'bench', 'results'), { recursive: true });
  writeFileSync(join(process.cwd(), 'bench', 'results', IN_MEMORY ? 'ledger-in-memory.md' : 'ledger.md'), `${report}\n`);
} finally {
  db.destroy();
  admin.destroy();
  await ddb.stop();
  rmSync(dir, { recursive: true, force: true });
}
