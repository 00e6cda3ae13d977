// End users and guardrail spend limits over DynamoDB Local through the real handlers, the upstream simulator
// and the meter aggregator fed from the table's stream: the end-user routes; an end user's limit honoured at
// reservation (402 naming it, never exceeded, other users untouched); a disabled end user refused; a
// guardrail's limit_usd per key and per member (a member's keys share one allowance); usage on the meters
// equal to the records' costs after convergence, and nothing left held.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CreateGuardrailResponse$inboundSchema } from '@openrouter/sdk/models';
import { newMember } from '../../lambdas/organizations/index.js';
import { endUserHash } from '../../lambdas/end-users/index.js';
import { itemKeys } from '../../lambdas/platform/dynamo/item-keys.js';
import { nanosFromStore, usdToNanos } from '../../lambdas/platform/money.js';
import { spendMetersFor } from '../../lambdas/inference/spend-limits.js';
import { EndUserLimitExceeded } from '../../lambdas/billing/errors.js';
import { startSimulator, type Simulator } from '../../bin/simulator/server.js';
import { createTestStore, type TestStore } from '../support/store.js';
import { createTenant, type Tenant } from '../support/tenants.js';
import { chatCompletion, manage, type Json } from '../support/handler-calls.js';

let sim: Simulator;
let store: TestStore;
let tenant: Tenant;
let admin: string;
let key: string;
let keyHash: string;
let otherAdmin: string;

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
  store = await createTestStore({ SIMULATOR_URL: sim.url });
  tenant = await createTenant(store.deps);
  admin = (await tenant.addKey('management')).text;
  const standard = await tenant.addKey('standard');
  key = standard.text;
  keyHash = standard.key.hash;
  otherAdmin = (await (await createTenant(store.deps, 'organization', 'Other')).addKey('management')).text;
});
afterAll(async () => {
  await store.drop();
  await sim.close();
});

const endUsers = (method: string, path: string, body?: unknown, as = admin) => manage(store.deps, as, method, `/end-users${path}`, body);
// About 100 prompt tokens and 16 output tokens: about $0.00013 a request.
const PROMPT = 'ping '.repeat(100);
const ask = (as: string, extra: Json = {}) => chatCompletion(store.deps, as, { model: 'simulator/echo', messages: [{ role: 'user', content: PROMPT }], max_tokens: 16, ...extra });

/** The stored record (with its meter) of an end user's current registration. */
async function meterOf(user: string): Promise<Record<string, unknown>> {
  const endUser = (await store.deps.endUsers.get(tenant.orgId, endUserHash(tenant.orgId, user)))!;
  return (await store.item(itemKeys.endUserRecord(tenant.orgId, endUser.user_hash, endUser.epoch)))!;
}

/** What the records of `filter` cost, in nano-dollars. */
async function spentBy(filter: (record: { user_hash: string | null; key_hash: string }) => boolean): Promise<bigint> {
  return (await store.records(tenant.orgId)).filter(filter).reduce((sum, record) => sum + record.cost.total, 0n);
}

/** Sends requests one after another until one is refused; returns the refusal and how many succeeded. */
async function untilRefused(send: () => Promise<{ status: number; json: Json }>, max = 40): Promise<{ refusal: { status: number; json: Json }; served: number }> {
  for (let served = 0; served < max; served += 1) {
    const reply = await send();
    if (reply.status !== 200) return { refusal: reply, served };
  }
  throw new Error(`no refusal after ${max} requests`);
}

describe('end-user routes', () => {
  it('registers, reads, lists, changes and forgets end users of the organization only', async () => {
    const created = await endUsers('POST', '', { user: 'user/route@example.com', name: 'Route', limit: 3.5 * 0.0000105, limit_reset: 'daily' });
    expect(created.status).toBe(201);
    expect(created.json.data).toMatchObject({
      user: 'user/route@example.com', user_hash: endUserHash(tenant.orgId, 'user/route@example.com'), name: 'Route',
      limit: 0.00003675, limit_remaining: 0.00003675, limit_reset: 'daily', include_byok_in_limit: false, disabled: false, usage: 0, usage_daily: 0,
    });
    expect((await endUsers('POST', '', { user: 'user/route@example.com' })).status).toBe(409);
    // An id holding a `/` is named by its hash (the router reads an encoded slash as a separator).
    expect((await endUsers('GET', `/${encodeURIComponent('user/route@example.com')}`)).status).toBe(404);
    const path = `/${created.json.data.user_hash as string}`;
    expect((await endUsers('GET', path)).json.data.name).toBe('Route');
    // An id that is that hash would take its path: refused (either way round).
    const shadow = await endUsers('POST', '', { user: created.json.data.user_hash, name: 'shadow' });
    expect([shadow.status, shadow.json.error.message]).toEqual([409, expect.stringMatching(/is the user_hash of another end user/)]);
    const hashed = endUserHash(tenant.orgId, 'hashed/first');
    expect((await endUsers('POST', '', { user: hashed })).status).toBe(201);
    const second = await endUsers('POST', '', { user: 'hashed/first' });
    expect([second.status, second.json.error.message]).toEqual([409, expect.stringMatching(/which another end user has as its id/)]);
    expect((await endUsers('DELETE', `/${hashed}`)).status).toBe(200);
    expect((await endUsers('GET', '')).json.data.map((entry: Json) => entry.user)).toContain('user/route@example.com');
    const changed = await endUsers('PATCH', path, { limit: null, disabled: true });
    expect(changed.json.data).toMatchObject({ limit: null, limit_remaining: null, disabled: true, name: 'Route' });
    // Another organization sees none of it.
    expect((await endUsers('GET', path, undefined, otherAdmin)).status).toBe(404);
    expect((await endUsers('PATCH', path, { name: 'x' }, otherAdmin)).status).toBe(404);
    expect((await endUsers('DELETE', path, undefined, otherAdmin)).status).toBe(404);
    expect((await endUsers('GET', '', undefined, otherAdmin)).json.data).toEqual([]);
    expect((await endUsers('DELETE', path)).json).toEqual({ deleted: true });
    expect((await endUsers('GET', path)).status).toBe(404);
    expect((await endUsers('DELETE', path)).status).toBe(404);
  });

  it('refuses bad input with a 400 naming the field, and regular keys with a 403', async () => {
    for (const [body, field] of [
      [{ user: 'x', limit: -1 }, 'limit'], [{ user: 'x', limit: 'ten' }, 'limit'], [{ user: 'x', limit: 1e10 }, 'limit'],
      [{ user: '' }, 'user'], [{ user: 'x'.repeat(257) }, 'user'], [{ user: 'x', limit_reset: 'hourly' }, 'limit_reset'], [{ user: 'x', extra: 1 }, 'extra'],
    ] as const) {
      const reply = await endUsers('POST', '', body);
      expect({ body, status: reply.status }).toEqual({ body, status: 400 });
      expect(reply.json.error.message).toContain(field);
    }
    expect((await endUsers('GET', '', undefined, key)).status).toBe(403);
  });
});

describe('an end user\'s limit', () => {
  it('is honoured at reservation: a 402 naming it, usage never above it, other users untouched, the meter equal to the records', async () => {
    const limit = 0.0006;
    await endUsers('POST', '', { user: 'alice', limit, limit_reset: 'monthly' });
    const { refusal, served } = await untilRefused(() => ask(key, { user: 'alice' }));
    expect(served).toBeGreaterThan(0);
    expect(refusal.status).toBe(402);
    expect(refusal.json.error.metadata).toMatchObject({ reason: 'end_user_limit', user: 'alice', limit_reset: 'monthly' });
    expect(refusal.json.error.message).toMatch(/End user alice's monthly limit/);
    // Another user, and no user, are not limited by alice's limit.
    expect((await ask(key, { user: 'bob' })).status).toBe(200);
    expect((await ask(key)).status).toBe(200);
    await store.quiesce();
    const alice = endUserHash(tenant.orgId, 'alice');
    const spent = await spentBy((record) => record.user_hash === alice);
    expect(spent).toBeGreaterThan(0n);
    expect(spent).toBeLessThanOrEqual(usdToNanos(String(limit)));
    // Refused only near the limit: what was spent and the refused request's reservation (its most possible cost) pass it.
    expect(spent + usdToNanos(refusal.json.error.metadata.required as string)).toBeGreaterThan(usdToNanos(String(limit)));
    const item = await meterOf('alice');
    expect(nanosFromStore(item.usage_total)).toBe(spent);
    expect(nanosFromStore(item.usage_monthly)).toBe(spent);
    expect(nanosFromStore(item.held)).toBe(0n);
    const view = (await endUsers('GET', '/alice')).json.data;
    expect(view.usage).toBeCloseTo(Number(spent) / 1e9, 12);
    // Raised: it serves again at once.
    await endUsers('PATCH', '/alice', { limit: 1 });
    expect((await ask(key, { user: 'alice' })).status).toBe(200);
  });

  it('counts the spend of a registered end user without a limit, and refuses a disabled one with a 403', async () => {
    await endUsers('POST', '', { user: 'carol' });
    expect((await ask(key, { user: 'carol' })).status).toBe(200);
    await store.quiesce();
    const carol = endUserHash(tenant.orgId, 'carol');
    const item = await meterOf('carol');
    expect(nanosFromStore(item.usage_total)).toBe(await spentBy((record) => record.user_hash === carol));
    await endUsers('PATCH', '/carol', { disabled: true });
    const refused = await ask(key, { user: 'carol' });
    expect(refused.status).toBe(403);
    expect(refused.json.error.message).toMatch(/End user carol is disabled/);
  });

  it('is checked against the end user as stored: a hold made from an older copy rereads it and applies the new limit', async () => {
    await endUsers('POST', '', { user: 'erin', limit: 1 });
    const hash = endUserHash(tenant.orgId, 'erin');
    const stale = (await store.deps.endUsers.get(tenant.orgId, hash))!;
    // Lowered through the API; another process still has the copy read before.
    await endUsers('PATCH', '/erin', { limit: 0.00001 });
    const caller = { orgId: tenant.orgId, workspaceId: tenant.workspaceId, keyHash: keyHash, key: (await store.deps.keys.get(keyHash))! };
    const spend = spendMetersFor({ user: 'erin', safetyIdentifier: undefined }, caller, { endUsers: { find: () => stale, reload: () => store.deps.endUsers.get(tenant.orgId, hash), invalidate: () => undefined } });
    const refused = store.deps.engine.ledger.reserve(`gen-stale-${Date.now()}`, caller.key, usdToNanos('0.0001'), undefined, await spend);
    await expect(refused).rejects.toBeInstanceOf(EndUserLimitExceeded);
    // The old copy's limit would have covered it; nothing is left held.
    expect(nanosFromStore((await meterOf('erin')).held)).toBe(0n);
  });

  it('is a new meter when registered again: what the first registration held is given back to it alone', async () => {
    await endUsers('POST', '', { user: 'frank', limit: 1 });
    const hash = endUserHash(tenant.orgId, 'frank');
    const first = (await store.deps.endUsers.get(tenant.orgId, hash))!;
    const caller = { orgId: tenant.orgId, workspaceId: tenant.workspaceId, keyHash: keyHash, key: (await store.deps.keys.get(keyHash))! };
    const find = (endUser: typeof first) => ({ find: () => endUser, reload: () => store.deps.endUsers.get(tenant.orgId, hash), invalidate: () => undefined });
    const hold = await store.deps.engine.ledger.reserve(`gen-frank-${Date.now()}`, caller.key, usdToNanos('0.5'), undefined, await spendMetersFor({ user: 'frank', safetyIdentifier: undefined }, caller, { endUsers: find(first) }));
    expect(hold.extras).toEqual([{ of: 'end-user', orgId: tenant.orgId, userHash: hash, epoch: first.epoch }]);
    // Deleted and registered again while the hold is out, with a lower limit.
    await endUsers('DELETE', '/frank');
    await endUsers('POST', '', { user: 'frank', limit: 0.2 });
    expect(nanosFromStore((await meterOf('frank')).held)).toBe(0n);
    expect((await store.deps.engine.ledger.release(hold)).outcome).toBe('released');
    expect(nanosFromStore((await meterOf('frank')).held)).toBe(0n);
    // A process still holding the first registration's copy meets the new one, and its limit.
    const refused = store.deps.engine.ledger.reserve(`gen-frank2-${Date.now()}`, caller.key, usdToNanos('0.5'), undefined, await spendMetersFor({ user: 'frank', safetyIdentifier: undefined }, caller, { endUsers: find(first) }));
    await expect(refused).rejects.toBeInstanceOf(EndUserLimitExceeded);
  });

  it('gives back what a failed request held on the end user', async () => {
    await endUsers('POST', '', { user: 'dave', limit: 1 });
    const failed = await ask(key, { user: 'dave', model: 'simulator/error-500' });
    expect(failed.status).toBe(502);
    await store.quiesce();
    const item = await meterOf('dave');
    expect(nanosFromStore(item.held)).toBe(0n);
  });
});

describe('a guardrail\'s spend limit', () => {
  it('limits each key it is assigned to on its own: a 402 naming the guardrail, other keys untouched', async () => {
    const a = await tenant.addKey('standard', { name: 'limited a' });
    const b = await tenant.addKey('standard', { name: 'limited b' });
    const created = await manage(store.deps, admin, 'POST', '/guardrails', { name: 'Small spend', limit_usd: 0.0006, reset_interval: 'daily' });
    expect(created.status).toBe(201);
    expect(CreateGuardrailResponse$inboundSchema.safeParse(created.json).error).toBeUndefined();
    expect(created.json.data).toMatchObject({ limit_usd: 0.0006, reset_interval: 'daily' });
    const id = created.json.data.id as string;
    await manage(store.deps, admin, 'POST', `/guardrails/${id}/assignments/keys`, { key_hashes: [a.key.hash, b.key.hash] });
    const first = await untilRefused(() => ask(a.text));
    expect(first.refusal.status).toBe(402);
    expect(first.refusal.json.error.metadata).toMatchObject({ reason: 'guardrail_limit', guardrail_id: id, guardrail_scope: 'key', limit_reset: 'daily' });
    // Each key has its own allowance.
    const second = await untilRefused(() => ask(b.text));
    expect(second.served).toBeGreaterThan(0);
    expect((await ask(key)).status).toBe(200);
    await store.quiesce();
    for (const limited of [a, b]) expect(await spentBy((record) => record.key_hash === limited.key.hash)).toBeLessThanOrEqual(usdToNanos('0.0006'));
    // Lifted: the keys serve again.
    await manage(store.deps, admin, 'PATCH', `/guardrails/${id}`, { limit_usd: null });
    expect((await ask(a.text)).status).toBe(200);
  });

  it('limits a member across every key they created: one allowance, counted on the member\'s meter', async () => {
    const member = newMember(tenant.orgId, { email: `spender-${Date.now()}@example.com`, role: 'org:member' }, new Date().toISOString());
    await store.deps.members.add(member);
    const keys: string[] = [];
    const hashes: string[] = [];
    for (const name of ['member key 1', 'member key 2']) {
      const created = await manage(store.deps, admin, 'POST', '/keys', { name, creator_user_id: member.id });
      keys.push(created.json.key as string);
      hashes.push(created.json.data.hash as string);
    }
    const id = (await manage(store.deps, admin, 'POST', '/guardrails', { name: 'Member spend', limit_usd: 0.0009 })).json.data.id as string;
    await manage(store.deps, admin, 'POST', `/guardrails/${id}/assignments/members`, { member_user_ids: [member.id] });
    let turn = 0;
    const { refusal, served } = await untilRefused(() => ask(keys[turn++ % 2]!));
    expect(served).toBeGreaterThan(1);
    expect(refusal.status).toBe(402);
    expect(refusal.json.error.metadata).toMatchObject({ reason: 'guardrail_limit', guardrail_id: id, guardrail_scope: 'member', limit_reset: null });
    expect(refusal.json.error.message).toMatch(/Guardrail Member spend's per-member lifetime limit of \$0\.0009 has \$[\d.]+ left/);
    // The other key of the member is out too: the allowance is the member's.
    expect((await ask(keys[turn % 2]!)).status).toBe(402);
    await store.quiesce();
    const spent = await spentBy((record) => hashes.includes(record.key_hash));
    expect(spent).toBeLessThanOrEqual(usdToNanos('0.0009'));
    const meter = (await store.item(itemKeys.memberMeter(tenant.orgId, member.id)))!;
    expect(nanosFromStore(meter.usage_total)).toBe(spent);
    expect(nanosFromStore(meter.held)).toBe(0n);
  });
});
