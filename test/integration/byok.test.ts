// BYOK end to end over DynamoDB Local, the local KMS and a fake provider over HTTP: the routes (never a key
// in clear, sealed at rest), the order of credentials in routing, and the accounting of BYOK usage.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { itemKeys } from '../../lambdas/platform/dynamo/item-keys.js';
import { installAwsLambdaShim } from '../../bin/local/awslambda-shim.js';
import { createDocumentClient } from '../../lambdas/platform/dynamo/client.js';
import type { CatalogFile } from '../../lambdas/catalog/catalog-config.js';
import { usdToNanos } from '../../lambdas/platform/money.js';
import { ShutdownSwitch } from '../../lambdas/platform/shutdown.js';
import { createTestStore, type TestStore } from '../support/store.js';
import { createTenant, type Tenant } from '../support/tenants.js';
import { httpEvent } from '../support/events.js';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';

installAwsLambdaShim();
const { handleManagement } = await import('../../lambdas/handlers/management.js');
const { handleInference } = await import('../../lambdas/handlers/inference.js');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

const GATEWAY_KEY = 'gateway-own-key-0000';
let upstream: FakeUpstream;
let store: TestStore;
let catalogDir: string;

function completion(text: string) {
  return {
    id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'acme-1',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
  // The fake provider answers with the key it was called with; a key named "broken" fails with 401, one
  // named "hang" never answers.
  upstream.reply((request) => {
    const auth = String(request.headers.authorization ?? '');
    if (auth.includes('hang')) return { hang: true };
    if (auth.includes('broken')) return { status: 401, json: { error: { message: 'invalid api key' } } };
    return { json: completion(auth.replace('Bearer ', '')) };
  });
  catalogDir = mkdtempSync(join(tmpdir(), 'gateway-byok-'));
  const catalog: CatalogFile = {
    models: ['acme/one', 'acme/two'].map((id) => ({
      id,
      endpoints: [{
        provider: 'acme', adapter: 'openai-chat' as const, base_url: upstream.url, credential: 'ACME_API_KEY', upstream_model: 'acme-1',
        pricing: { prompt: '0.000001', completion: '0.000002' }, context_length: 8192,
      }],
    })),
  };
  writeFileSync(join(catalogDir, 'catalog.json'), JSON.stringify(catalog));
  store = await createTestStore({ GATEWAY_CATALOG_FILE: join(catalogDir, 'catalog.json'), ACME_API_KEY: GATEWAY_KEY });
});
afterAll(async () => {
  await store.drop();
  await upstream.close();
  rmSync(catalogDir, { recursive: true, force: true });
});

async function manage(key: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Json }> {
  const reply = await handleManagement(httpEvent({ method, path: `/api/v1${path}`, key, ...(body === undefined ? {} : { body }) }), store.deps);
  return { status: reply.statusCode ?? 200, json: JSON.parse(String(reply.body)) as Json };
}

/** A chat completion, then its record applied to the meters (as the aggregator does within a second). */
async function chat(key: string, model = 'acme/one'): Promise<{ status: number; json: Json }> {
  const reply = await handleInference(httpEvent({ method: 'POST', path: '/api/v1/chat/completions', key, body: { model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 } }), store.deps);
  await store.converge();
  return { status: reply.statusCode, json: JSON.parse(reply.body as string) as Json };
}

interface Account { tenant: Tenant; admin: string; key: string; keyHash: string }

async function account(): Promise<Account> {
  const tenant = await createTenant(store.deps, 'organization', 'BYOK Co');
  const created = (await tenant.addKey('standard'));
  return { tenant, admin: (await tenant.addKey('management')).text, key: created.text, keyHash: created.key.hash };
}

describe('BYOK routes', () => {
  it('stores credentials sealed, shows only a masked label, rotates and deletes them', async () => {
    const owner = await account();
    const secretKey = 'sk-acme-SECRETMATERIAL-1234';
    const created = await manage(owner.admin, 'POST', '/byok', { provider: 'acme', key: secretKey, name: 'prod' });
    expect(created.status).toBe(201);
    expect(created.json.data).toMatchObject({ provider: 'acme', name: 'prod', label: 'sk-…1234', disabled: false, is_fallback: false, is_required: false, is_byok_only: false, sort_order: 0, workspace_id: null });
    expect(JSON.stringify(created.json)).not.toContain('SECRETMATERIAL');
    const id = created.json.data.id as string;
    expect((await manage(owner.admin, 'GET', `/byok/${id}`)).json.data.label).toBe('sk-…1234');
    const listed = await manage(owner.admin, 'GET', '/byok');
    expect(listed.json).toMatchObject({ total_count: 1, data: [{ id }] });

    const rotated = await manage(owner.admin, 'PATCH', `/byok/${id}`, { key: 'sk-acme-NEWMATERIAL-9876', disabled: true });
    expect(rotated.json.data).toMatchObject({ label: 'sk-…9876', disabled: true });

    const db = createDocumentClient({ endpoint: store.endpoint });
    const scan = JSON.stringify((await db.send(new ScanCommand({ TableName: store.tableName }))).Items);
    db.destroy();
    expect(scan).not.toContain('SECRETMATERIAL');
    expect(scan).not.toContain('NEWMATERIAL');

    expect((await manage(owner.admin, 'DELETE', `/byok/${id}`)).json).toEqual({ deleted: true });
    expect((await manage(owner.admin, 'GET', `/byok/${id}`)).status).toBe(404);
  });

  it('refuses unknown providers, bad flag combinations, foreign key hashes, and regular keys', async () => {
    const owner = await account();
    const other = await account();
    expect((await manage(owner.admin, 'POST', '/byok', { provider: 'nope', key: 'k' })).json.error.message).toMatch(/not a provider of this gateway's catalog \(acme/);
    expect((await manage(owner.admin, 'POST', '/byok', { provider: 'acme', key: 'k', is_fallback: true, is_byok_only: true })).status).toBe(400);
    expect((await manage(owner.admin, 'POST', '/byok', { provider: 'acme', key: 'k', allowed_api_key_hashes: [other.keyHash] })).status).toBe(400);
    expect((await manage(owner.admin, 'POST', '/byok', { provider: 'acme', key: '' })).status).toBe(400);
    // A key that cannot go in an HTTP header would fail every request made with it (node:http refuses to send it).
    for (const key of ['a\u0000b', 'sk-key\n', 'sk key', 'sk-caf\u00e9']) {
      const refused = await manage(owner.admin, 'POST', '/byok', { provider: 'acme', key });
      expect([refused.status, refused.json.error.message]).toEqual([400, expect.stringContaining('body.key: must be printable ASCII without spaces or line breaks')]);
    }
    expect((await manage(owner.key, 'GET', '/byok')).status).toBe(403);
    const created = await manage(owner.admin, 'POST', '/byok', { provider: 'acme', key: 'k-1234567890' });
    expect((await manage(other.admin, 'GET', `/byok/${created.json.data.id}`)).status).toBe(404);
  });
});

describe('BYOK in routing and accounting', () => {
  it('calls the provider with the customer\'s key, marks is_byok and counts BYOK usage instead of credits', async () => {
    const owner = await account();
    await manage(owner.admin, 'POST', '/byok', { provider: 'acme', key: 'customer-key-aaaa' });
    const reply = await chat(owner.key);
    expect(reply.status).toBe(200);
    expect(reply.json.choices[0].message.content).toBe('customer-key-aaaa');
    expect(reply.json.usage.is_byok).toBe(true);
    expect(reply.json.usage.cost_details.upstream_inference_cost).toBe(reply.json.usage.cost);
    const key = await manage(owner.admin, 'GET', `/keys/${owner.keyHash}`);
    expect(usdToNanos(key.json.data.byok_usage)).toBe(usdToNanos(reply.json.usage.cost));
    expect(key.json.data.usage).toBe(0);
    expect((await manage(owner.admin, 'GET', '/credits')).json.data.total_usage).toBe(0);
    const record = await store.deps.engine.generations.get(reply.json.id as string);
    expect(record).toMatchObject({ is_byok: true, provider: 'acme' });
  });

  it('charges a request abandoned while the customer\'s key was in use to BYOK usage, not credits', async () => {
    const owner = await account();
    await manage(owner.admin, 'POST', '/byok', { provider: 'acme', key: 'hang-key-cccc' });
    upstream.received.length = 0;
    const shutdown = new ShutdownSwitch();
    store.deps.engine.shutdown = shutdown;
    try {
      const pending = handleInference(httpEvent({ method: 'POST', path: '/api/v1/chat/completions', key: owner.key, body: { model: 'acme/one', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 } }), store.deps);
      const deadline = Date.now() + 5000;
      while (upstream.received.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(upstream.received.map((request) => request.headers.authorization)).toEqual(['Bearer hang-key-cccc']);
      shutdown.trigger();
      const reply = await pending;
      expect(reply.statusCode).toBe(503);
      // The customer's provider read the prompt: an estimate of it is their BYOK usage, credits untouched.
      const record = await store.deps.engine.generations.get(reply.headers['x-generation-id']!);
      expect(record).toMatchObject({ status: 'cancelled', is_byok: true, usage_estimated: true, usage: { output_tokens: 0 } });
      expect(record!.cost.total).toBeGreaterThan(0n);
      await store.converge();
      const key = await manage(owner.admin, 'GET', `/keys/${owner.keyHash}`);
      expect(usdToNanos(key.json.data.byok_usage)).toBe(record!.cost.total);
      expect(key.json.data.usage).toBe(0);
      expect((await manage(owner.admin, 'GET', '/credits')).json.data.total_usage).toBe(0);
    } finally {
      store.deps.engine.shutdown = new ShutdownSwitch();
    }
  });

  it('tries non-fallback credentials in sort order, then the gateway\'s key, then fallback credentials', async () => {
    const owner = await account();
    await manage(owner.admin, 'POST', '/byok', { provider: 'acme', key: 'broken-first' });
    await manage(owner.admin, 'POST', '/byok', { provider: 'acme', key: 'broken-second' });
    const fallback = await manage(owner.admin, 'POST', '/byok', { provider: 'acme', key: 'fallback-key-zzzz', is_fallback: true });
    upstream.received.length = 0;
    const reply = await chat(owner.key);
    // A failing customer key falls through to the next credential, then to the gateway's own key.
    expect(reply.status).toBe(200);
    expect(reply.json.usage.is_byok).toBe(false);
    expect(upstream.received.map((request) => request.headers.authorization)).toEqual(['Bearer broken-first', 'Bearer broken-second', `Bearer ${GATEWAY_KEY}`]);
    await manage(owner.admin, 'DELETE', `/byok/${fallback.json.data.id}`);
  });

  it('uses the gateway\'s key before fallback credentials, and never with is_byok_only', async () => {
    const owner = await account();
    await manage(owner.admin, 'POST', '/byok', { provider: 'acme', key: 'fallback-key-zzzz', is_fallback: true });
    expect((await chat(owner.key)).json.choices[0].message.content).toBe(GATEWAY_KEY);
    const only = await manage(owner.admin, 'POST', '/byok', { provider: 'acme', key: 'only-key-yyyy', is_byok_only: true, allowed_models: ['acme/two'] });
    // is_byok_only removes the gateway's own key for every model of the provider: acme/one falls to the fallback credential.
    expect((await chat(owner.key, 'acme/one')).json.choices[0].message.content).toBe('fallback-key-zzzz');
    expect((await chat(owner.key, 'acme/two')).json.choices[0].message.content).toBe('only-key-yyyy');
    await manage(owner.admin, 'PATCH', `/byok/${only.json.data.id}`, { disabled: true });
    expect((await chat(owner.key, 'acme/two')).json.choices[0].message.content).toBe(GATEWAY_KEY);
  });

  it('counts BYOK spend against a key\'s limit only with include_byok_in_limit', async () => {
    const owner = await account();
    await manage(owner.admin, 'POST', '/byok', { provider: 'acme', key: 'customer-key-bbbb', is_byok_only: true });
    const counted = await manage(owner.admin, 'POST', '/keys', { name: 'counted', limit: 0.00001, include_byok_in_limit: true });
    const free = await manage(owner.admin, 'POST', '/keys', { name: 'not counted', limit: 0.00001 });
    // Served only with the customer's key, a request holds nothing; its cost ($0.00002) lands in byok_usage.
    expect((await chat(counted.json.key as string)).status).toBe(200);
    const refused = await chat(counted.json.key as string);
    expect(refused.status).toBe(402);
    expect(refused.json.error.metadata.reason).toBe('key_limit');
    for (let i = 0; i < 3; i += 1) expect((await chat(free.json.key as string)).status).toBe(200);
    const record = await manage(owner.admin, 'GET', `/keys/${free.json.data.hash}`);
    expect(record.json.data).toMatchObject({ usage: 0, byok_usage: 0.00006, limit_remaining: 0.00001 });
    // Only the key whose limit counts BYOK spend checks it before the provider call (an exact hold of nothing);
    // the other key's requests held nothing at all, with no round trip, and their records say so.
    const claims = (await store.entries(owner.tenant.orgId)).map((entry) => [entry.record.key_hash, entry.record.status, entry.claim.kind]);
    expect(claims.filter(([hash]) => hash === counted.json.data.hash)).toEqual([[counted.json.data.hash, 'completed', 'hold']]);
    expect(claims.filter(([hash]) => hash === free.json.data.hash)).toEqual(Array.from({ length: 3 }, () => [free.json.data.hash, 'completed', 'none']));
  });

  it('refuses a request that holds nothing when the organization is in debt, as the exact check of nothing does', async () => {
    const owner = await account();
    await manage(owner.admin, 'POST', '/byok', { provider: 'acme', key: 'customer-key-cccc', is_byok_only: true });
    // Records charged past their holds can leave a balance below zero.
    const db = createDocumentClient({ endpoint: store.endpoint });
    await db.send(new UpdateCommand({ TableName: store.tableName, Key: itemKeys.organization(owner.tenant.orgId), UpdateExpression: 'SET balance = :debt', ExpressionAttributeValues: { ':debt': -1000 } }));
    const refused = await chat(owner.key);
    expect(refused.status).toBe(402);
    expect(refused.json.error.message).toMatch(/credits/i);
    expect(await store.entries(owner.tenant.orgId)).toEqual([]);
  });

  it('applies a credential only to the keys, models and workspaces it names', async () => {
    const owner = await account();
    const second = await owner.tenant.addKey('standard');
    await manage(owner.admin, 'POST', '/byok', { provider: 'acme', key: 'scoped-key-xxxx', allowed_api_key_hashes: [second.key.hash], allowed_models: ['acme/one'] });
    expect((await chat(owner.key)).json.choices[0].message.content).toBe(GATEWAY_KEY);
    expect((await chat(second.text)).json.choices[0].message.content).toBe('scoped-key-xxxx');
    expect((await chat(second.text, 'acme/two')).json.choices[0].message.content).toBe(GATEWAY_KEY);
  });
});
