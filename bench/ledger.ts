// What the money path adds to a request, measured on its own against DynamoDB Local (on disk, as under
// npm start): the latency of the reservation (before the provider call; it adds to every reply) and of the
// settlement and infrastructure-cost write (after the reply; they add to the invocation's duration), and the
// DynamoDB write capacity each consumes (ReturnConsumedCapacity). Then the same cycle with 10 requests in
// flight on one key, where the transactions contend for the same organization, key and workspace items.
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
import { generationToItem, type GenerationRecord } from '../lambdas/billing/generation-record.js';
import { createOrganization } from '../lambdas/organizations/create-organization.js';
import { newApiKey } from '../lambdas/keys/new-key.js';
import { createLedger } from '../lambdas/app/engine-deps.js';
import { Logger } from '../lambdas/platform/logger.js';
import { rollupDelta } from '../lambdas/billing/rollups.js';
import { startInvocation } from '../lambdas/billing/infrastructure.js';
import { computeCost } from '../lambdas/billing/cost.js';
import { emptyUsage } from '../lambdas/providers/types.js';
import { distribution } from './stats.js';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { itemKeys } from '../lambdas/platform/dynamo/item-keys.js';

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
const ledger = createLedger(db, tableName, { log: new Logger(() => undefined), workspaceCacheTtlMs: 60_000 });

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

interface Cycle { reserveMs: number; settleMs: number; infraMs: number; reserveWcu: number; settleWcu: number; attempts: number; settleAttempts: number }

async function cycle(): Promise<Cycle> {
  n += 1;
  const id = `gen-bench-${n}-${Math.random().toString(36).slice(2, 10)}`;
  const invocation = startInvocation();
  const t0 = performance.now();
  const hold = await ledger.reserve(id, key, 150_000n);
  const t1 = performance.now();
  const generation = record(id);
  const item = generationToItem(generation);
  const rollup = rollupDelta(generation);
  const settled = await ledger.settle(hold, { credits: generation.cost.total, byok: 0n }, item, rollup);
  const t2 = performance.now();
  await ledger.recordInfrastructure(id, rollup.key, invocation, { writeUnits: hold.writeUnits + settled.writeUnits, readUnits: hold.readUnits, kmsRequests: 0 }, performance.now(), JSON.stringify(item).length);
  const t3 = performance.now();
  if (settled.outcome !== 'settled') throw new Error(`settlement ${settled.outcome}`);
  return { reserveMs: t1 - t0, settleMs: t2 - t1, infraMs: t3 - t2, reserveWcu: hold.writeUnits, settleWcu: settled.writeUnits, attempts: hold.attempts, settleAttempts: settled.attempts };
}

const ms = (value: number) => `${value.toFixed(2)} ms`;
const summary = (cycles: Cycle[], pick: (c: Cycle) => number) => {
  const d = distribution(cycles.map(pick));
  return `${ms(d.p50)} / ${ms(d.p99)}`;
};

try {
  for (let i = 0; i < 100; i += 1) await cycle(); // warm-up: JIT, connections, DynamoDB Local's first writes
  const sequential: Cycle[] = [];
  const cpuBefore = process.cpuUsage();
  for (let i = 0; i < SEQUENTIAL; i += 1) sequential.push(await cycle());
  const cpu = process.cpuUsage(cpuBefore);
  const cpuPerCycleUs = (cpu.user + cpu.system) / SEQUENTIAL;

  const concurrent: Cycle[] = [];
  const end = performance.now() + CONCURRENT_MS;
  const started = performance.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (performance.now() < end) concurrent.push(await cycle());
  }));
  const elapsedS = (performance.now() - started) / 1000;
  const retried = concurrent.filter((c) => c.attempts > 1 || c.settleAttempts > 1).length;
  const wcu = distribution(sequential.map((c) => c.reserveWcu + c.settleWcu));
  const itemBytes = JSON.stringify(generationToItem(record('gen-size-probe'))).length;
  // What AWS would charge: 2 write units per started KB of each item a transaction writes (updates count
  // the larger of the item before and after). Item sizes approximated by their JSON length.
  const sizeOf = async (itemKey: { pk: string; sk: string }) => {
    const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: itemKey }));
    return JSON.stringify(Item ?? {}, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)).length;
  };
  const lastId = `gen-size-${Date.now()}`;
  const lastHold = await ledger.reserve(lastId, key, 150_000n);
  const holdBytes = await sizeOf(itemKeys.hold(lastId));
  const [orgBytes, keyBytes, wsBytes] = await Promise.all([sizeOf(itemKeys.organization(org.id)), sizeOf(itemKeys.apiKey(key.hash)), sizeOf(itemKeys.workspace(org.id, workspace.id))]);
  const lastRecord = record(lastId);
  await ledger.settle(lastHold, { credits: lastRecord.cost.total, byok: 0n }, generationToItem(lastRecord), rollupDelta(lastRecord));
  const rollupBytes = await sizeOf(rollupDelta(lastRecord).key);
  const units = (bytes: number) => 2 * Math.ceil(bytes / 1024);
  const awsReserve = units(holdBytes) + units(orgBytes) + units(keyBytes) + units(wsBytes);
  const awsSettle = units(holdBytes) + units(orgBytes) + units(keyBytes) + units(wsBytes) + units(itemBytes) + units(rollupBytes);
  const awsInfra = units(itemBytes + 400) + units(rollupBytes);

  const lines = [
    `## Ledger benchmark — ${new Date().toISOString()}`,
    '',
    `DynamoDB Local ${IN_MEMORY ? 'in memory' : 'on disk'}, one organization / key (daily limit) / workspace (monthly budget); ${SEQUENTIAL} sequential cycles after 100 warm-up, then ${IN_FLIGHT} in flight on the same key for ${CONCURRENT_MS / 1000} s.`,
    '',
    '| Step | p50 / p99 (sequential) | p50 / p99 (10 in flight, one key) | DynamoDB write units |',
    '|---|---|---|---|',
    `| Reservation (before the provider call: adds to every reply) | ${summary(sequential, (c) => c.reserveMs)} | ${summary(concurrent, (c) => c.reserveMs)} | ${sequential[0]!.reserveWcu} (TransactWriteItems of 4 items) |`,
    `| Settlement with generation record and rollup (after the reply) | ${summary(sequential, (c) => c.settleMs)} | ${summary(concurrent, (c) => c.settleMs)} | ${sequential[0]!.settleWcu} (TransactWriteItems of 6 items) |`,
    `| Infrastructure-cost write (last, after the reply) | ${summary(sequential, (c) => c.infraMs)} | ${summary(concurrent, (c) => c.infraMs)} | estimated ${2 * (Math.ceil(itemBytes / 1024) + 1)} (2 items) |`,
    `| Whole money path per request | ${summary(sequential, (c) => c.reserveMs + c.settleMs + c.infraMs)} | ${summary(concurrent, (c) => c.reserveMs + c.settleMs + c.infraMs)} | reservation + settlement measured: p50 ${wcu.p50}, max ${wcu.max} |`,
    '',
    `- Cycles per second with ${IN_FLIGHT} in flight on one key: ${(concurrent.length / elapsedS).toFixed(0)}; ${retried} of ${concurrent.length} cycles (${(100 * retried / concurrent.length).toFixed(1)}%) needed more than one attempt (transaction conflicts on the shared items).`,
    `- Node CPU (this process: the SDK's marshalling, signing and HTTP) per cycle of three transactions: ${cpuPerCycleUs.toFixed(0)} µs.`,
    `- Write units above are what DynamoDB Local reports. On AWS a transaction consumes 2 write units per started KB of each item: with these item sizes (JSON length: hold ${holdBytes} B, organization ${orgBytes} B, key ${keyBytes} B, workspace ${wsBytes} B, generation record ${itemBytes} B, rollup row ${rollupBytes} B) that is ${awsReserve} for the reservation, ${awsSettle} for the settlement and ${awsInfra} for the infrastructure-cost write: ${awsReserve + awsSettle + awsInfra} write units, $${((awsReserve + awsSettle + awsInfra) * 0.000000625).toFixed(9)} per request at the us-east-1 on-demand price ($0.625 per million).`,
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
