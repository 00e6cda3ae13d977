// The key management API through the real management handler, against DynamoDB Local.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { handleManagement } from '../../lambdas/handlers/management.js';
import { createTestStore, type TestStore } from '../support/store.js';
import { createTenant, type Tenant } from '../support/tenants.js';
import { httpEvent, type EventInput } from '../support/events.js';
import { MANAGEMENT_ONLY_MESSAGE } from '../../lambdas/keys/index.js';

let store: TestStore;
let acme: Tenant;
let admin: string;

async function call(input: EventInput) {
  const result = await handleManagement(httpEvent(input), store.deps);
  return { status: result.statusCode, headers: result.headers ?? {}, json: JSON.parse(String(result.body)) };
}

beforeAll(async () => {
  store = await createTestStore();
  acme = await createTenant(store.deps);
  admin = (await acme.addKey('management')).text;
});
afterAll(() => store.drop());

describe('key lifecycle', () => {
  it('creates, reads, updates, disables and deletes a key; the text appears only on creation', async () => {
    const created = await call({ method: 'POST', path: '/api/v1/keys', key: admin, body: { name: 'ci', limit: 12.34, limit_reset: 'weekly' } });
    expect(created.status).toBe(201);
    expect(created.json.key).toMatch(/^sk-gw-v1-[0-9a-f]{72}$/);
    expect(created.json.data).toMatchObject({
      name: 'ci', limit: 12.34, limit_remaining: 12.34, limit_reset: 'weekly', disabled: false, usage: 0, workspace_id: acme.workspaceId,
    });
    const hash = created.json.data.hash as string;
    expect(created.json.data.label).toBe(`sk-gw-v1-${created.json.key.slice(9, 12)}...${created.json.key.slice(-3)}`);

    const read = await call({ method: 'GET', path: `/api/v1/keys/${hash}`, key: admin });
    expect(read.status).toBe(200);
    expect(read.json.data).toEqual(created.json.data);
    expect(JSON.stringify(read.json)).not.toContain(created.json.key);

    const renamed = await call({ method: 'PATCH', path: `/api/v1/keys/${hash}`, key: admin, body: { name: 'ci-2', limit: null, include_byok_in_limit: true } });
    expect(renamed.status).toBe(200);
    expect(renamed.json.data).toMatchObject({ name: 'ci-2', limit: null, limit_remaining: null, include_byok_in_limit: true, limit_reset: 'weekly' });
    expect(renamed.json.data.updated_at).not.toBeNull();

    // The key works for routes open to any key until it is disabled.
    expect((await call({ method: 'GET', path: '/api/v1/key', key: created.json.key })).status).toBe(200);
    await call({ method: 'PATCH', path: `/api/v1/keys/${hash}`, key: admin, body: { disabled: true } });
    const refused = await call({ method: 'GET', path: '/api/v1/key', key: created.json.key });
    expect(refused).toMatchObject({ status: 401, json: { error: { code: 401, message: 'API key disabled' } } });

    const deleted = await call({ method: 'DELETE', path: `/api/v1/keys/${hash}`, key: admin });
    expect(deleted).toMatchObject({ status: 200, json: { deleted: true } });
    expect((await call({ method: 'GET', path: `/api/v1/keys/${hash}`, key: admin })).status).toBe(404);
    expect((await call({ method: 'DELETE', path: `/api/v1/keys/${hash}`, key: admin })).status).toBe(404);
    expect((await call({ method: 'GET', path: '/api/v1/key', key: created.json.key })).json.error.message).toBe('Invalid API key');
  });

  it('accepts only null, daily, weekly and monthly as limit_reset', async () => {
    for (const value of ['daily', 'weekly', 'monthly', null]) {
      const reply = await call({ method: 'POST', path: '/api/v1/keys', key: admin, body: { name: `reset-${value}`, limit_reset: value } });
      expect(reply.status).toBe(201);
      expect(reply.json.data.limit_reset).toBe(value);
    }
    for (const value of ['hourly', 'yearly', '', 1, true]) {
      const reply = await call({ method: 'POST', path: '/api/v1/keys', key: admin, body: { name: 'bad', limit_reset: value } });
      expect(reply.status).toBe(400);
      expect(reply.json.error.message).toContain('body.limit_reset');
    }
  });

  it('names the offending field for schema violations', async () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'body.name'],
      [{ name: '' }, 'body.name'],
      [{ name: 'x', limit: -1 }, 'body.limit'],
      [{ name: 'x', limit: '5' }, 'body.limit'],
      [{ name: 'x', limit: 2e9 }, 'body.limit'],
      [{ name: 'x', expires_at: 'tomorrow' }, 'body.expires_at'],
      [{ name: 'x', expires_at: '2001-01-01T00:00:00Z' }, 'body.expires_at'],
      [{ name: 'x', surprise: 1 }, 'surprise'],
      [[1, 2], 'body'],
      ['text', 'body'],
    ];
    for (const [body, field] of cases) {
      const reply = await call({ method: 'POST', path: '/api/v1/keys', key: admin, body });
      expect(reply.status).toBe(400);
      expect(reply.json.error.code).toBe(400);
      expect(reply.json.error.message).toContain(field);
    }
  });

  it('refuses a workspace_id outside the organization', async () => {
    const other = await createTenant(store.deps, 'organization', 'Other');
    const reply = await call({ method: 'POST', path: '/api/v1/keys', key: admin, body: { name: 'x', workspace_id: other.workspaceId } });
    expect(reply.status).toBe(400);
    expect(reply.json.error.message).toContain('workspace_id');
  });
});

describe('limits sent as JSON numbers', () => {
  // The amount as the client's JSON text carries it (JSON.stringify of a float product).
  const FLOAT = '0.000036750000000000004';

  it('takes a limit to the nearest nano-dollar on create and on PATCH, and replies with the rounded limit', async () => {
    const created = await call({ method: 'POST', path: '/api/v1/keys', key: admin, rawBody: `{"name":"float","limit":${FLOAT}}` });
    expect(created.status).toBe(201);
    expect(created.json.data).toMatchObject({ limit: 0.00003675, limit_remaining: 0.00003675 });
    const hash = created.json.data.hash as string;
    expect((await store.deps.keys.get(hash))!.limit).toBe(36_750n);

    const tie = await call({ method: 'PATCH', path: `/api/v1/keys/${hash}`, key: admin, body: { limit: 0.0000000015 } });
    expect(tie.status).toBe(200);
    expect(tie.json.data).toMatchObject({ limit: 0.000000002, limit_remaining: 0.000000002 });
    expect((await store.deps.keys.get(hash))!.limit).toBe(2n);

    const patched = await call({ method: 'PATCH', path: `/api/v1/keys/${hash}`, key: admin, rawBody: `{"limit":${FLOAT}}` });
    expect(patched.status).toBe(200);
    expect(patched.json.data.limit).toBe(0.00003675);
    expect((await store.deps.keys.get(hash))!.limit).toBe(36_750n);

    // Below half a nano-dollar would be a limit of 0 (nothing allowed): refused, naming it; 0 itself is a limit.
    const tiny = await call({ method: 'PATCH', path: `/api/v1/keys/${hash}`, key: admin, body: { limit: 1e-10 } });
    expect([tiny.status, tiny.json.error.message]).toEqual([400, 'Invalid body.limit: must be 0 or at least 0.000000001 (it rounds to 0 at the nearest nano-dollar)']);
    expect((await store.deps.keys.get(hash))!.limit).toBe(36_750n);
    const zero = await call({ method: 'PATCH', path: `/api/v1/keys/${hash}`, key: admin, body: { limit: 0 } });
    expect(zero.json.data).toMatchObject({ limit: 0, limit_remaining: 0 });
    expect((await store.deps.keys.get(hash))!.limit).toBe(0n);
  });

  it('refuses negative, infinite, huge and non-number limits with a 400 naming the field and the problem', async () => {
    const hash = (await call({ method: 'POST', path: '/api/v1/keys', key: admin, body: { name: 'bounds', limit: 1 } })).json.data.hash as string;
    // 1e400 is valid JSON that JSON.parse reads as Infinity.
    const cases: Array<[string, string]> = [
      ['-1', 'must not be negative'],
      ['-0.0000000001', 'must not be negative'],
      ['1e400', 'must be a finite number'],
      ['-1e400', 'must be a finite number'],
      ['1000000000.01', 'must be at most 1000000000 (USD)'],
      ['"5"', 'must be a number (USD)'],
    ];
    for (const [value, problem] of cases) {
      const created = await call({ method: 'POST', path: '/api/v1/keys', key: admin, rawBody: `{"name":"bad","limit":${value}}` });
      expect(created).toMatchObject({ status: 400, json: { error: { code: 400, message: `Invalid body.limit: ${problem}` } } });
      const patched = await call({ method: 'PATCH', path: `/api/v1/keys/${hash}`, key: admin, rawBody: `{"limit":${value}}` });
      expect(patched).toMatchObject({ status: 400, json: { error: { code: 400, message: `Invalid body.limit: ${problem}` } } });
    }
    expect((await store.deps.keys.get(hash))!.limit).toBe(1_000_000_000n);

    // JSON has no NaN: a client that writes it sends malformed JSON, and the message shows where.
    const nan = await call({ method: 'POST', path: '/api/v1/keys', key: admin, rawBody: '{"name":"bad","limit":NaN}' });
    expect(nan).toMatchObject({ status: 400, json: { error: { code: 400 } } });
    expect(nan.json.error.message).toMatch(/^Malformed JSON body: .*"limit":NaN/);
  });
});

describe('listing', () => {
  it('pages by offset in pages of 100, newest first, and hides disabled keys unless asked', async () => {
    const tenant = await createTenant(store.deps, 'organization', 'Paging');
    const start = Date.parse('2026-01-01T00:00:00Z');
    const manager = await tenant.addKey('management', { now: new Date(start) });
    for (let i = 1; i <= 130; i += 1) await tenant.addKey('standard', { name: `key-${i}`, now: new Date(start + i * 1000) });

    const first = await call({ method: 'GET', path: '/api/v1/keys', key: manager.text });
    expect(first.json.data).toHaveLength(100);
    expect(first.json.data[0].name).toBe('key-130');
    expect(first.json.data[99].name).toBe('key-31');
    const second = await call({ method: 'GET', path: '/api/v1/keys', key: manager.text, query: { offset: '100' } });
    expect(second.json.data.map((key: { name: string }) => key.name)).toEqual([
      ...Array.from({ length: 30 }, (_, i) => `key-${30 - i}`), 'management key',
    ]);

    const victim = first.json.data[0].hash as string;
    await call({ method: 'PATCH', path: `/api/v1/keys/${victim}`, key: manager.text, body: { disabled: true } });
    const hidden = await call({ method: 'GET', path: '/api/v1/keys', key: manager.text });
    expect(hidden.json.data[0].name).toBe('key-129');
    const shown = await call({ method: 'GET', path: '/api/v1/keys', key: manager.text, query: { include_disabled: 'true' } });
    expect(shown.json.data[0]).toMatchObject({ name: 'key-130', disabled: true });

    const bad = await call({ method: 'GET', path: '/api/v1/keys', key: manager.text, query: { offset: '-1' } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toContain('query.offset');
  });
});

describe('authentication', () => {
  it('answers 401 with the exact message when the header is missing', async () => {
    const reply = await call({ method: 'GET', path: '/api/v1/keys' });
    expect(reply).toMatchObject({ status: 401, json: { error: { code: 401, message: 'Missing Authentication header' } } });
  });

  it('refuses malformed keys before any lookup', async () => {
    const lookups: string[] = [];
    const get = store.deps.keys.get.bind(store.deps.keys);
    store.deps.keys.get = async (hash) => { lookups.push(hash); return get(hash); };
    try {
      const flipped = admin.slice(0, -1) + (admin.endsWith('0') ? '1' : '0');
      for (const text of ['nope', 'sk-or-v1-abc', flipped, `${admin}x`]) {
        const reply = await call({ method: 'GET', path: '/api/v1/key', key: text });
        expect(reply).toMatchObject({ status: 401, json: { error: { message: 'Malformed API key' } } });
      }
      expect(lookups).toEqual([]);
      expect((await call({ method: 'GET', path: '/api/v1/key', headers: { authorization: 'Basic abc' } })).status).toBe(401);
    } finally {
      store.deps.keys.get = get;
    }
  });

  it('refuses regular keys on management routes with 403', async () => {
    const { text } = await acme.addKey('standard');
    for (const [method, path] of [['GET', '/api/v1/keys'], ['POST', '/api/v1/keys'], ['GET', '/api/v1/organization/settings']] as const) {
      const reply = await call({ method, path, key: text, body: method === 'POST' ? { name: 'x' } : undefined });
      expect(reply).toMatchObject({ status: 403, json: { error: { code: 403, message: MANAGEMENT_ONLY_MESSAGE } } });
    }
  });

  it('refuses an expired management key with "API key expired" but still lists it until deleted', async () => {
    const tenant = await createTenant(store.deps, 'organization', 'Expiry');
    const live = await tenant.addKey('management', { name: 'live' });
    const expiring = await tenant.addKey('management', { name: 'expiring', expiresAt: '2030-01-01T00:00:00Z' });
    expect((await call({ method: 'GET', path: '/api/v1/keys', key: expiring.text })).status).toBe(200);

    store.setNow(new Date('2030-01-01T00:00:01Z'));
    try {
      const refused = await call({ method: 'GET', path: '/api/v1/keys', key: expiring.text });
      expect(refused).toMatchObject({ status: 401, json: { error: { code: 401, message: 'API key expired' } } });
      const listed = await call({ method: 'GET', path: '/api/v1/keys', key: live.text });
      expect(listed.json.data.map((key: { name: string }) => key.name)).toContain('expiring');
      expect(listed.json.data.find((key: { name: string }) => key.name === 'expiring').expires_at).toBe('2030-01-01T00:00:00.000Z');
      await call({ method: 'DELETE', path: `/api/v1/keys/${expiring.key.hash}`, key: live.text });
      const after = await call({ method: 'GET', path: '/api/v1/keys', key: live.text });
      expect(after.json.data.map((key: { name: string }) => key.name)).not.toContain('expiring');
    } finally {
      store.setNow(new Date());
    }
  });

  it('lets a management key change other keys, not disable or delete itself, and gives no management key a credit limit', async () => {
    const tenant = await createTenant(store.deps, 'organization', 'Self');
    const first = await tenant.addKey('management', { name: 'first' });
    const second = await tenant.addKey('management', { name: 'second' });
    const disabled = await call({ method: 'PATCH', path: `/api/v1/keys/${first.key.hash}`, key: first.text, body: { disabled: true } });
    expect(disabled).toMatchObject({ status: 403, json: { error: { code: 403, message: 'A key cannot disable itself: use another management key' } } });
    const deleted = await call({ method: 'DELETE', path: `/api/v1/keys/${first.key.hash}`, key: first.text });
    expect(deleted).toMatchObject({ status: 403, json: { error: { code: 403, message: 'A key cannot delete itself: use another management key' } } });
    // Renaming itself is harmless; the key still works.
    expect((await call({ method: 'PATCH', path: `/api/v1/keys/${first.key.hash}`, key: first.text, body: { name: 'first, renamed' } })).json.data.name).toBe('first, renamed');
    for (const body of [{ limit: 1 }, { limit_reset: 'daily' }, { include_byok_in_limit: true }]) {
      const field = Object.keys(body)[0]!;
      const refused = await call({ method: 'PATCH', path: `/api/v1/keys/${second.key.hash}`, key: first.text, body });
      expect(refused).toMatchObject({ status: 400, json: { error: { code: 400, message: `Invalid body.${field}: a management key has no credit limit` } } });
    }
    // Clearing is always allowed (null, false).
    expect((await call({ method: 'PATCH', path: `/api/v1/keys/${second.key.hash}`, key: first.text, body: { limit: null, limit_reset: null, include_byok_in_limit: false } })).status).toBe(200);
    // Another key may disable and delete it: the way to replace a management key.
    expect((await call({ method: 'PATCH', path: `/api/v1/keys/${second.key.hash}`, key: first.text, body: { disabled: true } })).json.data.disabled).toBe(true);
    expect((await call({ method: 'GET', path: '/api/v1/keys', key: second.text })).status).toBe(401);
    expect((await call({ method: 'DELETE', path: `/api/v1/keys/${second.key.hash}`, key: first.text })).status).toBe(200);
    expect((await call({ method: 'GET', path: '/api/v1/keys', key: first.text })).status).toBe(200);
  });

  it('keeps organizations apart: another organization\'s keys are 404', async () => {
    const other = await createTenant(store.deps, 'organization', 'Globex');
    const otherAdmin = await other.addKey('management');
    const theirs = await other.addKey('standard', { name: 'theirs' });
    for (const [method, body] of [['GET', undefined], ['PATCH', { disabled: true }], ['DELETE', undefined]] as const) {
      const reply = await call({ method, path: `/api/v1/keys/${theirs.key.hash}`, key: admin, body });
      expect(reply.status).toBe(404);
    }
    const listed = await call({ method: 'GET', path: '/api/v1/keys', key: admin, query: { include_disabled: 'true' } });
    expect(listed.json.data.map((key: { hash: string }) => key.hash)).not.toContain(theirs.key.hash);
    expect((await call({ method: 'GET', path: `/api/v1/keys/${theirs.key.hash}`, key: otherAdmin.text })).json.data.disabled).toBe(false);
  });
});

describe('organization settings', () => {
  it('reads and updates the settings of the key\'s organization', async () => {
    const read = await call({ method: 'GET', path: '/api/v1/organization/settings', key: admin });
    expect(read).toMatchObject({ status: 200, json: { data: { id: acme.orgId, is_filtered_model_catalog_enabled: false } } });
    const updated = await call({ method: 'PATCH', path: '/api/v1/organization/settings', key: admin, body: { is_filtered_model_catalog_enabled: true } });
    expect(updated.json.data).toEqual({ id: acme.orgId, is_filtered_model_catalog_enabled: true });
    expect((await call({ method: 'GET', path: '/api/v1/organization/settings', key: admin })).json.data.is_filtered_model_catalog_enabled).toBe(true);
    const invalid = await call({ method: 'PATCH', path: '/api/v1/organization/settings', key: admin, body: { is_filtered_model_catalog_enabled: 'yes' } });
    expect(invalid.status).toBe(400);
    expect(invalid.json.error.message).toContain('is_filtered_model_catalog_enabled');
  });

  it('answers 404 to a personal account', async () => {
    const personal = await createTenant(store.deps, 'personal', 'Jo');
    const { text } = await personal.addKey('management');
    for (const method of ['GET', 'PATCH'] as const) {
      const reply = await call({ method, path: '/api/v1/organization/settings', key: text, body: method === 'PATCH' ? { is_filtered_model_catalog_enabled: true } : undefined });
      expect(reply.status).toBe(404);
      expect(reply.json.error.code).toBe(404);
    }
    expect((await call({ method: 'GET', path: '/api/v1/keys', key: text })).status).toBe(200);
  });
});

describe('error envelope', () => {
  it('answers unknown routes 404, wrong methods 405, malformed JSON 400 and big bodies 413', async () => {
    expect(await call({ method: 'GET', path: '/api/v1/nothing-here', key: admin })).toMatchObject({ status: 404, json: { error: { code: 404 } } });
    const wrong = await call({ method: 'PUT', path: '/api/v1/keys', key: admin });
    expect(wrong).toMatchObject({ status: 405, json: { error: { code: 405 } } });
    expect(wrong.headers.allow).toBe('GET, HEAD, POST');
    const malformed = await call({ method: 'POST', path: '/api/v1/keys', key: admin, rawBody: '{"name": ' });
    expect(malformed).toMatchObject({ status: 400, json: { error: { code: 400 } } });
    expect(malformed.json.error.message).toMatch(/^Malformed JSON body/);
    const big = await call({ method: 'POST', path: '/api/v1/keys', key: admin, rawBody: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }) });
    expect(big).toMatchObject({ status: 413, json: { error: { code: 413 } } });
    // A compressed body is refused as such (not as JSON that is not UTF-8); identity is no compression.
    const gzipped = await call({ method: 'POST', path: '/api/v1/keys', key: admin, headers: { 'content-encoding': 'gzip' }, body: { name: 'zipped' } });
    expect(gzipped).toMatchObject({ status: 415, json: { error: { code: 415, message: 'Unsupported Content-Encoding "gzip": send the body uncompressed' } } });
    expect((await call({ method: 'POST', path: '/api/v1/keys', key: admin, headers: { 'content-encoding': 'identity' }, body: { name: 'plain' } })).status).toBe(201);
    // A path parameter that is not valid percent-encoding: a 400 naming it, the value not echoed.
    for (const path of ['/api/v1/keys/%ff', '/api/v1/keys/%zz', '/api/v1/workspaces/%', '/api/v1/guardrails/%ED%A0%80']) {
      const refused = await call({ method: 'GET', path, key: admin });
      expect(refused.status).toBe(400);
      expect(refused.json.error.message).toMatch(/^Invalid path parameter (hash|id): not valid percent-encoded UTF-8$/);
    }
  });

  it('answers 500 without internals when the store fails, and logs it with the request id', async () => {
    const list = store.deps.keys.list.bind(store.deps.keys);
    store.deps.keys.list = async () => { throw new Error('secret table detail'); };
    try {
      const reply = await call({ method: 'GET', path: '/api/v1/keys', key: admin });
      expect(reply.status).toBe(500);
      expect(reply.json.error.message).toBe('Internal server error');
      expect(JSON.stringify(reply.json)).not.toContain('secret table detail');
      const requestId = reply.json.error.metadata.request_id as string;
      expect(reply.headers['x-request-id']).toBe(requestId);
      expect(store.logs.some((line) => line.includes(requestId) && line.includes('secret table detail'))).toBe(true);
    } finally {
      store.deps.keys.list = list;
    }
  });
});
