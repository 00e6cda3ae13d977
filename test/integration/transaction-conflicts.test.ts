// DynamoDB Local never reports transaction conflicts; AWS does, on any item two transactions touch (and on a
// single write to an item a transaction holds). With a seeded share of the writes failed that way at the
// client (test/support/transaction-conflicts.ts), a realistic workload through the real handlers (a process
// with leases and one holding exactly, a few keys, one running out of its limit, failing upstream calls,
// streams, a day boundary crossed midway) and the meter aggregator behind the stream over the same client
// still comes out exact to the nano-dollar: every conflict retried, nothing held, every page applied once.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { Readable } from 'node:stream';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { installAwsLambdaShim } from '../../bin/local/awslambda-shim.js';
import { startSimulator, type Simulator } from '../../bin/simulator/server.js';
import { nanosFromStore, nanosToDecimal, usdToNanos, type Nanos } from '../../lambdas/platform/money.js';
import { itemKeys } from '../../lambdas/platform/dynamo/item-keys.js';
import { createDocumentClient } from '../../lambdas/platform/dynamo/client.js';
import type { GatewayDeps } from '../../lambdas/app/deps.js';
import { createTestStore, type TestStore } from '../support/store.js';
import { createTenant } from '../support/tenants.js';
import { httpEvent } from '../support/events.js';
import { seeded } from '../support/random.js';
import { injectTransactionConflicts, type ConflictInjector } from '../support/transaction-conflicts.js';

installAwsLambdaShim();
const { handleInference } = await import('../../lambdas/handlers/inference.js');
const { handleManagement } = await import('../../lambdas/handlers/management.js');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

const REQUESTS = 300;
const IN_FLIGHT = 16;
const CREDITS = usdToNanos(1000);

let sim: Simulator;
let store: TestStore;
let conflicts!: ConflictInjector;

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
  store = await createTestStore({ SIMULATOR_URL: sim.url }, {
    client: (db) => { conflicts = injectTransactionConflicts(db, { rate: 0.3, exceptionShare: 1 / 3, seed: 11 }); },
  });
});
afterAll(async () => {
  await store.drop();
  await sim.close();
});

async function readBody(body: string | Readable): Promise<string> {
  if (typeof body === 'string') return body;
  let text = '';
  for await (const chunk of body) text += String(chunk);
  return text;
}

async function manage(key: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Json }> {
  const reply = await handleManagement(httpEvent({ method, path: `/api/v1${path}`, key, ...(body === undefined ? {} : { body }) }), store.deps);
  return { status: reply.statusCode ?? 200, json: JSON.parse(String(reply.body)) as Json };
}

/** A chat completion through `deps`; a stream's final usage chunk stands in for the JSON reply. */
async function chat(deps: GatewayDeps, key: string, body: Json): Promise<{ status: number; json: Json }> {
  const reply = await handleInference(httpEvent({ method: 'POST', path: '/api/v1/chat/completions', key, body }), deps);
  const text = await readBody(reply.body);
  if (!body.stream || reply.statusCode !== 200) return { status: reply.statusCode, json: JSON.parse(text) as Json };
  const frames = text.split('\n\n').filter((frame) => frame.startsWith('data: {')).map((frame) => JSON.parse(frame.slice(6)) as Json);
  return { status: reply.statusCode, json: frames.at(-1)! };
}

async function scan(filter: string, values: Record<string, unknown>): Promise<Json[]> {
  const db = createDocumentClient({ endpoint: store.endpoint });
  try {
    const found: Json[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const result = await db.send(new ScanCommand({ TableName: store.tableName, ConsistentRead: true, ExclusiveStartKey: start, FilterExpression: filter, ExpressionAttributeValues: values }));
      found.push(...(result.Items ?? []));
      start = result.LastEvaluatedKey;
    } while (start);
    return found;
  } finally {
    db.destroy();
  }
}

async function item(key: { pk: string; sk: string }): Promise<Json> {
  const [found] = await scan('pk = :pk AND sk = :sk', { ':pk': key.pk, ':sk': key.sk });
  return found!;
}

const sum = (values: Nanos[]) => values.reduce((a, b) => a + b, 0n);

it('injected transaction conflicts are retried: leases, holds and page application still converge, exactly', async () => {
  const tenant = await createTenant(store.deps, 'organization', 'Conflict Co', CREDITS);
  const admin = (await tenant.addKey('management')).text;
  const keys: Array<{ text: string; hash: string }> = [];
  // Two keys without a limit and one whose limit runs out midway (its later requests hold exactly, then 402).
  for (const limit of [undefined, undefined, 0.005]) {
    const created = await manage(admin, 'POST', '/keys', { name: `key ${keys.length}`, ...(limit === undefined ? {} : { limit }) });
    expect(created.status).toBe(201);
    keys.push({ text: created.json.key as string, hash: created.json.data.hash as string });
  }
  // Two processes over the same client: one reserving from leases, one holding every request exactly.
  const leased = store.deps;
  const exact = store.depsWith({ GATEWAY_LEASES: 'off' });
  expect(exact.engine.leases).toBeUndefined();

  conflicts.start();
  const random = seeded(7);
  const plan = Array.from({ length: REQUESTS }, (_, i) => ({
    deps: i % 3 === 0 ? exact : leased,
    key: keys[Math.floor(random() * keys.length)]!,
    body: {
      model: random() < 0.1 ? 'simulator/error-500' : 'simulator/echo',
      messages: [{ role: 'user', content: `request ${i} ${'y'.repeat(Math.floor(random() * 200))}` }],
      max_tokens: 50,
      stream: random() < 0.2,
    },
  }));
  const replies: Array<{ status: number; json: Json; key: string }> = [];
  let next = 0;
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (next < REQUESTS) {
      const request = plan[next++]!;
      // Halfway, the clock crosses midnight: every meter's windows roll while requests hold and pages apply.
      if (next === REQUESTS / 2) store.setNow(new Date(Math.ceil(Date.now() / 86_400_000) * 86_400_000 + 5000));
      const reply = await chat(request.deps, request.key.text, request.body);
      replies.push({ ...reply, key: request.key.hash });
    }
  }));
  await store.quiesce();
  conflicts.stop();

  const statuses = new Map<number, number>();
  for (const reply of replies) statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
  const injected = conflicts.seen.filter((write) => write.injected);
  const count = (kind: string, how?: string) => injected.filter((write) => write.kind === kind && (how === undefined || write.injected === how)).length;
  const failed = replies.find((reply) => reply.status >= 500 && reply.status !== 502);
  console.log([
    `${REQUESTS} requests: ${[...statuses].map(([status, n]) => `${n} × ${status}`).join(', ')}${failed ? `; a ${failed.status} said: ${JSON.stringify(failed.json.error)}` : ''}`,
    `writes seen ${conflicts.seen.length}, conflicts injected ${injected.length}: ${['r', 'lease', 'x', 'l', 'a', 'update'].map((kind) => `${kind} ${count(kind, 'cancelled')}+${count(kind, 'exception')}`).join(', ')} (cancelled + TransactionConflictException)`,
    // The first errors other than the upstream's failures (502), to say what went wrong.
    ...store.logs.filter((line) => line.startsWith('{"level":"error"') && !line.includes('"status":502')).slice(0, 3),
  ].join('\n'));
  // Every reply is an answer: served, the limit reached (402), or the upstream's failure (502); never a 500.
  for (const reply of replies.filter((done) => done.status !== 200)) {
    expect([402, 502]).toContain(reply.status);
    expect(reply.json.error.code).toBe(reply.status);
    if (reply.status === 402) expect(reply.json.error.metadata.reason).toBe('key_limit');
  }
  expect(statuses.get(200)).toBeGreaterThan(REQUESTS / 2);
  // Conflicts were retried where they happened: no lease left untaken or unreturned for one, no stream
  // batch failed for one (the stream's retries are few, then pages are dead-lettered).
  expect(store.logs.filter((line) => /lease not taken|lease not given back|lease return attempt failed|release attempt failed|pages not applied/.test(line))).toEqual([]);
  expect(statuses.get(402)).toBeGreaterThan(0);

  // Exact money: usage is what the records cost, which is what the replies said.
  const records = await store.records(tenant.orgId);
  const served = replies.filter((reply) => reply.status === 200);
  expect(records.filter((record) => record.status !== 'error')).toHaveLength(served.length);
  const usage = sum(records.map((record) => record.cost.total));
  expect(usage).toBe(sum(served.map((reply) => usdToNanos(reply.json.usage.cost as number))));
  const org = await item(itemKeys.organization(tenant.orgId));
  expect({ usage: nanosFromStore(org.total_usage), balance: nanosFromStore(org.balance), held: nanosFromStore(org.held) }).toEqual({ usage, balance: CREDITS - usage, held: 0n });
  for (const key of keys) {
    const stored = await item(itemKeys.apiKey(key.hash));
    const own = sum(records.filter((record) => record.key_hash === key.hash).map((record) => record.cost.total));
    expect({ usage: nanosFromStore(stored.usage_total), held: nanosFromStore(stored.held), leases: stored.leases ?? 0 }).toEqual({ usage: own, held: 0n, leases: 0 });
  }
  const workspace = await item(itemKeys.workspace(tenant.orgId, tenant.workspaceId));
  expect({ usage: nanosFromStore(workspace.usage_total), held: nanosFromStore(workspace.held), leases: workspace.leases ?? 0 }).toEqual({ usage, held: 0n, leases: 0 });
  // No hold left behind; every lease given back with what its records consumed.
  expect(await scan('begins_with(pk, :pk)', { ':pk': 'HOLD#' })).toEqual([]);
  const pages = await store.pages();
  const claims = pages.flatMap(({ item: page }) => (page.records as Json[]).map((record) => record.claim as Json));
  const leases = await scan('begins_with(pk, :pk) AND org_id = :org', { ':pk': 'LEASE#', ':org': tenant.orgId });
  expect(leases.length).toBeGreaterThan(0);
  for (const lease of leases) {
    expect(lease.state).toBe('returned');
    const consumed = sum(claims.filter((claim) => claim.kind === 'lease' && claim.leaseId === lease.lease_id).map((claim) => nanosFromStore(claim.amount)));
    expect({ consumed: nanosFromStore(lease.consumed), whole: nanosFromStore(lease.consumed) + nanosFromStore(lease.returned) }).toEqual({ consumed, whole: nanosFromStore(lease.amount) });
  }
  expect(claims.some((claim) => claim.kind === 'hold')).toBe(true);
  // Every page applied, once: its seq is in its block's marker.
  for (const { item: page } of pages) {
    const block = String(page.pk).slice('GENS#'.length);
    const marker = await item(itemKeys.appliedMarker(block));
    expect([...(marker.seqs as Set<number>)].map(Number)).toContain(Number(String(page.sk).slice('P#'.length)));
  }

  console.log(`${records.length} records in ${pages.length} pages, ${leases.length} leases, usage $${nanosToDecimal(usage)}`);
  // Conflicts were injected into every kind of write, and each one was tried again.
  for (const kind of ['r', 'lease', 'x', 'l', 'a']) expect({ kind, cancelled: count(kind, 'cancelled') > 0, exception: count(kind, 'exception') > 0 }).toEqual({ kind, cancelled: true, exception: true });
  expect(count('update')).toBeGreaterThan(0);
  for (const write of injected.filter((seen) => seen.id !== '' && seen.kind !== 'update')) {
    expect(conflicts.seen.some((seen) => seen.kind === write.kind && seen.id === write.id && seen.attempt === write.attempt + 1)).toBe(true);
  }
  for (const write of injected.filter((seen) => seen.kind === 'update')) {
    expect(conflicts.seen.some((seen) => seen.kind === 'update' && seen.id === write.id && !seen.injected)).toBe(true);
  }
  // The aggregator's tokens carry no id: each of its attempts failed is followed by one more.
  const aggregations = conflicts.seen.filter((write) => write.kind === 'a');
  for (const attempt of new Set(aggregations.filter((write) => write.injected).map((write) => write.attempt))) {
    expect(aggregations.filter((write) => write.attempt === attempt + 1).length).toBeGreaterThanOrEqual(aggregations.filter((write) => write.attempt === attempt && write.injected).length);
  }
}, 120_000);
