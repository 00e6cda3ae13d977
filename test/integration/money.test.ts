// Credits, key limits, workspace budgets and exactly-once settlement, through the real handlers with real
// deps over DynamoDB Local and the upstream simulator. Money is compared exactly, in nano-dollars.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { usdToNanos, type Nanos } from '../../lambdas/platform/money.js';
import { itemKeys } from '../../lambdas/platform/dynamo/item-keys.js';
import { createDocumentClient } from '../../lambdas/platform/dynamo/client.js';
import { startInvocation } from '../../lambdas/billing/infrastructure.js';
import type { DomainError } from '../../lambdas/platform/errors.js';
import { httpErrorOf } from '../../lambdas/platform/http/errors.js';
import { createSimulatorStore, type SimulatorStore } from '../support/store.js';
import { createTenant, type Tenant } from '../support/tenants.js';
import { httpEvent } from '../support/events.js';
import { applyPages } from '../../lambdas/app/aggregator.js';
import type { Hold } from '../../lambdas/billing/ledger.js';
import type { GenerationRecord } from '../../lambdas/billing/generation-record.js';
import { generationRecord } from '../support/records.js';

import { chatCompletion, handleInference, handleManagement, manage as manageWith, type Json } from '../support/handler-calls.js';

const CHAT = '/api/v1/chat/completions';
const RESPONSES = '/api/v1/responses';
const nanos = (usd: number) => usdToNanos(usd);

let store: SimulatorStore;

beforeAll(async () => {
  store = await createSimulatorStore();
});
afterAll(async () => {
  await store.drop();
});

function chatBody(text: string, extra: Json = {}): Json {
  return { model: 'simulator/echo', messages: [{ role: 'user', content: text }], max_tokens: 20, ...extra };
}

/**
 * A chat completion; for streams, the final usage chunk stands in for the JSON reply. Then the aggregator
 * applies its record (as it does within a second on AWS), unless `converge` is false.
 */
async function chat(key: string, text = 'count me in', extra: Json = {}, converge = true): Promise<{ status: number; json: Json }> {
  const reply = await chatCompletion(store.deps, key, chatBody(text, extra), startInvocation());
  if (converge) await store.converge();
  return reply;
}

const manage = (key: string, method: string, path: string, body?: unknown, query?: Record<string, string>) => manageWith(store.deps, key, method, path, body, query);
const rawItem = async (key: { pk: string; sk: string }) => (await store.item(key)) as Json;

interface Account {
  tenant: Tenant;
  admin: string;
}

async function account(credits: Nanos = nanos(1000)): Promise<Account> {
  const tenant = await createTenant(store.deps, 'organization', 'Money Co', credits);
  return { tenant, admin: (await tenant.addKey('management')).text };
}

let operatorAccount: Promise<Account> | undefined;

/** The gateway operator's organization, whose management keys grant credits: a table records it once, so tests share it. */
function theOperator(): Promise<Account> {
  operatorAccount ??= (async () => {
    const operator = await account();
    expect(await store.deps.organizations.putDefaultOrganization({ org_id: operator.tenant.orgId, workspace_id: operator.tenant.workspaceId })).toBe(true);
    return operator;
  })();
  return operatorAccount;
}

async function newKey(owner: Account, body: Json): Promise<{ text: string; hash: string }> {
  const created = await manage(owner.admin, 'POST', '/keys', { name: 'k', ...body });
  expect(created.status).toBe(201);
  return { text: created.json.key as string, hash: created.json.data.hash as string };
}

/** Cost and reservation of one request of this shape, from a throwaway account. */
async function probe(text: string, extra: Json = {}): Promise<{ cost: Nanos; reserved: Nanos }> {
  const owner = await account();
  const key = await newKey(owner, {});
  const reply = await chat(key.text, text, extra);
  expect(reply.status).toBe(200);
  const generation = await manage(owner.admin, 'GET', '/generation', undefined, { id: reply.json.id as string });
  return { cost: nanos(reply.json.usage.cost), reserved: nanos(generation.json.data.reserved) };
}

describe('reports agree with replies', () => {
  it('the cost in a reply equals GET /generation, and /activity and /credits add up to the replies', async () => {
    const owner = await account();
    const first = await newKey(owner, {});
    const second = await newKey(owner, {});
    let total = 0n;
    const replies: Json[] = [];
    for (let i = 0; i < 12; i += 1) {
      const key = i % 2 ? first : second;
      const reply = await chat(key.text, `message number ${i} ${'x'.repeat(i * 7)}`, { stream: i % 3 === 0, model: i % 4 === 0 ? 'simulator/echo-anthropic' : 'simulator/echo' });
      expect(reply.status).toBe(200);
      total += nanos(reply.json.usage.cost);
      replies.push(reply.json);
    }
    for (const reply of replies) {
      const generation = await manage(owner.admin, 'GET', '/generation', undefined, { id: reply.id as string });
      expect(generation.status).toBe(200);
      expect(nanos(generation.json.data.total_cost)).toBe(nanos(reply.usage.cost));
      expect(generation.json.data.infrastructure.total_usd).toBeGreaterThan(0);
      expect(generation.json.data.infrastructure.dynamodb_write_units).toBeGreaterThan(0);
      // The test deps cache nothing: each request read its key and its workspace.
      expect(generation.json.data.infrastructure.dynamodb_read_units).toBeGreaterThanOrEqual(1);
      const emf = store.logs.map((line) => JSON.parse(line) as Json).find((line) => line.generation_id === reply.id && line._aws);
      expect(emf).toMatchObject({ Model: reply.model, UpstreamCostUSD: reply.usage.cost, Requests: 1 });
      expect(emf!.InfrastructureCostUSD).toBe(generation.json.data.infrastructure.total_usd);
    }
    // Meters and rollups follow once the aggregator has applied the pages.
    await store.converge();
    const activity = await manage(owner.admin, 'GET', '/activity');
    expect(activity.status).toBe(200);
    const rows = activity.json.data as Json[];
    expect(new Set(rows.map((row) => row.model))).toEqual(new Set(['simulator/echo', 'simulator/echo-anthropic']));
    expect(rows.reduce((sum, row) => sum + nanos(row.usage), 0n)).toBe(total);
    expect(rows.reduce((sum, row) => sum + (row.requests as number), 0)).toBe(12);
    const ofFirst = await manage(owner.admin, 'GET', '/activity', undefined, { api_key_hash: first.hash });
    expect((ofFirst.json.data as Json[]).reduce((sum, row) => sum + (row.requests as number), 0)).toBe(6);
    const credits = await manage(owner.admin, 'GET', '/credits');
    expect(nanos(credits.json.data.total_usage)).toBe(total);
    expect(nanos(credits.json.data.total_credits)).toBe(nanos(1000));
    const analytics = await manage(owner.admin, 'POST', '/analytics/query', { metrics: ['requests', 'cost'], dimensions: ['api_key'] });
    expect(analytics.status).toBe(200);
    const byKey = new Map((analytics.json.data.data as Json[]).map((row) => [row.api_key, row]));
    expect(byKey.get(first.hash)!.requests).toBe(6);
    expect(nanos(byKey.get(first.hash)!.cost) + nanos(byKey.get(second.hash)!.cost)).toBe(total);
  });
});

describe('routes that read a generation, right after the reply', () => {
  /** A reply whose record is still being written (as on Lambda: the reply first, its page 300 ms later). */
  async function withSettlementInFlight(run: (owner: Account, id: string) => Promise<void>): Promise<void> {
    const owner = await account();
    const key = await newKey(owner, {});
    const deferred: Array<Promise<unknown>> = [];
    const pages = store.deps.engine.pages;
    const add = pages.add.bind(pages);
    pages.add = async (entry) => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return add(entry);
    };
    try {
      const reply = await handleInference(httpEvent({ method: 'POST', path: CHAT, key: key.text, body: chatBody('early bird') }), store.deps, (work) => { deferred.push(work); });
      await run(owner, (JSON.parse(reply.body as string) as Json).id as string);
    } finally {
      pages.add = add;
      await Promise.all(deferred);
    }
  }

  it('GET /generation waits for a settlement still in flight instead of answering 404', async () => {
    await withSettlementInFlight(async (owner, id) => {
      const generation = await manage(owner.admin, 'GET', '/generation', undefined, { id });
      expect(generation.status).toBe(200);
      expect(generation.json.data.id).toBe(id);
    });
  });

  it('an id stamped later than now was never handed out: 404 at once, without waiting for it', async () => {
    const owner = await account();
    const { generations } = store.deps.engine;
    const get = generations.get.bind(generations);
    let reads = 0;
    generations.get = (id) => {
      reads += 1;
      return get(id);
    };
    try {
      const now = Math.floor(Date.now() / 1000);
      expect((await manage(owner.admin, 'GET', '/generation', undefined, { id: `gen-${now + 3600}-AAAAAAAAAAAAAAAAAAAA` })).status).toBe(404);
      // One read and one second look, not a read every few hundred milliseconds for the settling wait's 5 s.
      expect(reads).toBe(2);
      // An id of the last minutes is waited for (its request may still be writing its record).
      reads = 0;
      expect((await manage(owner.admin, 'GET', '/generation', undefined, { id: `gen-${now}-AAAAAAAAAAAAAAAAAAAA` })).status).toBe(404);
      expect(reads).toBeGreaterThan(2);
    } finally {
      generations.get = get;
    }
  });

  it('POST /generation/feedback waits for it too, and the feedback is stored', async () => {
    await withSettlementInFlight(async (owner, id) => {
      const feedback = await manage(owner.admin, 'POST', '/generation/feedback', { generation_id: id, category: 'latency' });
      expect(feedback).toEqual({ status: 200, json: { data: { success: true } } });
      // Still the organization's own only: another organization's key gets the same 404 as an unknown id.
      const other = await account();
      expect((await manage(other.admin, 'POST', '/generation/feedback', { generation_id: id, category: 'other' })).status).toBe(404);
    });
  });
});

describe('key limits under concurrency', () => {
  it('200 parallel requests against a limit covering exactly K of them: at most K succeed, the rest get 402, usage never exceeds the limit', async () => {
    const text = 'parallel request';
    const { cost } = await probe(text);
    const K = 10n;
    const owner = await account();
    const key = await newKey(owner, { limit: Number(K * cost) / 1e9 });
    // No record is applied while they run: every finished request keeps its whole hold until then.
    const replies = await Promise.all(Array.from({ length: 200 }, () => chat(key.text, text, {}, false)));
    const ok = replies.filter((reply) => reply.status === 200);
    const refused = replies.filter((reply) => reply.status === 402);
    expect(ok.length + refused.length).toBe(200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(BigInt(ok.length)).toBeLessThanOrEqual(K);
    for (const reply of refused) {
      expect(reply.json.error.code).toBe(402);
      // Which of the two 402 messages depends on what the requests in flight hold at that instant: fewer max_tokens
      // when the remainder still covers the prompt and one output token, a shorter prompt when it does not.
      expect(reply.json.error.message).toMatch(/^This request requires more credits(, or fewer max_tokens\. .*|: it can cost up to \$[\d.]+, and the \$[\d.]+ left does not cover its prompt and one output token\.) The key's total limit of /);
      expect(reply.json.error.metadata.reason).toBe('key_limit');
    }
    await store.converge();
    const record = await manage(owner.admin, 'GET', `/keys/${key.hash}`);
    const usage = nanos(record.json.data.usage);
    expect(usage).toBe(BigInt(ok.length) * cost);
    expect(usage).toBeLessThanOrEqual(K * cost);
    // Nothing is left held once every request has settled.
    const keyItem = await rawItem(itemKeys.apiKey(key.hash));
    expect(keyItem.held).toBe(0);
    const orgItem = await rawItem(itemKeys.organization(owner.tenant.orgId));
    expect(orgItem.held).toBe(0);
    expect(BigInt(orgItem.balance)).toBe(nanos(1000) - usage);
  });
});

describe('credits', () => {
  it('an organization without credits gets 402 naming its balance; the operator adds credits and requests pass', async () => {
    const operator = await theOperator();
    const broke = await account(0n);
    const key = await newKey(broke, {});
    const refused = await chat(key.text);
    expect(refused.status).toBe(402);
    expect(refused.json.error.message).toMatch(/^This request requires more credits: it can cost up to \$[0-9.]+, and the \$0 left does not cover its prompt and one output token\. The account has \$0 of credits available\. Shorten the prompt, or add credits\.$/);
    expect(refused.json.error.metadata).toMatchObject({ reason: 'insufficient_credits', available: '0', remaining: '0', affordable_tokens: 0, requested_tokens: 20 });

    const notOperator = await manage(broke.admin, 'POST', '/credits', { amount: 5 });
    expect(notOperator.status).toBe(403);
    const granted = await manage(operator.admin, 'POST', '/credits', { amount: 5.25, organization_id: broke.tenant.orgId, note: 'invoice 42' });
    expect(granted.status).toBe(200);
    expect(granted.json.data).toMatchObject({ organization_id: broke.tenant.orgId, total_credits: 5.25, total_usage: 0, grant: { amount: 5.25, note: 'invoice 42' } });
    expect((await manage(operator.admin, 'POST', '/credits', { amount: 1, organization_id: 'no-such-org' })).status).toBe(404);
    expect((await manage(operator.admin, 'POST', '/credits', { amount: 0 })).status).toBe(400);
    expect((await manage(operator.admin, 'POST', '/credits', { amount: 0.0000000001 })).status).toBe(400);

    const passed = await chat(key.text);
    expect(passed.status).toBe(200);
    const credits = await manage(broke.admin, 'GET', '/credits');
    expect(credits.json.data).toEqual({ total_credits: 5.25, total_usage: passed.json.usage.cost });
  });

  it('a 402 says how many output tokens the credits afford, and that many pass', async () => {
    // $0.0001 of credits; "Hello" without max_tokens holds for 16,384 output tokens at $2 per million.
    const poor = await account(nanos(0.0001));
    const key = await newKey(poor, {});
    const refused = await chat(key.text, 'Hello', { max_tokens: undefined });
    expect(refused.status).toBe(402);
    const { metadata } = refused.json.error;
    expect(metadata).toMatchObject({ reason: 'insufficient_credits', requested_tokens: 16384, remaining: '0.0001', available: '0.0001' });
    const affordable = metadata.affordable_tokens as number;
    expect(affordable).toBeGreaterThan(0);
    expect(affordable).toBeLessThan(50);
    expect(refused.json.error.message).toBe(
      `This request requires more credits, or fewer max_tokens. You requested up to 16384 tokens, but can only afford ${affordable}. The account has $0.0001 of credits available. Lower max_tokens, or add credits.`,
    );
    expect((await chat(key.text, 'Hello', { max_tokens: affordable + 1 })).json.error.metadata).toMatchObject({ requested_tokens: affordable + 1, affordable_tokens: affordable });
    expect((await chat(key.text, 'Hello', { max_tokens: affordable })).status).toBe(200);
  });

  it('a grant sent as a float is taken to the nearest nano-dollar; negative, infinite, huge and zero grants are 400s naming the field', async () => {
    const operator = await theOperator();
    const receiver = await account(0n);
    const grant = async (amount: string) => {
      const reply = await handleManagement(httpEvent({ method: 'POST', path: '/api/v1/credits', key: operator.admin, rawBody: `{"amount":${amount},"organization_id":"${receiver.tenant.orgId}"}` }), store.deps);
      return { status: reply.statusCode, json: JSON.parse(String(reply.body)) as Json };
    };

    const granted = await grant('0.000036750000000000004');
    expect(granted.status).toBe(200);
    expect(granted.json.data).toMatchObject({ total_credits: 0.00003675, grant: { amount: 0.00003675 } });
    expect((await store.deps.organizations.get(receiver.tenant.orgId))!.total_credits).toBe(36_750n);

    for (const [amount, problem] of [
      ['-1', 'must not be negative'],
      ['1e400', 'must be a finite number'],
      ['1e12', 'must be at most 1000000000 (USD)'],
      ['0', 'must be greater than 0'],
      ['1e-10', 'must be greater than 0 (it rounds to 0 at the nearest nano-dollar)'],
      ['"5"', 'must be a number (USD)'],
    ] as Array<[string, string]>) {
      const refused = await grant(amount);
      expect([amount, refused.status, refused.json.error?.message]).toEqual([amount, 400, `Invalid body.amount: ${problem}`]);
    }
    expect((await store.deps.organizations.get(receiver.tenant.orgId))!.total_credits).toBe(36_750n);
  });

  it('regular keys cannot read or add credits', async () => {
    const owner = await account();
    const key = await newKey(owner, {});
    expect((await manage(key.text, 'GET', '/credits')).status).toBe(403);
    expect((await manage(key.text, 'POST', '/credits', { amount: 1 })).status).toBe(403);
  });
});

describe('settlement happens exactly once', () => {
  /** A record of `cost` for a hold, as the pipeline writes it: into a page, which the aggregator applies. */
  async function writeRecord(hold: Hold, cost: Nanos, overrides: Partial<GenerationRecord> = {}): Promise<void> {
    const record = generationRecord(hold.generationId, {
      org_id: hold.orgId, workspace_id: hold.workspaceId, key_hash: hold.keyHash, reserved: hold.amount,
      cost: { ...generationRecord('x').cost, total: cost }, created_at: store.deps.clock().toISOString(), ...overrides,
    });
    expect(await store.deps.engine.pages.add({ record, claim: { kind: 'hold', amount: hold.amount } })).toMatchObject({ stored: true });
  }

  it('a page applied twice, and in bisected halves, charges once', async () => {
    const owner = await account();
    const key = await newKey(owner, {});
    const apiKey = (await store.deps.keys.get(key.hash))!;
    const ledger = store.deps.engine.ledger;
    const holds = await Promise.all([1, 2, 3].map((n) => ledger.reserve(store.deps.engine.generationIds.next(Date.now()), apiKey, nanos(0.01))));
    await Promise.all(holds.map((hold, i) => writeRecord(hold, nanos(0.001 * (i + 1)))));
    const pages = await store.pages();
    expect(pages.length).toBeGreaterThanOrEqual(1);
    // The whole batch, then each page alone (a bisected redelivery), then the whole batch again.
    for (const batch of [pages, ...pages.map((page) => [page]), pages]) expect(await applyPages(store.deps, batch)).toEqual({});
    await store.converge();
    const org = await rawItem(itemKeys.organization(owner.tenant.orgId));
    expect(BigInt(org.total_usage)).toBe(nanos(0.006));
    expect(org.held).toBe(0);
    expect(BigInt(org.balance)).toBe(nanos(1000) - nanos(0.006));
    const keyItem = await rawItem(itemKeys.apiKey(key.hash));
    expect(BigInt(keyItem.usage_total)).toBe(nanos(0.006));
    expect(BigInt(keyItem.exp_daily)).toBe(nanos(0.006));
    // Every hold is ended by its record: a release finds nothing left to give back.
    for (const hold of holds) expect((await ledger.release(hold)).outcome).toBe('already');
  });

  it('a hold swept after its expiry is released once, and its record, applied late, still charges exactly once', async () => {
    const owner = await account();
    const key = await newKey(owner, {});
    const apiKey = (await store.deps.keys.get(key.hash))!;
    const ledger = store.deps.engine.ledger;
    const start = new Date('2026-11-22T10:00:00Z');
    store.setNow(start);
    try {
      const hold = await ledger.reserve(store.deps.engine.generationIds.next(start.getTime()), apiKey, nanos(0.02));
      store.setNow(new Date(start.getTime() + 21 * 60_000));
      expect(await ledger.releaseExpired()).toBeGreaterThanOrEqual(1);
      let org = await rawItem(itemKeys.organization(owner.tenant.orgId));
      expect(org.held).toBe(0);
      expect(BigInt(org.balance)).toBe(nanos(1000));
      await writeRecord(hold, nanos(0.003));
      await store.converge();
      await store.converge();
      org = await rawItem(itemKeys.organization(owner.tenant.orgId));
      expect(org.held).toBe(0);
      expect(BigInt(org.total_usage)).toBe(nanos(0.003));
      expect(BigInt(org.balance)).toBe(nanos(1000) - nanos(0.003));
      const keyItem = await rawItem(itemKeys.apiKey(key.hash));
      expect(keyItem.held).toBe(0);
      expect(BigInt(keyItem.usage_daily)).toBe(nanos(0.003));
      expect(store.logs.some((line) => line.includes('hold expired before its record was applied') && line.includes(hold.generationId))).toBe(true);
    } finally {
      store.setNow(undefined);
    }
  });

  it('a key deleted while its request ran: the organization is still charged and the record kept', async () => {
    const owner = await account();
    const key = await newKey(owner, {});
    const apiKey = (await store.deps.keys.get(key.hash))!;
    const ledger = store.deps.engine.ledger;
    const hold = await ledger.reserve(store.deps.engine.generationIds.next(Date.now()), apiKey, nanos(0.01));
    expect((await manage(owner.admin, 'DELETE', `/keys/${key.hash}`)).status).toBe(200);
    await writeRecord(hold, nanos(0.002));
    await store.converge();
    const org = await rawItem(itemKeys.organization(owner.tenant.orgId));
    expect(BigInt(org.total_usage)).toBe(nanos(0.002));
    expect(org.held).toBe(0);
    expect(await store.deps.engine.generations.get(hold.generationId)).toMatchObject({ id: hold.generationId, org_id: owner.tenant.orgId });
    // The key's item stays deleted (the aggregator does not bring it back).
    expect(await rawItem(itemKeys.apiKey(key.hash))).toBeUndefined();
  });

  it('a failed request releases its hold and charges nothing', async () => {
    const owner = await account();
    const key = await newKey(owner, {});
    const reply = await handleInference(httpEvent({ method: 'POST', path: CHAT, key: key.text, body: { ...chatBody('x'), model: 'simulator/error-500' } }), store.deps);
    expect(reply.statusCode).toBe(502);
    await store.quiesce();
    const org = await rawItem(itemKeys.organization(owner.tenant.orgId));
    expect(org.held).toBe(0);
    expect(org.total_usage).toBe(0);
    expect(BigInt(org.balance)).toBe(nanos(1000));
  });
});

describe('edge cases of the money path', () => {
  it('reserves and settles a request that costs nothing', async () => {
    const owner = await account();
    const key = (await store.deps.keys.get((await newKey(owner, {})).hash))!;
    const ledger = store.deps.engine.ledger;
    const hold = await ledger.reserve(store.deps.engine.generationIds.next(Date.now()), key, 0n);
    const record = generationRecord(hold.generationId, { org_id: hold.orgId, workspace_id: hold.workspaceId, key_hash: hold.keyHash, reserved: 0n, cost: { ...generationRecord('x').cost, total: 0n } });
    await store.deps.engine.pages.add({ record, claim: { kind: 'hold', amount: 0n } });
    await store.converge();
    expect((await ledger.release(hold)).outcome).toBe('already');
    expect((await ledger.release(await ledger.reserve(store.deps.engine.generationIds.next(Date.now()), key, 0n))).outcome).toBe('released');
    const org = await rawItem(itemKeys.organization(owner.tenant.orgId));
    expect(org.held).toBe(0);
    expect(org.total_usage ?? 0).toBe(0);
  });

  it('upgrades organizations, keys and workspaces stored before balances and meters existed', async () => {
    const owner = await account();
    const db = createDocumentClient({ endpoint: store.endpoint });
    const { UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
    // Strip the new attributes, as an item written by the previous version would lack them.
    await db.send(new UpdateCommand({ TableName: store.tableName, Key: itemKeys.organization(owner.tenant.orgId), UpdateExpression: 'REMOVE balance, held' }));
    const key = await newKey(owner, { limit: 5 });
    const meterAttrs = ['usage_total', 'usage_daily', 'usage_weekly', 'usage_monthly', 'byok_total', 'byok_daily', 'byok_weekly', 'byok_monthly', 'exp_total', 'exp_daily', 'exp_weekly', 'exp_monthly',
      'expb_total', 'expb_daily', 'expb_weekly', 'expb_monthly', 'period_daily', 'period_weekly', 'period_monthly', 'held', 'settings_version'];
    await db.send(new UpdateCommand({ TableName: store.tableName, Key: itemKeys.apiKey(key.hash), UpdateExpression: `REMOVE ${meterAttrs.join(', ')}` }));
    await db.send(new UpdateCommand({ TableName: store.tableName, Key: itemKeys.workspace(owner.tenant.orgId, owner.tenant.workspaceId), UpdateExpression: `REMOVE budgets, budget_version, ${meterAttrs.filter((name) => name !== 'settings_version').join(', ')}` }));
    db.destroy();
    // Read before any reservation stored its balance (a batch's check at creation): what it would be, not $0.
    const ledger = store.deps.engine.ledger;
    const plain = (await store.deps.keys.get((await newKey(owner, {})).hash))!;
    const workspace = await ledger.workspaceOf(owner.tenant.orgId, owner.tenant.workspaceId);
    expect(await ledger.refusalOf(plain, workspace, nanos(10))).toBeUndefined();
    expect(await ledger.refusalOf(plain, workspace, nanos(2000))).toMatchObject({ reason: 'insufficient_credits', remaining: nanos(1000) });

    const granted = await store.deps.credits.addCredits(owner.tenant.orgId, { id: 'g1', amount: nanos(1), note: null, by: 'test', created_at: new Date().toISOString() });
    expect(granted!.total_credits).toBe(nanos(1001));
    expect(BigInt((await rawItem(itemKeys.organization(owner.tenant.orgId))).balance)).toBe(nanos(1001));
    expect((await manage(owner.admin, 'PUT', `/workspaces/${owner.tenant.workspaceId}/budgets/monthly`, { limit_usd: 50 })).status).toBe(200);
    const reply = await chat(key.text);
    expect(reply.status).toBe(200);
    await store.quiesce();
    const keyItem = await rawItem(itemKeys.apiKey(key.hash));
    expect(BigInt(keyItem.usage_total)).toBe(nanos(reply.json.usage.cost));
    expect(keyItem.held).toBe(0);
  });
});

describe('reset windows', () => {
  const at = (iso: string) => store.setNow(new Date(iso));

  it('daily usage restarts at midnight UTC, weekly on Monday, monthly on the 1st; the daily limit with them', async () => {
    const text = 'reset me';
    const { cost, reserved } = await probe(text);
    // The key is made on the test's clock too: made on the real one, its meters would start in the real day,
    // and once that is later than the test's a Saturday's spend would belong to a day already over for them.
    at('2026-11-28T23:30:00Z'); // Saturday
    const owner = await account();
    // Room for one request a day: after it, what is left is below one reservation.
    const key = await newKey(owner, { limit: Number(reserved) / 1e9, limit_reset: 'daily' });
    const usage = async () => (await manage(owner.admin, 'GET', `/keys/${key.hash}`)).json.data as Json;
    try {
      expect((await chat(key.text, text)).status).toBe(200);
      const refused = await chat(key.text, text);
      expect(refused.status).toBe(402);
      expect(refused.json.error.message).toMatch(/daily limit .* resets at 2026-11-29T00:00:00.000Z/);
      expect(await usage()).toMatchObject({ usage: Number(cost) / 1e9, usage_daily: Number(cost) / 1e9, usage_weekly: Number(cost) / 1e9, usage_monthly: Number(cost) / 1e9 });

      at('2026-11-29T00:00:01Z'); // Sunday: new day, same week and month
      expect(await usage()).toMatchObject({ usage_daily: 0, usage_weekly: Number(cost) / 1e9, usage_monthly: Number(cost) / 1e9 });
      expect(nanos((await usage()).limit_remaining)).toBe(reserved);
      expect((await chat(key.text, text)).status).toBe(200);
      expect(nanos((await usage()).usage_weekly)).toBe(2n * cost);

      at('2026-11-30T08:00:00Z'); // Monday: new week
      expect(await usage()).toMatchObject({ usage_daily: 0, usage_weekly: 0 });
      expect(nanos((await usage()).usage_monthly)).toBe(2n * cost);
      expect((await chat(key.text, text)).status).toBe(200);

      at('2026-12-01T00:00:00Z'); // Tuesday the 1st: new month
      const month = await usage();
      expect(month).toMatchObject({ usage_daily: 0, usage_monthly: 0 });
      expect(nanos(month.usage_weekly)).toBe(cost);
      expect(nanos(month.usage)).toBe(3n * cost);
      expect((await chat(key.text, text)).status).toBe(200);
      const item = await rawItem(itemKeys.apiKey(key.hash));
      expect(item).toMatchObject({ period_daily: '2026-12-01', period_weekly: '2026-11-30', period_monthly: '2026-12-01', held: 0 });
      expect(BigInt(item.usage_weekly)).toBe(2n * cost);
    } finally {
      store.setNow(new Date());
    }
  });

  it('a limit lowered by PATCH applies to the next request, even from a stale copy of the key', async () => {
    const owner = await account();
    const key = await newKey(owner, {});
    const stale = (await store.deps.keys.get(key.hash))!;
    const patched = await manage(owner.admin, 'PATCH', `/keys/${key.hash}`, { limit: 0.000001 });
    expect(patched.status).toBe(200);
    // The ledger refuses in a domain error; the status is the error map's (at the HTTP edge).
    await expect(store.deps.engine.ledger.reserve('gen-stale-copy', stale, nanos(0.001)).catch((err: DomainError) => { throw httpErrorOf(err); })).rejects.toMatchObject({ status: 402 });
    expect((await chat(key.text)).status).toBe(402);
    expect((await manage(owner.admin, 'PATCH', `/keys/${key.hash}`, { limit: null })).status).toBe(200);
    expect((await chat(key.text)).status).toBe(200);
  });
});

describe('a 402 that says how to fix it', () => {
  it('a key with a $0.01 limit sending "Hello" without max_tokens learns how many tokens it can afford, and that many pass', async () => {
    const owner = await account();
    const key = await newKey(owner, { limit: 0.01 });
    const refused = await chat(key.text, 'Hello', { max_tokens: undefined });
    expect(refused.status).toBe(402);
    const { message, metadata } = refused.json.error;
    // The hold: the prompt's bound at $1 per million, plus 16,384 output tokens at $2 per million ($0.032768).
    expect(metadata).toMatchObject({ reason: 'key_limit', limit: '0.01', remaining: '0.01', requested_tokens: 16384 });
    const affordable = metadata.affordable_tokens as number;
    expect(nanos(0.01) - nanos(metadata.required) + 16384n * 2000n).toBeGreaterThanOrEqual(BigInt(affordable) * 2000n);
    expect(affordable).toBeGreaterThan(4900);
    expect(affordable).toBeLessThan(5000);
    expect(message).toBe(
      `This request requires more credits, or fewer max_tokens. You requested up to 16384 tokens, but can only afford ${affordable}. The key's total limit of $0.01 has $0.01 left. Lower max_tokens, or raise the key's limit.`,
    );
    // Exactly that many: one more is refused, naming the same number.
    const oneMore = await chat(key.text, 'Hello', { max_tokens: affordable + 1 });
    expect(oneMore.status).toBe(402);
    expect(oneMore.json.error.metadata).toMatchObject({ requested_tokens: affordable + 1, affordable_tokens: affordable });
    expect((await chat(key.text, 'Hello', { max_tokens: affordable })).status).toBe(200);
  });
});

describe('workspace budgets', () => {
  it('a budget refuses requests it cannot cover with a 402 naming it, and deleting it lifts that', async () => {
    const owner = await account();
    const created = await manage(owner.admin, 'POST', '/workspaces', { name: 'Research', slug: 'research' });
    expect(created.status).toBe(201);
    const workspaceId = created.json.data.id as string;
    const key = await newKey(owner, { workspace_id: workspaceId });
    expect((await chat(key.text)).status).toBe(200);

    const put = await manage(owner.admin, 'PUT', '/workspaces/research/budgets/weekly', { limit_usd: 0.00001 });
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({ data: { workspace_id: workspaceId, limit_usd: 0.00001, reset_interval: 'weekly' }, include_byok_in_budgets: false });
    expect(put.json.data.usage_usd).toBeGreaterThan(0);
    const refused = await chat(key.text);
    expect(refused.status).toBe(402);
    expect(refused.json.error.message).toMatch(/^This request requires more credits.* Workspace research's weekly budget of \$0.00001 has \$[0-9.]+ left; it resets at .*, or raise the workspace's budget\.$/);
    expect(refused.json.error.metadata).toMatchObject({ reason: 'workspace_budget', interval: 'weekly', workspace_id: workspaceId });

    const lifetime = await manage(owner.admin, 'PUT', `/workspaces/${workspaceId}/budgets/lifetime`, { limit_usd: 100, include_byok_in_budgets: true });
    expect(lifetime.json).toMatchObject({ data: { reset_interval: null, limit_usd: 100, resets_at: null }, include_byok_in_budgets: true });
    const list = await manage(owner.admin, 'GET', '/workspaces/research/budgets');
    expect((list.json.data as Json[]).map((budget) => budget.reset_interval)).toEqual(['weekly', null]);

    expect((await manage(owner.admin, 'DELETE', '/workspaces/research/budgets/weekly')).json).toEqual({ deleted: true });
    expect((await manage(owner.admin, 'DELETE', '/workspaces/research/budgets/weekly')).json).toEqual({ deleted: true });
    expect((await manage(owner.admin, 'GET', '/workspaces/research/budgets/weekly')).status).toBe(404);
    expect((await chat(key.text)).status).toBe(200);
    // The budget counts only this workspace: the default workspace's keys are not affected by it.
    expect((await manage(owner.admin, 'GET', '/workspaces/research/budgets/fortnightly')).status).toBe(400);
    expect((await manage(owner.admin, 'PUT', '/workspaces/research/budgets/daily', { limit_usd: -1 })).status).toBe(400);
    expect((await manage(owner.admin, 'PUT', '/workspaces/nope/budgets/daily', { limit_usd: 1 })).status).toBe(404);
  });
});

describe('responses API', () => {
  it('charges /responses the same way and reports it', async () => {
    const owner = await account();
    const key = await newKey(owner, {});
    const reply = await handleInference(httpEvent({ method: 'POST', path: RESPONSES, key: key.text, body: { model: 'simulator/echo', input: 'hello responses', max_output_tokens: 20 } }), store.deps);
    expect(reply.statusCode).toBe(200);
    const json = JSON.parse(reply.body as string) as Json;
    const generation = await manage(owner.admin, 'GET', '/generation', undefined, { id: json.id as string });
    expect(nanos(generation.json.data.total_cost)).toBe(nanos(json.usage.cost));
    await store.converge();
    expect(nanos((await manage(owner.admin, 'GET', '/credits')).json.data.total_usage)).toBe(nanos(json.usage.cost));
  });
});
