// DynamoDB Local never reports transaction conflicts; AWS does, on any item two transactions touch (and on a
// single write to an item a transaction holds). With a seeded share of the writes failed that way at the
// client (test/support/transaction-conflicts.ts), a realistic workload through the real handlers (a process
// with leases and one holding exactly, a few keys, one running out of its limit, failing upstream calls,
// streams, a day boundary crossed midway) and the meter aggregator behind the stream over the same client
// still comes out exact to the nano-dollar: every conflict retried, nothing held, every page applied once.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { startSimulator, type Simulator } from '../../bin/simulator/server.js';
import { nanosFromStore, nanosToDecimal, usdToNanos, type Nanos } from '../../lambdas/platform/money.js';
import { itemKeys } from '../../lambdas/platform/dynamo/item-keys.js';
import type { GatewayDeps } from '../../lambdas/app/deps.js';
import { createTestStore, type TestStore } from '../support/store.js';
import { createTenant } from '../support/tenants.js';
import { seeded } from '../support/random.js';
import { injectTransactionConflicts, type ConflictInjector } from '../support/transaction-conflicts.js';

import { chatCompletion, manage as manageWith, type Json } from '../support/handler-calls.js';

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

const manage = (key: string, method: string, path: string, body?: unknown) => manageWith(store.deps, key, method, path, body);
const chat = (deps: GatewayDeps, key: string, body: Json) => chatCompletion(deps, key, body);
const scan = (filter: string, values: Record<string, unknown>) => store.scan(filter, values) as Promise<Json[]>;
const item = async (key: { pk: string; sk: string }) => (await store.item(key)) as Json;

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
  const claims = (await store.entries()).map((entry) => entry.claim);
  const leases = await scan('begins_with(pk, :pk) AND org_id = :org', { ':pk': 'LEASE#', ':org': tenant.orgId });
  expect(leases.length).toBeGreaterThan(0);
  for (const lease of leases) {
    expect(lease.state).toBe('returned');
    const consumed = sum(claims.filter((claim) => claim.kind === 'lease' && claim.leaseId === lease.lease_id).map((claim) => claim.amount));
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
