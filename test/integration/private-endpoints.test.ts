// Private endpoints over DynamoDB Local, the local KMS and a real HTTP upstream (an OpenAI-compatible server
// that records who called it), through the real handlers: the states and their transitions (409 for the
// illegal ones), validation by a live call, routing of the workspace's requests to its active endpoint
// first with its own key and prices (billed to that key, as BYOK), other organizations kept out, and the key
// released only for the endpoint's host.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startSimulator, type Simulator } from '../../bin/simulator/server.js';
import { createTestStore, type TestStore } from '../support/store.js';
import { createTenant } from '../support/tenants.js';
import { chatCompletion, manage, type Json } from '../support/handler-calls.js';
import type { GatewayDeps } from '../../lambdas/app/deps.js';

let sim: Simulator;
let store: TestStore;
let deps: GatewayDeps;
let admin: string;
let user: string;
let workspaceId: string;
let orgId: string;
let otherAdmin: string;
let otherUser: string;
let upstream: Server;
let upstreamUrl: string;
const calls: Array<{ authorization: string | undefined; model: string }> = [];
let refuseWith: number | undefined;

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
  store = await createTestStore({ SIMULATOR_URL: sim.url, GATEWAY_PRIVATE_ENDPOINT_PRIVATE_HOSTS: 'allow' });
  deps = store.deps;
  const tenant = await createTenant(deps);
  workspaceId = tenant.workspaceId;
  orgId = tenant.orgId;
  admin = (await tenant.addKey('management')).text;
  user = (await tenant.addKey('standard')).text;
  const other = await createTenant(deps, 'organization', 'Other');
  otherAdmin = (await other.addKey('management')).text;
  otherUser = (await other.addKey('standard')).text;
  // The workspace's own deployment: an OpenAI-compatible chat API.
  upstream = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => { body += chunk.toString(); });
    req.on('end', () => {
      const parsed = JSON.parse(body) as { model: string; messages: Array<{ content: string }> };
      calls.push({ authorization: req.headers.authorization, model: parsed.model });
      if (refuseWith) {
        res.writeHead(refuseWith, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'no', type: 'invalid_request_error' } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
        id: 'chatcmpl-private', object: 'chat.completion', created: 1, model: parsed.model,
        choices: [{ index: 0, message: { role: 'assistant', content: 'from the private deployment' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      }));
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  await store?.drop();
  await sim?.close();
  upstream?.close();
});

const pe = (method: string, path: string, body?: unknown, key = admin, query?: Record<string, string>) => manage(deps, key, method, `/private-endpoints${path}`, body, query);
const draftBody = (extra: Json = {}) => ({
  model_permaslug: 'simulator/echo', provider_slug: 'simulator', upstream_model_id: 'my-finetune', base_url: upstreamUrl, api_key: 'sk-private-0123456789',
  pricing: { prompt: '0.000002', completion: '0.000004' }, ...extra,
});

describe('private endpoint states', () => {
  it('goes draft → validated → active → disabled → active, refusing illegal transitions with a 409', async () => {
    const created = await pe('POST', '', draftBody());
    expect(created.status).toBe(201);
    expect(created.json.data).toMatchObject({ model_permaslug: 'simulator/echo', model_slug: 'simulator/echo', status: 'draft', declared_region: null, declared_zdr: null });
    const id = created.json.data.id as string;
    expect(JSON.stringify(created.json)).not.toContain('sk-private');

    const early = await pe('POST', `/${id}/activate`);
    expect([early.status, early.json.error.message]).toEqual([409, expect.stringMatching(/never validated.*not_validated/)]);
    expect((await pe('POST', `/${id}/validate`, { workspace_id: 'some-other-workspace' })).status).toBe(400);

    const validated = await pe('POST', `/${id}/validate`, { workspace_id: workspaceId });
    expect(validated.json.data).toEqual({
      passed: true,
      checks: [
        { name: 'model_found', passed: true }, { name: 'provider_found', passed: true }, { name: 'auth_ok', passed: true, upstream_status: 200 },
        { name: 'upstream_ok', passed: true, upstream_status: 200, upstream_message: null }, { name: 'usage_reported', passed: true },
      ],
    });
    expect(calls.at(-1)).toEqual({ authorization: 'Bearer sk-private-0123456789', model: 'my-finetune' });

    // A change after validation makes it stale: activation refuses it until it is validated again.
    const patched = await pe('PATCH', `/${id}`, { upstream_model_id: 'my-finetune-v2' });
    expect(patched.json.data).toMatchObject({ upstream_model_id: 'my-finetune-v2', validation: { passed: true, stale: true } });
    const stale = await pe('POST', `/${id}/activate`);
    expect([stale.status, stale.json.error.message]).toEqual([409, expect.stringMatching(/validation_stale/)]);
    // Only the data-policy declaration: the upstream is as validated, so the validation holds.
    expect((await pe('PATCH', `/${id}`, { upstream_model_id: 'my-finetune', declared_zdr: true })).json.data.validation).toMatchObject({ passed: true, stale: false });
    expect((await pe('PATCH', `/${id}`, { declared_zdr: null })).json.data).toMatchObject({ upstream_model_id: 'my-finetune', declared_zdr: null });
    // A new key makes it stale too.
    const unsendable = await pe('PATCH', `/${id}`, { api_key: 'a\u0000b' });
    expect([unsendable.status, unsendable.json.error.message]).toEqual([400, expect.stringContaining('body.api_key: must be printable ASCII')]);
    expect((await pe('PATCH', `/${id}`, { api_key: 'sk-private-rotated-0123456789' })).json.data.validation.stale).toBe(true);
    await pe('POST', `/${id}/validate`, { workspace_id: workspaceId });
    expect(calls.at(-1)!.authorization).toBe('Bearer sk-private-rotated-0123456789');
    await pe('PATCH', `/${id}`, { api_key: 'sk-private-0123456789' });
    await pe('POST', `/${id}/validate`, { workspace_id: workspaceId });
    for (const reply of [await pe('GET', `/${id}`), await pe('GET', ''), validated]) expect(JSON.stringify(reply.json)).not.toContain('sk-private');

    const active = await pe('POST', `/${id}/activate`);
    expect(active.json.data.status).toBe('active');
    for (const [method, path, body] of [['POST', `/${id}/activate`], ['POST', `/${id}/enable`], ['PATCH', `/${id}`, { upstream_model_id: 'x' }], ['POST', `/${id}/validate`, { workspace_id: workspaceId }]] as const) {
      expect([method, path, (await pe(method, path, body)).status]).toEqual([method, path, 409]);
    }
    expect((await pe('POST', `/${id}/disable`)).json.data.status).toBe('disabled');
    expect((await pe('POST', `/${id}/disable`)).status).toBe(409);
    expect((await pe('POST', `/${id}/enable`)).json.data.status).toBe('active');
    const priced = await pe('PUT', `/${id}/pricing`, { pricing: { prompt: '0.000003', completion: '0.000006' } });
    expect(priced.json.data).toMatchObject({ pricing: { prompt: '0.000003', completion: '0.000006' }, status: 'active' });
    expect((await pe('DELETE', `/${id}`, undefined, admin, { draft_only: 'true' })).status).toBe(409);
    expect((await pe('GET', '')).json.data.map((entry: Json) => [entry.id, entry.status])).toContainEqual([id, 'active']);
    expect((await pe('DELETE', `/${id}`)).json).toEqual({ data: { id } });
    expect((await pe('GET', `/${id}`)).status).toBe(404);
  });

  it('refuses bad input with a 400 or 404 naming it, a failed validation with a 422 that keeps the draft, and a host move without the key', async () => {
    expect((await pe('POST', '', draftBody({ model_permaslug: 'nobody/none' }))).json.error.message).toMatch(/model_not_found/);
    expect((await pe('POST', '', draftBody({ provider_slug: 'nobody' }))).json.error.message).toMatch(/provider_not_found/);
    expect((await pe('POST', '', draftBody({ pricing: { prompt: '-1', completion: '0' } }))).json.error.message).toMatch(/body\.pricing\.prompt/);
    expect((await pe('POST', '', draftBody({ pricing: { prompt: '99999999999999999999999999999', completion: '0' } }))).json.error.message).toBe('Invalid body.pricing.prompt: must be at most 1000 USD per token');
    for (const text of [' 1 ', '-0', '+1', '1e-6', '007', '.5', '1.']) {
      expect((await pe('POST', '', draftBody({ pricing: { prompt: text, completion: '0' } }))).json.error.message).toMatch(/body\.pricing\.prompt: must be a plain decimal USD amount per token, like "0\.000002"/);
    }
    expect((await pe('POST', '', draftBody({ base_url: 'ftp://x' }))).json.error.message).toMatch(/body\.base_url/);
    const onAws = store.depsWith({ GATEWAY_PRIVATE_ENDPOINT_PRIVATE_HOSTS: '' });
    const refused = await manage(onAws, admin, 'POST', '/private-endpoints', draftBody());
    expect([refused.status, refused.json.error.message]).toEqual([400, expect.stringMatching(/127\.0\.0\.1 is a private or loopback address/)]);
    // A private host met when the endpoint is called (here one stored where private hosts were allowed):
    // the validation says why, not just that the call failed. In a workspace of its own (its vault's trail).
    const aside = await manage(deps, admin, 'POST', '/workspaces', { name: 'Loopback', slug: 'loopback' });
    const stored = await pe('POST', '', draftBody({ base_url: upstreamUrl.replace('127.0.0.1', 'localhost.'), workspace_id: aside.json.data.id }));
    const validated = await manage(onAws, admin, 'POST', `/private-endpoints/${stored.json.data.id}/validate`, { workspace_id: aside.json.data.id });
    expect(validated.json.data.checks).toContainEqual(expect.objectContaining({ name: 'upstream_ok', passed: false, upstream_message: 'localhost. is a private or loopback address' }));
    // Nothing listens at the base URL: no status is made up, and the key is not reported as checked.
    const closed = await pe('POST', '', draftBody({ base_url: 'http://127.0.0.1:1/v1', workspace_id: aside.json.data.id }));
    const unreachable = await manage(deps, admin, 'POST', `/private-endpoints/${closed.json.data.id}/validate`, { workspace_id: aside.json.data.id });
    const checks = unreachable.json.data.checks as Array<Record<string, unknown>>;
    expect(checks.find((check) => check.name === 'auth_ok')).toEqual({ name: 'auth_ok', passed: false, reason: 'upstream_unreachable', upstream_message: 'not checked: the upstream did not answer' });
    expect(checks.find((check) => check.name === 'upstream_ok')).toEqual({ name: 'upstream_ok', passed: false, reason: 'upstream_unreachable', upstream_message: 'upstream could not be reached' });

    refuseWith = 401;
    try {
      const failed = await pe('POST', '', draftBody({ activate: { workspace_id: workspaceId } }));
      expect(failed.status).toBe(422);
      expect(failed.json.data.endpoint.status).toBe('draft');
      expect(failed.json.data.validation.checks).toContainEqual(expect.objectContaining({ name: 'auth_ok', passed: false, upstream_status: 401 }));
      const kept = await pe('GET', `/${failed.json.data.endpoint.id}`);
      expect(kept.json.data).toMatchObject({ status: 'draft', validation: { passed: false, stale: false } });
      const moved = await pe('PATCH', `/${failed.json.data.endpoint.id}`, { upstream_model_id: 'x', base_url: 'http://localhost:9/v1' });
      expect([moved.status, moved.json.error.message]).toEqual([400, expect.stringMatching(/body\.api_key: the base URL moves from 127\.0\.0\.1 to localhost/)]);
      await pe('DELETE', `/${failed.json.data.endpoint.id}`);
    } finally {
      refuseWith = undefined;
    }
  });
});

describe('routing to an active private endpoint', () => {
  let id: string;
  beforeAll(async () => {
    const created = await pe('POST', '', draftBody({ activate: { workspace_id: workspaceId } }));
    expect(created.json.data.status).toBe('active');
    id = created.json.data.id as string;
  });

  it('serves the workspace\'s requests first, with its own key and upstream model, recorded at its prices as BYOK', async () => {
    const before = calls.length;
    const reply = await chatCompletion(deps, user, { model: 'simulator/echo', messages: [{ role: 'user', content: 'hello' }] });
    expect(reply.status).toBe(200);
    expect(reply.json.choices[0].message.content).toBe('from the private deployment');
    expect(calls.slice(before)).toEqual([{ authorization: 'Bearer sk-private-0123456789', model: 'my-finetune' }]);
    await deps.engine.pages.flush();
    const record = (await store.records()).find((entry) => entry.id === reply.json.id)!;
    // 10 prompt tokens at $0.000002 and 5 completion tokens at $0.000004: billed to the endpoint's own key.
    expect(record).toMatchObject({ provider: `private:${id}`, upstream_model: 'my-finetune', is_byok: true });
    expect(record.cost.total).toBe(40_000n);
  });

  it('leaves other workspaces\' and organizations\' requests and management keys out', async () => {
    const before = calls.length;
    const elsewhere = await manage(deps, admin, 'POST', '/workspaces', { name: 'Elsewhere', slug: 'elsewhere' });
    const otherWorkspaceKey = await manage(deps, admin, 'POST', '/keys', { name: 'elsewhere', workspace_id: elsewhere.json.data.id });
    expect(otherWorkspaceKey.status).toBe(201);
    expect((await chatCompletion(deps, otherWorkspaceKey.json.key as string, { model: 'simulator/echo', messages: [{ role: 'user', content: 'not here' }] })).json.choices[0].message.content).toBe('not here');
    expect(calls.length).toBe(before);
    const reply = await chatCompletion(deps, otherUser, { model: 'simulator/echo', messages: [{ role: 'user', content: 'public' }] });
    expect(reply.status).toBe(200);
    expect(reply.json.choices[0].message.content).toBe('public');
    expect(calls.length).toBe(before);
    for (const [method, path, body] of [
      ['GET', `/${id}`], ['PATCH', `/${id}`, { upstream_model_id: 'x' }], ['DELETE', `/${id}`], ['POST', `/${id}/validate`, { workspace_id: workspaceId }],
      ['POST', `/${id}/activate`], ['POST', `/${id}/disable`], ['POST', `/${id}/enable`], ['PUT', `/${id}/pricing`, { pricing: { prompt: '0', completion: '0' } }],
    ] as const) {
      expect([method, path, (await pe(method, path, body, otherAdmin)).status]).toEqual([method, path, 404]);
    }
    expect((await pe('GET', '', undefined, otherAdmin)).json.data).toEqual([]);
    expect((await pe('GET', '', undefined, user)).status).toBe(403);
  });

  it('falls back to the public endpoints when the private one fails, and stops routing to it once disabled', async () => {
    refuseWith = 503;
    const tried = calls.length;
    try {
      const reply = await chatCompletion(deps, user, { model: 'simulator/echo', messages: [{ role: 'user', content: 'fallback' }] });
      expect(reply.status).toBe(200);
      expect(reply.json.choices[0].message.content).toBe('fallback');
      // The private endpoint was tried first; the public one served, charged to credits.
      expect(calls.length).toBeGreaterThan(tried);
      await deps.engine.pages.flush();
      expect((await store.records()).find((entry) => entry.id === reply.json.id)).toMatchObject({ provider: 'simulator', upstream_model: 'echo', is_byok: false });
    } finally {
      refuseWith = undefined;
    }
    await pe('POST', `/${id}/disable`);
    const before = calls.length;
    const reply = await chatCompletion(deps, user, { model: 'simulator/echo', messages: [{ role: 'user', content: 'public again' }] });
    expect(reply.json.choices[0].message.content).toBe('public again');
    expect(calls.length).toBe(before);
    await pe('POST', `/${id}/enable`);
    expect((await chatCompletion(deps, user, { model: 'simulator/echo', messages: [{ role: 'user', content: 'private again' }] })).json.choices[0].message.content).toBe('from the private deployment');
  });

  it('serves an organization without credits through its private endpoint alone (no fallback to credits), and a 402 once it has none', async () => {
    const broke = await createTenant(deps, 'organization', 'No credits', 0n);
    const brokeAdmin = (await broke.addKey('management')).text;
    const brokeUser = (await broke.addKey('standard')).text;
    const created = await pe('POST', '', draftBody({ activate: { workspace_id: broke.workspaceId } }), brokeAdmin);
    expect(created.json.data.status).toBe('active');
    const served = await chatCompletion(deps, brokeUser, { model: 'simulator/echo', messages: [{ role: 'user', content: 'no credits' }] });
    expect(served.status).toBe(200);
    expect(served.json.choices[0].message.content).toBe('from the private deployment');
    // Failing, it has nothing to fall back to that credits would pay for: the public endpoint is not tried.
    refuseWith = 503;
    try {
      const failed = await chatCompletion(deps, brokeUser, { model: 'simulator/echo', messages: [{ role: 'user', content: 'no fallback' }] });
      expect(failed.status).toBe(502);
      expect(failed.json.choices).toBeUndefined();
    } finally {
      refuseWith = undefined;
    }
    // A limit that counts BYOK spend cannot be kept by a hold of nothing: its 402 stands.
    const counted = await manage(deps, brokeAdmin, 'POST', '/keys', { name: 'byok counted', limit: 1, include_byok_in_limit: true });
    const countedReply = await chatCompletion(deps, counted.json.key as string, { model: 'simulator/echo', messages: [{ role: 'user', content: 'counted' }] });
    expect(countedReply.status).toBe(402);
    expect(countedReply.json.error.metadata.reason).toBe('insufficient_credits');
    await pe('POST', `/${created.json.data.id as string}/disable`, undefined, brokeAdmin);
    const refused = await chatCompletion(deps, brokeUser, { model: 'simulator/echo', messages: [{ role: 'user', content: 'public only' }] });
    expect(refused.status).toBe(402);
    await deps.engine.pages.flush();
    expect((await store.records(broke.orgId)).filter((record) => !record.is_byok)).toEqual([]);
  });

  it('releases its key only to its own host, audited', async () => {
    const trail = await deps.vault!.auditTrail({ orgId, workspaceId, purpose: 'private-endpoint' });
    // Released for validations and requests (kept a minute per process between releases), always to 127.0.0.1.
    expect(trail.length).toBeGreaterThanOrEqual(3);
    expect(new Set(trail.map((entry) => `${entry.action} ${entry.host} ${entry.requester.split(':')[0]}`))).toEqual(new Set(['release 127.0.0.1 private-endpoint']));
  });
});
