// The gateway as `npm start` runs it, driven over HTTP by the official @openrouter/sdk client.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:net';
import { OpenRouter } from '@openrouter/sdk';
import { ForbiddenResponseError, NotFoundResponseError, UnauthorizedResponseError } from '@openrouter/sdk/models/errors';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';
import { generateKeyText } from '../../lambdas/keys/key-format.js';

const ADMIN_KEY = generateKeyText();
let gateway: GatewayProcess;
let admin: OpenRouter;

beforeAll(async () => {
  gateway = await startGatewayProcess({ GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_INITIAL_CREDITS: '25' });
  admin = new OpenRouter({ apiKey: ADMIN_KEY, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
}, 90_000);

afterAll(async () => {
  await gateway?.stop();
});

describe('npm start', () => {
  it('answers /health and serves the OpenAPI document', async () => {
    const health = await fetch(`${gateway.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
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
  }, 90_000);
});

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}
