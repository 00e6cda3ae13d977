// Budget leases over DynamoDB Local, through the real handlers: requests reserve from a process's lease in
// memory once one is taken, the lease is given back when its terms change or the process stops, the sweep
// returns a dead owner's lease after its expiry, and the money comes out exact every way.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { usdToNanos } from '../../lambdas/platform/money.js';
import { itemKeys } from '../../lambdas/platform/dynamo/item-keys.js';
import { leaseSize } from '../../lambdas/billing/leases.js';
import { createSimulatorStore, type SimulatorStore } from '../support/store.js';
import { createTenant } from '../support/tenants.js';
import { httpEvent } from '../support/events.js';
import { chatCompletion, handleInference, manage as manageWith, type Json } from '../support/handler-calls.js';
import { waitFor } from '../support/wait.js';

let store: SimulatorStore;

beforeAll(async () => {
  store = await createSimulatorStore();
});
afterAll(async () => {
  await store.drop();
});

async function chat(key: string, extra: Json = {}): Promise<{ status: number; json: Json; id: string | undefined }> {
  return chatCompletion(store.deps, key, { model: 'simulator/echo', messages: [{ role: 'user', content: 'lease me' }], max_tokens: 20, ...extra });
}

const manage = (key: string, method: string, path: string, body?: unknown) => manageWith(store.deps, key, method, path, body);
const item = (key: { pk: string; sk: string }) => store.item(key) as Promise<Json | undefined>;

const pool = () => store.deps.engine.leases!;

async function account() {
  const tenant = await createTenant(store.deps, 'organization', 'Lease Co');
  const admin = (await tenant.addKey('management')).text;
  const created = await manage(admin, 'POST', '/keys', { name: 'leased' });
  return { tenant, admin, key: created.json.key as string, hash: created.json.data.hash as string };
}

describe('lease sizing', () => {
  const request = 1_000n;
  it('covers the demand of its horizon and at least a few requests, capped by what is left as use rises', () => {
    // Plenty left: 4 requests' worth, or 5 s of a 10,000/s demand.
    expect(leaseSize({ left: 1_000_000_000n, capacity: 1_000_000_000n }, 0, request)).toBe(4_000n);
    expect(leaseSize({ left: 1_000_000_000n, capacity: 1_000_000_000n }, 10_000, request)).toBe(50_000n);
    // Capped at 25 % of what is left under half used, 10 % under 80 %, 5 % beyond.
    expect(leaseSize({ left: 100_000n, capacity: 150_000n }, 1e9, request)).toBe(25_000n);
    expect(leaseSize({ left: 100_000n, capacity: 300_000n }, 1e9, request)).toBe(10_000n);
    expect(leaseSize({ left: 100_000n, capacity: 1_000_000n }, 1e9, request)).toBe(5_000n);
    // Too thin for a lease worth having: requests hold exactly.
    expect(leaseSize({ left: 50_000n, capacity: 1_000_000n }, 1e9, request)).toBeUndefined();
    expect(leaseSize({ left: 0n, capacity: 1_000_000n }, 1e9, request)).toBeUndefined();
  });
});

describe('requests reserve from a lease', () => {
  it('after the first request, the next ones reserve in memory: no hold, the same exact money once given back', async () => {
    const owner = await account();
    const first = await chat(owner.key);
    expect(first.status).toBe(200);
    await waitFor(() => pool().held().some((lease) => lease.keyHash === owner.hash && !lease.retired), { what: 'a lease' });
    const [lease] = pool().held().filter((held) => held.keyHash === owner.hash);
    const leaseItem = await item(itemKeys.lease(lease!.id));
    expect(leaseItem).toMatchObject({ state: 'active', org_id: owner.tenant.orgId, key_hash: owner.hash, consumed: 0 });
    // The lease is in every meter's `held` from the moment it is taken.
    const org = await item(itemKeys.organization(owner.tenant.orgId));
    expect(BigInt(org!.held)).toBeGreaterThanOrEqual(lease!.amount);

    const replies = [];
    for (let i = 0; i < 3; i += 1) replies.push(await chat(owner.key, { stream: i === 1 }));
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200]);
    // Reserved from the lease: no hold item was ever written for them.
    for (const reply of replies) expect(await item(itemKeys.hold(reply.id!))).toBeUndefined();
    const records = await store.records(owner.tenant.orgId);
    expect(records).toHaveLength(4);
    const fromLease = (await store.entries()).filter((entry) => entry.claim.kind === 'lease');
    expect(fromLease.map((entry) => entry.record.id).sort()).toEqual(replies.map((reply) => reply.id).sort());

    await store.quiesce();
    const total = records.reduce((sum, record) => sum + record.cost.total, 0n);
    const after = await item(itemKeys.organization(owner.tenant.orgId));
    expect({ held: BigInt(after!.held), usage: BigInt(after!.total_usage), balance: BigInt(after!.balance) }).toEqual({ held: 0n, usage: total, balance: usdToNanos(1000) - total });
    const keyItem = await item(itemKeys.apiKey(owner.hash));
    expect({ held: BigInt(keyItem!.held), usage: BigInt(keyItem!.usage_total), leases: keyItem!.leases }).toEqual({ held: 0n, usage: total, leases: 0 });
    const returned = await item(itemKeys.lease(lease!.id));
    const spent = fromLease.reduce((sum, record) => sum + BigInt(record.claim.amount), 0n);
    expect(returned).toMatchObject({ state: 'returned' });
    expect(BigInt(returned!.consumed)).toBe(spent);
    expect(BigInt(returned!.returned)).toBe(lease!.amount - spent);
  });

  it('a key PATCHed after its lease was taken: the next request holds exactly under the new terms, and the lease is given back', async () => {
    const owner = await account();
    expect((await chat(owner.key)).status).toBe(200);
    await waitFor(() => pool().held().some((lease) => lease.keyHash === owner.hash && !lease.retired), { what: 'a lease' });
    const [lease] = pool().held().filter((held) => held.keyHash === owner.hash);
    expect((await manage(owner.admin, 'PATCH', `/keys/${owner.hash}`, { limit: 0.000001 })).status).toBe(200);
    const refused = await chat(owner.key);
    expect(refused.status).toBe(402);
    expect(refused.json.error.metadata.reason).toBe('key_limit');
    await waitFor(async () => (await item(itemKeys.lease(lease!.id)))?.state === 'returned', { what: 'the lease given back' });
    expect((await manage(owner.admin, 'PATCH', `/keys/${owner.hash}`, { disabled: true })).status).toBe(200);
    expect((await chat(owner.key)).status).toBe(401);
  });

  it('a process that died with a lease: the sweep gives back its unspent part after expiry, and its records still charge once', async () => {
    const owner = await account();
    expect((await chat(owner.key)).status).toBe(200);
    await waitFor(() => pool().held().some((lease) => lease.keyHash === owner.hash && !lease.retired), { what: 'a lease' });
    const [lease] = pool().held().filter((held) => held.keyHash === owner.hash);
    // The draw's page is written only after the sweep (as a record still in flight when its lease expired).
    const pages = store.deps.engine.pages;
    const add = pages.add.bind(pages);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => { open = resolve; });
    const written: Array<Promise<unknown>> = [];
    pages.add = (entry) => {
      const stored = gate.then(() => add(entry));
      written.push(stored);
      return stored;
    };
    const deferred: Array<Promise<unknown>> = [];
    const reply = await handleInference(httpEvent({ method: 'POST', path: '/api/v1/chat/completions', key: owner.key, body: { model: 'simulator/echo', messages: [{ role: 'user', content: 'lease me' }], max_tokens: 20 } }), store.deps, (work) => { deferred.push(work); });
    expect(reply.statusCode).toBe(200);
    const cost = usdToNanos((JSON.parse(reply.body as string) as Json).usage.cost);
    // Before its expiry the sweep leaves it alone (its owner may still be serving requests from it).
    expect(await store.deps.engine.ledger.sweepLeases()).toBe(0);
    const stored = await item(itemKeys.lease(lease!.id));
    store.setNow(new Date(Date.parse(stored!.expires_at as string) + 1000));
    try {
      expect(await store.deps.engine.ledger.sweepLeases()).toBeGreaterThanOrEqual(1);
      // The draw's record is applied after the sweep: charged without releasing anything twice.
      pages.add = add;
      open();
      await Promise.all([...written, ...deferred]);
      await store.converge();
      const swept = await item(itemKeys.lease(lease!.id));
      expect(swept).toMatchObject({ state: 'swept' });
      expect(BigInt(swept!.swept)).toBe(lease!.amount);
      // Ended: out of the sweep's listing, and expiring once no record of it can still arrive.
      expect(swept!.gsi1pk).toBeUndefined();
      expect(swept!.ttl).toBeGreaterThan(Date.now() / 1000);
      // The dead process's pool does not know: it gives back nothing more.
      await store.quiesce();
      const records = await store.records(owner.tenant.orgId);
      const total = records.reduce((sum, record) => sum + record.cost.total, 0n);
      expect(total).toBeGreaterThanOrEqual(cost);
      const org = await item(itemKeys.organization(owner.tenant.orgId));
      expect({ held: BigInt(org!.held), usage: BigInt(org!.total_usage), balance: BigInt(org!.balance) }).toEqual({ held: 0n, usage: total, balance: usdToNanos(1000) - total });
      expect(store.logs.some((line) => line.includes('lease swept before its records were applied'))).toBe(true);
    } finally {
      store.setNow(undefined);
    }
  });

  it('a returned lease whose records never reached the aggregator: closed after its settle-by time, giving back what they claimed', async () => {
    const owner = await account();
    const ledger = store.deps.engine.ledger;
    const key = (await store.deps.keys.get(owner.hash))!;
    const workspace = await ledger.workspaceOf(owner.tenant.orgId, owner.tenant.workspaceId);
    const grant = (await ledger.takeLease(key, workspace, usdToNanos(0.5), Date.now() + 60_000, 'test-owner'))!;
    // Its owner says its requests spent $0.2, but their pages never reach the aggregator (dead-lettered).
    await ledger.returnLease(grant, usdToNanos(0.2));
    let org = await item(itemKeys.organization(owner.tenant.orgId));
    expect(BigInt(org!.held)).toBe(usdToNanos(0.2));
    expect(await ledger.sweepLeases()).toBe(0);
    store.setNow(new Date(Date.now() + 2 * 86_400_000 + 60_000));
    try {
      // (Leases of the other tests in this table, returned long ago by then, are closed too.)
      expect(await ledger.sweepLeases()).toBeGreaterThanOrEqual(1);
      org = await item(itemKeys.organization(owner.tenant.orgId));
      expect({ held: BigInt(org!.held), balance: BigInt(org!.balance) }).toEqual({ held: 0n, balance: usdToNanos(1000) });
      const keyItem = await item(itemKeys.apiKey(owner.hash));
      expect({ held: BigInt(keyItem!.held), leases: keyItem!.leases }).toEqual({ held: 0n, leases: 0 });
      expect(await item(itemKeys.lease(grant.id))).toMatchObject({ state: 'swept' });
      // Nothing is listed any more: a second sweep finds nothing.
      expect(await ledger.sweepLeases()).toBe(0);
    } finally {
      store.setNow(undefined);
    }
  });

  it('refusalOf reads whether the limits leave an amount, naming the tightest, and reserves nothing; leaseOrRefusal says which limit refused', async () => {
    const owner = await account();
    expect((await manage(owner.admin, 'PATCH', `/keys/${owner.hash}`, { limit: 0.5 })).status).toBe(200);
    const ledger = store.deps.engine.ledger;
    const key = (await store.deps.keys.get(owner.hash))!;
    const workspace = await ledger.workspaceOf(owner.tenant.orgId, owner.tenant.workspaceId);
    expect(await ledger.refusalOf(key, workspace, usdToNanos(0.5))).toBeUndefined();
    const overLimit = await ledger.refusalOf(key, workspace, usdToNanos(0.6));
    expect(overLimit).toMatchObject({ reason: 'key_limit', remaining: usdToNanos(0.5), required: usdToNanos(0.6), state: "The key's total limit of $0.5 has $0.5 left", remedy: "raise the key's limit" });
    // Past the organization's credits ($1,000) too: the tightest is named.
    expect(await ledger.refusalOf(key, workspace, usdToNanos(2000))).toMatchObject({ reason: 'key_limit' });
    // Nothing was reserved.
    expect(BigInt((await item(itemKeys.apiKey(owner.hash)))!.held)).toBe(0n);
    const refused = await ledger.leaseOrRefusal(key, workspace, usdToNanos(0.6), Date.now() + 60_000, 'test-owner');
    expect(refused).toMatchObject({ reason: 'key_limit', state: "The key's total limit of $0.5 has $0.5 left" });
    expect(await ledger.takeLease(key, workspace, usdToNanos(0.6), Date.now() + 60_000, 'test-owner')).toBeUndefined();
    // Without the key's limit, the organization's credits are what refuses.
    expect((await manage(owner.admin, 'PATCH', `/keys/${owner.hash}`, { limit: null })).status).toBe(200);
    const unlimited = (await store.deps.keys.get(owner.hash))!;
    expect(await ledger.refusalOf(unlimited, workspace, usdToNanos(2000))).toMatchObject({ reason: 'insufficient_credits', remaining: usdToNanos(1000) });
    // What a lease holds is no longer left.
    const grant = (await ledger.takeLease(unlimited, workspace, usdToNanos(400), Date.now() + 60_000, 'test-owner'))!;
    expect(await ledger.refusalOf(unlimited, workspace, usdToNanos(700))).toMatchObject({ reason: 'insufficient_credits', remaining: usdToNanos(600) });
    await ledger.returnLease(grant, 0n);
    expect(await ledger.refusalOf(unlimited, workspace, usdToNanos(700))).toBeUndefined();
    // A workspace budget tighter than the credits is named, with when it resets.
    expect((await manage(owner.admin, 'PUT', `/workspaces/${owner.tenant.workspaceId}/budgets/monthly`, { limit_usd: 50 })).status).toBe(200);
    const budgeted = await ledger.workspaceOf(owner.tenant.orgId, owner.tenant.workspaceId);
    expect(await ledger.refusalOf(unlimited, budgeted, usdToNanos(50))).toBeUndefined();
    const overBudget = await ledger.refusalOf(unlimited, budgeted, usdToNanos(60));
    expect(overBudget).toMatchObject({ reason: 'workspace_budget', remaining: usdToNanos(50), remedy: "raise the workspace's budget" });
    expect(overBudget!.state).toMatch(/^Workspace .+'s monthly budget of \$50 has \$50 left; it resets at /);
  });

  it("a dead process's exact holds are released by its owner name at once, not after their expiry; others are left alone", async () => {
    const owner = await account();
    const ledger = store.deps.engine.ledger;
    const key = (await store.deps.keys.get(owner.hash))!;
    const mine = await ledger.reserve(store.deps.engine.generationIds.next(Date.now()), key, usdToNanos(0.01));
    expect(await item(itemKeys.hold(mine.generationId))).toMatchObject({ owner: pool().owner });
    expect(await ledger.releaseExpired('some-other-process')).toBe(0);
    expect(await ledger.releaseExpired(pool().owner)).toBeGreaterThanOrEqual(1);
    expect(await item(itemKeys.hold(mine.generationId))).toBeUndefined();
    const org = await item(itemKeys.organization(owner.tenant.orgId));
    expect({ held: BigInt(org!.held), balance: BigInt(org!.balance) }).toEqual({ held: 0n, balance: usdToNanos(1000) });
  });
});
