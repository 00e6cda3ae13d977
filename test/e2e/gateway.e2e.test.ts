// The gateway as `npm start` runs it, driven over HTTP by the official @openrouter/sdk client.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:net';
import { OpenRouter } from '@openrouter/sdk';
import { VaultSecretListResponse$inboundSchema, VaultSecretResponse$inboundSchema } from '@openrouter/sdk/models';
import {
  BadRequestResponseError, ForbiddenResponseError, InternLifecycleError, NotFoundResponseError, OpenRouterError, UnauthorizedResponseError,
} from '@openrouter/sdk/models/errors';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';
import { generateKeyText } from '../../lambdas/keys/key-format.js';

const ADMIN_KEY = generateKeyText();
let gateway: GatewayProcess;
let admin: OpenRouter;

beforeAll(async () => {
  gateway = await startGatewayProcess({ GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_INITIAL_CREDITS: '25' });
  admin = new OpenRouter({ apiKey: ADMIN_KEY, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
}, 150_000);

afterAll(async () => {
  await gateway?.stop();
});

describe('npm start', () => {
  it('answers /health and serves the OpenAPI document', async () => {
    const health = await fetch(`${gateway.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok', parts: { store: { status: 'ok' }, aggregator: { status: 'ok' }, kms: { status: 'ok' }, simulator: { status: 'ok' }, batches: { status: 'ok' } } });
    const doc = await (await fetch(`${gateway.baseUrl}/openapi.json`)).json() as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths['/api/v1/keys/{hash}'] ?? {}).sort()).toEqual(['delete', 'get', 'patch']);
  });

  it('answers a request without a key with the 401 envelope', async () => {
    const reply = await fetch(`${gateway.baseUrl}/keys`);
    expect(reply.status).toBe(401);
    expect(reply.headers.get('content-type')).toContain('application/json');
    expect(await reply.json()).toEqual({ error: { code: 401, message: 'Missing Authentication header' } });
  });

  it('creates, lists, reads, updates, disables and deletes a key through @openrouter/sdk', async () => {
    const created = await admin.apiKeys.create({ requestBody: { name: 'sdk key', limit: 5, limitReset: 'monthly' } });
    expect(created.key).toMatch(/^sk-gw-v1-/);
    expect(created.data).toMatchObject({ name: 'sdk key', limit: 5, limitRemaining: 5, limitReset: 'monthly', disabled: false });
    const hash = created.data.hash;

    const listed = await admin.apiKeys.list();
    expect(listed.data.map((key) => key.hash)).toContain(hash);
    expect(listed.data[0]!.hash).toBe(hash);

    const read = await admin.apiKeys.get({ hash });
    expect(read.data.name).toBe('sdk key');

    const updated = await admin.apiKeys.update({ hash, requestBody: { name: 'renamed', includeByokInLimit: true, limitReset: 'daily' } });
    expect(updated.data).toMatchObject({ name: 'renamed', includeByokInLimit: true, limitReset: 'daily' });

    const user = new OpenRouter({ apiKey: created.key, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
    const own = await user.apiKeys.getCurrentKeyMetadata();
    expect(own.data).toMatchObject({ isManagementKey: false, limit: 5, label: created.data.label });
    // The SDK declares no 403 for this operation, so it surfaces the raw status and body.
    const refused = await user.apiKeys.list().then(() => ({ statusCode: 200, body: '{}' }), (err: unknown) => err as { statusCode: number; body: string });
    expect(refused.statusCode).toBe(403);
    expect(JSON.parse(refused.body)).toEqual({ error: { code: 403, message: 'Only management keys can perform this operation' } });
    await expect(user.apiKeys.create({ requestBody: { name: 'nope' } })).rejects.toBeInstanceOf(ForbiddenResponseError);

    const disabled = await admin.apiKeys.update({ hash, requestBody: { disabled: true } });
    expect(disabled.data.disabled).toBe(true);
    await expect(user.apiKeys.getCurrentKeyMetadata()).rejects.toBeInstanceOf(UnauthorizedResponseError);
    expect((await admin.apiKeys.list({ includeDisabled: true })).data.find((key) => key.hash === hash)?.disabled).toBe(true);

    expect(await admin.apiKeys.delete({ hash })).toEqual({ deleted: true });
    await expect(admin.apiKeys.get({ hash })).rejects.toBeInstanceOf(NotFoundResponseError);
  });

  it('answers malformed and oversized bodies with 4xx envelopes and stays up', async () => {
    const headers = { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' };
    const bodies: Array<[string | Buffer, number]> = [
      ['{"name":', 400],
      ['not json at all', 400],
      ['{"name": 42}', 400],
      [Buffer.from([0xff, 0xfe, 0x00, 0x7b]), 400],
      [JSON.stringify({ name: 'x'.repeat(3 * 1024 * 1024) }), 413],
      [Buffer.alloc(8 * 1024 * 1024, 0x61), 413],
    ];
    for (const [body, status] of bodies) {
      const reply = await fetch(`${gateway.baseUrl}/keys`, { method: 'POST', headers, body });
      expect(reply.status).toBe(status);
      const json = await reply.json() as { error: { code: number; message: string } };
      expect(json.error.code).toBe(status);
      expect(json.error.message.length).toBeGreaterThan(0);
    }
    const wrongMethod = await fetch(`${gateway.baseUrl}/keys`, { method: 'PUT', headers });
    expect(wrongMethod.status).toBe(405);
    const unknown = await fetch(`${gateway.baseUrl}/no/such/route`, { headers });
    expect(await unknown.json()).toMatchObject({ error: { code: 404 } });
    expect((await fetch(`${gateway.url}/health`)).status).toBe(200);
  });

  it('serves credits, workspaces, budgets, generations, feedback, activity and analytics to @openrouter/sdk', async () => {
    const credits = await admin.credits.getCredits();
    expect(credits.data).toEqual({ totalCredits: 25, totalUsage: expect.any(Number) });

    const workspace = await admin.workspaces.create({ createWorkspaceRequest: { name: 'SDK space', slug: 'sdk-space' } });
    expect(workspace.data).toMatchObject({ name: 'SDK space', slug: 'sdk-space', includeByokInBudgets: false });
    const page = await admin.workspaces.list();
    expect(page.result.data.map((entry) => entry.slug)).toContain('sdk-space');
    expect(page.result.totalCount).toBeGreaterThanOrEqual(2);
    const paged: string[] = [];
    for await (const onePerPage of await admin.workspaces.list({ limit: 1 })) paged.push(...onePerPage.result.data.map((entry) => entry.slug));
    expect(paged).toEqual(page.result.data.map((entry) => entry.slug));
    expect((await admin.workspaces.get({ id: 'sdk-space' })).data.id).toBe(workspace.data.id);
    expect((await admin.workspaces.update({ id: workspace.data.id, updateWorkspaceRequest: { description: 'for the SDK test' } })).data.description).toBe('for the SDK test');

    const budget = await admin.workspaces.setBudget({ workspaceRef: 'sdk-space', interval: 'daily', upsertWorkspaceBudgetRequest: { limitUsd: 2.5 } });
    expect(budget.data).toMatchObject({ workspaceId: workspace.data.id, limitUsd: 2.5, resetInterval: 'daily' });
    expect((await admin.workspaces.getBudget({ workspaceRef: 'sdk-space', interval: 'daily' })).data.limitUsd).toBe(2.5);
    expect((await admin.workspaces.listBudgets({ workspaceRef: 'sdk-space' })).data).toHaveLength(1);

    const created = await admin.apiKeys.create({ requestBody: { name: 'in sdk-space', workspaceId: workspace.data.id } as never });
    const user = new OpenRouter({ apiKey: created.key, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
    const reply = await user.chat.send({ chatRequest: { model: 'simulator/echo', stream: false, maxTokens: 20, messages: [{ role: 'user', content: 'bill me' }] } });
    if (!('id' in reply)) throw new Error('expected a chat completion');
    const generation = await user.generations.getGeneration({ id: reply.id });
    expect(generation.data).toMatchObject({ id: reply.id, model: 'simulator/echo', workspaceId: workspace.data.id, isByok: false });
    expect(generation.data.totalCost).toBe(reply.usage!.cost);
    expect(await admin.generations.submitFeedback({ submitGenerationFeedbackRequest: { generationId: reply.id, category: 'other', comment: 'fine' } })).toEqual({ data: { success: true } });

    // Reports follow the replies once the meter aggregator has applied their records (well under a second).
    let activity = await admin.analytics.getUserActivity({ workspaceId: workspace.data.id, groupBy: 'workspace' });
    for (const deadline = Date.now() + 5000; activity.data.length === 0 && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      activity = await admin.analytics.getUserActivity({ workspaceId: workspace.data.id, groupBy: 'workspace' });
    }
    expect(activity.data).toEqual([expect.objectContaining({ model: 'simulator/echo', requests: 1, usage: reply.usage!.cost, workspaceId: workspace.data.id })]);
    const meta = await admin.analytics.getAnalyticsMeta();
    expect(meta.data.metrics.map((metric) => metric.name)).toContain('cost');
    const body = { metrics: ['requests', 'cost'], dimensions: ['workspace'], filters: [{ field: 'workspace', operator: 'eq', value: workspace.data.id }] };
    // The SDK types result rows as empty objects (their columns depend on the query), so it parses the
    // envelope; the columns are checked on the raw reply.
    const query = await admin.analytics.queryAnalytics({ requestBody: body });
    expect(query.data.data).toHaveLength(1);
    expect(query.data.metadata.rowCount).toBe(1);
    const raw = await fetch(`${gateway.baseUrl}/analytics/query`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(((await raw.json()) as { data: { data: unknown[] } }).data.data).toEqual([{ workspace: workspace.data.id, requests: 1, cost: reply.usage!.cost }]);

    expect(await admin.workspaces.deleteBudget({ workspaceRef: 'sdk-space', interval: 'daily' })).toEqual({ deleted: true });
    await admin.apiKeys.delete({ hash: created.data.hash });
    expect(await admin.workspaces.delete({ id: workspace.data.id })).toEqual({ deleted: true });
  });

  it('serves the vault, interns and BYOK to @openrouter/sdk, backed by the local KMS', async () => {
    const created = await admin.apiKeys.create({ requestBody: { name: 'vault user' } });
    const user = new OpenRouter({ apiKey: created.key, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
    const stored = await user.vault.storeVaultSecret({ name: 'github_token', vaultSecretWriteRequest: { hosts: ['API.GitHub.com.'], value: 'ghp_e2e_value' } });
    expect(stored.data).toMatchObject({ name: 'github_token', hosts: ['api.github.com'] });
    expect(stored.data.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    const listed = await user.vault.listVaultSecrets();
    expect(listed.data.map((secret) => secret.name)).toEqual(['github_token']);
    expect(JSON.stringify(listed)).not.toContain('ghp_e2e_value');

    const intern = await user.interns.createIntern({ createInternRequest: { name: 'E2E intern' } });
    expect(intern).toMatchObject({ name: 'E2E intern', status: 'queued' });
    expect((await user.interns.listInterns()).data.map((entry) => entry.id)).toContain(intern.id);
    expect((await user.interns.updateIntern({ internId: intern.id, updateInternRequest: { description: 'tests' } })).description).toBe('tests');
    expect(await user.interns.provisionIntern({ internId: intern.id })).toEqual({ provisioning: true });
    expect(await user.interns.suspendIntern({ internId: intern.id })).toEqual({ suspended: true });
    const copied = await user.vault.copyVaultSecretsToIntern({ internId: intern.id, vaultSecretCopyRequest: { names: ['github_token'] } });
    expect(copied.data[0]!.fingerprint).not.toBe(stored.data.fingerprint);
    await user.vault.storeInternVaultSecret({ internId: intern.id, name: 'own', vaultSecretWriteRequest: { hosts: ['x.example.com'], value: 'v' } });
    expect((await user.vault.listInternVaultSecrets({ internId: intern.id })).data.map((secret) => secret.name)).toEqual(['github_token', 'own']);
    // Reads the SDK has no method for answer in the shape of its vault models all the same.
    const get = (path: string) => fetch(`${gateway.baseUrl}${path}`, { headers: { authorization: `Bearer ${created.key}` } }).then((reply) => reply.json());
    expect(VaultSecretResponse$inboundSchema.parse(await get('/vault/secrets/github_token')).data.name).toBe('github_token');
    expect(VaultSecretResponse$inboundSchema.parse(await get(`/vault/interns/${intern.id}/secrets/own`)).data.hosts).toEqual(['x.example.com']);
    expect(VaultSecretListResponse$inboundSchema.parse(await get(`/vault/interns/${intern.id}/effective-secrets`)).data.map((secret) => secret.name)).toEqual(['github_token', 'own']);
    expect(await user.vault.deleteInternVaultSecret({ internId: intern.id, name: 'own' })).toBeUndefined();
    expect((await user.vault.listInternVaultSecrets({ internId: intern.id })).data.map((secret) => secret.name)).toEqual(['github_token']);
    expect(await user.interns.getIntern({ internId: intern.id })).toMatchObject({ id: intern.id, name: 'E2E intern', description: 'tests' });
    await user.vault.deleteVaultSecret({ name: 'github_token' });
    expect((await user.vault.listVaultSecrets()).data).toEqual([]);
    expect(await user.interns.deleteIntern({ internId: intern.id, deleteInternRequest: {} })).toEqual({ deleting: true });

    // The gateway's own provider slugs (here the simulator's) are outside the SDK's typed list of OpenRouter slugs.
    const credential = await admin.byok.create({ createBYOKKeyRequest: { provider: 'simulator' as never, key: 'sk-sim-e2e-SECRET-5678', name: 'e2e' } });
    expect(credential.data).toMatchObject({ provider: 'simulator', label: 'sk-…5678', name: 'e2e', disabled: false });
    const page = await admin.byok.list();
    expect(page.result.data.map((entry) => entry.id)).toContain(credential.data.id);
    expect((await admin.byok.get({ id: credential.data.id })).data.label).toBe('sk-…5678');
    expect((await admin.byok.update({ id: credential.data.id, updateBYOKKeyRequest: { disabled: true } })).data.disabled).toBe(true);
    const second = await admin.byok.create({ createBYOKKeyRequest: { provider: 'simulator' as never, key: 'sk-sim-e2e-OTHER-9999', name: 'second' } });
    const paged: string[] = [];
    for await (const onePerPage of await admin.byok.list({ limit: 1 })) paged.push(...onePerPage.result.data.map((entry) => entry.id));
    expect(paged.sort()).toEqual([credential.data.id, second.data.id].sort());
    await admin.byok.delete({ id: second.data.id });
    expect(await admin.byok.delete({ id: credential.data.id })).toEqual({ deleted: true });
    await admin.apiKeys.delete({ hash: created.data.hash });
  });

  it('fails with the SDK\'s typed errors, never a validation error, on every management route', async () => {
    const created = await admin.apiKeys.create({ requestBody: { name: 'typed errors' } });
    const user = new OpenRouter({ apiKey: created.key, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
    const stranger = new OpenRouter({ apiKey: generateKeyText(), serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
    const missingHash = '0'.repeat(64);
    const missingId = '00000000-0000-4000-8000-000000000000';
    const cases: Array<[string, () => Promise<unknown>, new (...args: never[]) => OpenRouterError, number]> = [
      ['apiKeys.get 404', () => admin.apiKeys.get({ hash: missingHash }), NotFoundResponseError, 404],
      ['apiKeys.update 404', () => admin.apiKeys.update({ hash: missingHash, requestBody: { name: 'x' } }), NotFoundResponseError, 404],
      ['apiKeys.delete 404', () => admin.apiKeys.delete({ hash: missingHash }), NotFoundResponseError, 404],
      ['apiKeys.create 400', () => admin.apiKeys.create({ requestBody: { name: '' } }), BadRequestResponseError, 400],
      ['apiKeys.getCurrentKeyMetadata 401', () => stranger.apiKeys.getCurrentKeyMetadata(), UnauthorizedResponseError, 401],
      ['credits.getCredits 403', () => user.credits.getCredits(), ForbiddenResponseError, 403],
      ['credits.getCredits 401', () => stranger.credits.getCredits(), UnauthorizedResponseError, 401],
      ['workspaces.get 404', () => admin.workspaces.get({ id: 'no-such-space' }), NotFoundResponseError, 404],
      ['workspaces.create 400', () => admin.workspaces.create({ createWorkspaceRequest: { name: '', slug: 'Not A Slug' } }), BadRequestResponseError, 400],
      ['workspaces.setBudget 400', () => admin.workspaces.setBudget({ workspaceRef: 'default', interval: 'daily', upsertWorkspaceBudgetRequest: { limitUsd: -1 } }), BadRequestResponseError, 400],
      ['workspaces.listBudgets 404', () => admin.workspaces.listBudgets({ workspaceRef: 'no-such-space' }), NotFoundResponseError, 404],
      ['generations.getGeneration 404', () => user.generations.getGeneration({ id: 'gen-0-missing' }), NotFoundResponseError, 404],
      ['generations.getGeneration 401', () => stranger.generations.getGeneration({ id: 'gen-0-missing' }), UnauthorizedResponseError, 401],
      ['generations.submitFeedback 404', () => admin.generations.submitFeedback({ submitGenerationFeedbackRequest: { generationId: 'gen-0-missing', category: 'other' } }), NotFoundResponseError, 404],
      ['analytics.getUserActivity 400', () => admin.analytics.getUserActivity({ date: 'yesterday' }), BadRequestResponseError, 400],
      ['analytics.getUserActivity 403', () => user.analytics.getUserActivity(), ForbiddenResponseError, 403],
      ['analytics.queryAnalytics 400', () => admin.analytics.queryAnalytics({ requestBody: { metrics: ['no_such_metric'] } as never }), BadRequestResponseError, 400],
      ['vault.storeVaultSecret 400', () => user.vault.storeVaultSecret({ name: 'Not-A-Name', vaultSecretWriteRequest: { hosts: ['x.example.com'], value: 'v' } }), BadRequestResponseError, 400],
      ['vault.deleteVaultSecret 404', () => user.vault.deleteVaultSecret({ name: 'missing' }), NotFoundResponseError, 404],
      ['vault.listInternVaultSecrets 404', () => user.vault.listInternVaultSecrets({ internId: missingId }), NotFoundResponseError, 404],
      ['interns.getIntern 404', () => user.interns.getIntern({ internId: missingId }), InternLifecycleError, 404],
      ['interns.listInterns 403', () => admin.interns.listInterns(), InternLifecycleError, 403],
      ['interns.createIntern 400', () => user.interns.createIntern({ createInternRequest: { name: '' } }), InternLifecycleError, 400],
      ['interns.updateIntern 400', () => user.interns.updateIntern({ internId: missingId, updateInternRequest: { name: 'x'.repeat(10_000) } }), InternLifecycleError, 400],
      ['byok.get 404', () => admin.byok.get({ id: missingId }), NotFoundResponseError, 404],
      ['byok.create 400', () => admin.byok.create({ createBYOKKeyRequest: { provider: 'simulator' as never, key: '' } }), BadRequestResponseError, 400],
      ['models.listForUser 401', () => user.models.listForUser({ bearer: generateKeyText() }), UnauthorizedResponseError, 401],
    ];
    const outcomes = await Promise.all(cases.map(async ([name, call]) => {
      const error = await call().then(() => undefined, (err: unknown) => err);
      return [name, error?.constructor.name, (error as OpenRouterError | undefined)?.statusCode];
    }));
    expect(outcomes).toEqual(cases.map(([name, , type, status]) => [name, type.name, status]));
    await admin.apiKeys.delete({ hash: created.data.hash });
  });

  it('stops DynamoDB Local with it on SIGTERM, and keeps its state for the next start', async () => {
    const runtime = JSON.parse(readFileSync(join(gateway.dataDir, 'runtime.json'), 'utf8')) as { dynamodb_endpoint: string };
    const port = Number(new URL(runtime.dynamodb_endpoint).port);
    const kept = await admin.apiKeys.create({ requestBody: { name: 'survives restart' } });

    expect(await gateway.stop('SIGTERM')).toBe(0);
    expect(await portOpen(port)).toBe(false);

    gateway = await startGatewayProcess({ GATEWAY_DATA_DIR: gateway.dataDir, GATEWAY_ADMIN_KEY: ADMIN_KEY });
    admin = new OpenRouter({ apiKey: ADMIN_KEY, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
    expect((await admin.apiKeys.get({ hash: kept.data.hash })).data.name).toBe('survives restart');
    expect(gateway.output()).not.toContain('shown once');
  }, 150_000);
});

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}
