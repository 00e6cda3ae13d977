// The vault through the management handler and the Vault service, over DynamoDB Local and the local KMS:
// host rules, envelope encryption (no plaintext at rest, ciphertexts bound to vault and name, contexts bound
// to their vault), fingerprints, release to exact hosts only with an audit trail, and the scope rules.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { installAwsLambdaShim } from '../../bin/local/awslambda-shim.js';
import { createDocumentClient } from '../../lambdas/platform/dynamo/client.js';
import { itemKeys } from '../../lambdas/platform/dynamo/item-keys.js';
import { VaultRepository } from '../../lambdas/vault/vault-repository.js';
import { InternRepository } from '../../lambdas/interns/intern-repository.js';
import { AwsKms } from '../../lambdas/platform/aws/kms.js';
import { Vault, ReleaseRefused } from '../../lambdas/vault/vault.js';
import { encryptionContextOf, open, SealedValueError, vaultIdOf, type VaultRef } from '../../lambdas/vault/envelope.js';
import { normalizeHost, HostError } from '../../lambdas/vault/hosts.js';
import { createTestStore, type TestStore } from '../support/store.js';
import type { GatewayDeps } from '../../lambdas/app/deps.js';
import { createTenant, type Tenant } from '../support/tenants.js';
import { httpEvent } from '../support/events.js';

installAwsLambdaShim();
const { handleManagement } = await import('../../lambdas/handlers/management.js');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

let store: TestStore;
let db: ReturnType<typeof createDocumentClient>;

beforeAll(async () => {
  // A catalog with the simulator's providers, so BYOK credentials can be stored for them (nothing is called).
  store = await createTestStore({ SIMULATOR_URL: 'http://127.0.0.1:9' });
  db = createDocumentClient({ endpoint: store.endpoint });
});
afterAll(async () => {
  db.destroy();
  await store.drop();
});

async function call(key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}, deps: GatewayDeps = store.deps): Promise<{ status: number; json: Json | undefined }> {
  const reply = await handleManagement(httpEvent({ method, path: `/api/v1${path}`, key, headers, ...(body === undefined ? {} : { body }) }), deps);
  return { status: reply.statusCode ?? 200, json: reply.body ? JSON.parse(String(reply.body)) as Json : undefined };
}

interface Member { tenant: Tenant; key: string; admin: string }

async function member(programme = true): Promise<Member> {
  const tenant = await createTenant(store.deps, 'organization', 'Vaulted');
  await store.deps.organizations.setFlags(tenant.orgId, { intern_programme: programme }, new Date().toISOString());
  return { tenant, key: (await tenant.addKey('standard')).text, admin: (await tenant.addKey('management')).text };
}

async function internOf(owner: Member, name = 'Ada'): Promise<{ id: string; key: string }> {
  const created = await call(owner.key, 'POST', '/interns', { name });
  expect(created.status).toBe(201);
  const id = created.json!.id as string;
  const key = await call(owner.key, 'POST', `/interns/${id}/keys`, {});
  expect(key.status).toBe(201);
  return { id, key: key.json!.key as string };
}

async function scanAll(): Promise<string> {
  const items: unknown[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db.send(new ScanCommand({ TableName: store.tableName, ExclusiveStartKey: startKey }));
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return JSON.stringify(items, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value));
}

describe('host normalization and rejection (lowercased, no trailing dot, exact hostnames only)', () => {
  it.each([
    ['API.Example.com', 'api.example.com'],
    ['api.example.com.', 'api.example.com'],
    ['API.EXAMPLE.COM.', 'api.example.com'],
    ['localhost', 'localhost'],
    ['10.0.0.1', '10.0.0.1'],
  ])('stores %s as %s', (raw, stored) => {
    expect(normalizeHost(raw)).toBe(stored);
  });

  it.each([
    ['https://api.example.com', /scheme/],
    ['ftp://files.example.com', /scheme/],
    ['api.example.com:443', /port/],
    ['api.example.com/v1', /path/],
    ['*.example.com', /wildcard/],
    ['', /empty/],
    ['   ', /empty/],
    ['.', /empty/],
    ['api..example.com', /hostname/],
    ['user@api.example.com', /bare hostname/],
    [`${'abcdefghi.'.repeat(26)}com`, /at most 254/],
    [`${'a'.repeat(64)}.com`, /hostname/],
  ])('refuses %j', (raw, message) => {
    expect(() => normalizeHost(raw)).toThrow(HostError);
    expect(() => normalizeHost(raw)).toThrow(message);
  });

  it('collapses duplicates after normalization and names the bad entry in a 400', async () => {
    const owner = await member();
    const stored = await call(owner.key, 'PUT', '/vault/secrets/dup_hosts', { hosts: ['API.example.com', 'api.example.com.', 'other.example.com'], value: 'v' });
    expect(stored.status).toBe(200);
    expect(stored.json!.data.hosts).toEqual(['api.example.com', 'other.example.com']);
    const refused = await call(owner.key, 'PUT', '/vault/secrets/bad_hosts', { hosts: ['ok.example.com', 'https://x.example.com'], value: 'v' });
    expect(refused.status).toBe(400);
    expect(refused.json!.error.message).toBe('Invalid body.hosts[1]: must be a hostname without a scheme (no https://)');
  });

  it.each([
    [{ hosts: [], value: 'v' }, 'hosts'],
    [{ hosts: Array.from({ length: 101 }, (_, i) => `h${i}.example.com`), value: 'v' }, 'hosts'],
    [{ hosts: ['a.example.com'], value: '' }, 'value'],
    [{ hosts: ['a.example.com'], value: 'x'.repeat(65_537) }, 'value'],
    [{ hosts: ['a.example.com'] }, 'value'],
    [{ value: 'v' }, 'hosts'],
    [{ hosts: ['a.example.com'], value: 'v', extra: 1 }, 'extra'],
  ])('refuses bad body #%# with a 400 naming the field', async (body, field) => {
    const owner = await member();
    const reply = await call(owner.key, 'PUT', '/vault/secrets/some_secret', body);
    expect(reply.status).toBe(400);
    expect(reply.json!.error.message).toContain(field);
  });

  it.each(['1abc', 'Abc', 'a__b', 'ab_', '_ab', 'a-b', 'a'.repeat(256)])('refuses the secret name %j', async (name) => {
    const owner = await member();
    const reply = await call(owner.key, 'PUT', `/vault/secrets/${name}`, { hosts: ['a.example.com'], value: 'v' });
    expect(reply.status).toBe(400);
    expect(reply.json!.error.message).toMatch(/name/);
  });
});

describe('envelope encryption', () => {
  it('never stores a value or a BYOK key in clear, and a fingerprint matches equal values in one vault only', async () => {
    const owner = await member();
    const byokKey = `sk-byok-${Math.random().toString(36).slice(2)}-BYOKMARKER`;
    const credential = await call(owner.admin, 'POST', '/byok', { provider: 'simulator', key: byokKey });
    expect(credential.status).toBe(201);
    expect(JSON.stringify(credential.json)).not.toContain('BYOKMARKER');
    const other = await member();
    const value = `plaintext-${Math.random().toString(36).slice(2)}-MARKER`;
    const first = await call(owner.key, 'PUT', '/vault/secrets/alpha', { hosts: ['api.example.com'], value });
    const second = await call(owner.key, 'PUT', '/vault/secrets/beta', { hosts: ['api.example.com'], value });
    const rewritten = await call(owner.key, 'PUT', '/vault/secrets/alpha', { hosts: ['api.example.com'], value });
    const elsewhere = await call(other.key, 'PUT', '/vault/secrets/alpha', { hosts: ['api.example.com'], value });
    const different = await call(owner.key, 'PUT', '/vault/secrets/gamma', { hosts: ['api.example.com'], value: `${value}!` });
    expect(first.json!.data.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(second.json!.data.fingerprint).toBe(first.json!.data.fingerprint);
    expect(rewritten.json!.data.fingerprint).toBe(first.json!.data.fingerprint);
    expect(rewritten.json!.data.created_at).toBe(first.json!.data.created_at);
    expect(elsewhere.json!.data.fingerprint).not.toBe(first.json!.data.fingerprint);
    expect(different.json!.data.fingerprint).not.toBe(first.json!.data.fingerprint);
    for (const reply of [first, second, elsewhere]) expect(JSON.stringify(reply.json)).not.toContain('MARKER');

    const everything = await scanAll();
    expect(everything).not.toContain(value);
    expect(everything).not.toContain(Buffer.from(value).toString('base64'));
    expect(everything).not.toContain('MARKER');
    expect(everything).not.toContain(byokKey);
    expect(everything).not.toContain(Buffer.from(byokKey).toString('base64'));
  });

  it('a ciphertext moved to another name or vault does not open, and a data key opens only with its own context', async () => {
    const owner = await member();
    const other = await member();
    await call(owner.key, 'PUT', '/vault/secrets/moved', { hosts: ['api.example.com'], value: 'v1' });
    await call(other.key, 'PUT', '/vault/secrets/moved', { hosts: ['api.example.com'], value: 'v2' });
    const repository = new VaultRepository(db, store.tableName);
    const refA: VaultRef = { orgId: owner.tenant.orgId, workspaceId: owner.tenant.workspaceId, purpose: 'vault' };
    const refB: VaultRef = { orgId: other.tenant.orgId, workspaceId: other.tenant.workspaceId, purpose: 'vault' };
    const row = (await repository.getSecret(vaultIdOf(refA), 'moved'))!;
    const vault = store.deps.vault!;
    const keyA = await vault.dataKey(refA);
    const keyB = await vault.dataKey(refB);
    expect(open(keyA, vaultIdOf(refA), 'moved', row.sealed)).toBe('v1');
    expect(() => open(keyA, vaultIdOf(refA), 'renamed', row.sealed)).toThrow(SealedValueError);
    expect(() => open(keyB, vaultIdOf(refB), 'moved', row.sealed)).toThrow(SealedValueError);
    expect(() => open(keyA, vaultIdOf(refB), 'moved', row.sealed)).toThrow(SealedValueError);
    // The row itself, copied under the other vault's partition, does not release there either.
    await repository.putSecret(vaultIdOf(refB), { ...row, name: 'moved' });
    await expect(vault.release(refB, 'moved', 'https://api.example.com/x', 'test')).rejects.toThrow(SealedValueError);

    const kms = new AwsKms({ keyId: store.kms.keyArn, endpoint: store.kms.url });
    const encrypted = (await repository.getDataKey(vaultIdOf(refA)))!;
    expect(await kms.decrypt(encrypted, encryptionContextOf(refA))).toEqual(keyA);
    await expect(kms.decrypt(encrypted, encryptionContextOf(refB))).rejects.toThrow(/ciphertext/i);
    await expect(kms.decrypt(encrypted, { ...encryptionContextOf(refA), purpose: 'byok' })).rejects.toThrow(/ciphertext/i);
    await expect(kms.decrypt(encrypted, { ...encryptionContextOf(refA), intern: 'someone' })).rejects.toThrow(/ciphertext/i);
  });

  it('keeps plaintext data keys in memory for a TTL: one KMS call per vault, not per secret', async () => {
    const owner = await member();
    const before = store.kms.calls.get('GenerateDataKey') ?? 0;
    const decryptsBefore = store.kms.calls.get('Decrypt') ?? 0;
    for (let i = 0; i < 5; i += 1) await call(owner.key, 'PUT', `/vault/secrets/s${i}`, { hosts: ['a.example.com'], value: `v${i}` });
    expect((store.kms.calls.get('GenerateDataKey') ?? 0) - before).toBe(1);
    expect((store.kms.calls.get('Decrypt') ?? 0) - decryptsBefore).toBe(0);
    // A cold cache decrypts the stored data key once.
    const cold = new Vault(new VaultRepository(db, store.tableName), new AwsKms({ keyId: store.kms.keyArn, endpoint: store.kms.url }));
    const ref: VaultRef = { orgId: owner.tenant.orgId, workspaceId: owner.tenant.workspaceId, purpose: 'vault' };
    expect(await cold.release(ref, 's3', 'https://a.example.com/', 'test')).toBe('v3');
    expect(await cold.release(ref, 's4', 'https://a.example.com/', 'test')).toBe('v4');
    expect(cold.kmsCalls).toBe(1);
  });
});

describe('release to bound hosts only', () => {
  it('releases to the exact hostname and refuses parents, subdomains and look-alikes, auditing each', async () => {
    const owner = await member();
    await call(owner.key, 'PUT', '/vault/secrets/api_token', { hosts: ['api.example.com'], value: 'tok-123' });
    const ref: VaultRef = { orgId: owner.tenant.orgId, workspaceId: owner.tenant.workspaceId, purpose: 'vault' };
    const vault = store.deps.vault!;
    expect(await vault.release(ref, 'api_token', 'https://api.example.com/v1/things?x=1', 'web-fetch gen-1')).toBe('tok-123');
    expect(await vault.release(ref, 'api_token', 'https://API.Example.com./v1', 'web-fetch gen-2')).toBe('tok-123');
    for (const url of ['https://example.com/', 'https://x.api.example.com/', 'https://api.example.com.evil.net/', 'https://evil.net/?host=api.example.com', 'file:///etc/passwd', 'not a url']) {
      await expect(vault.release(ref, 'api_token', url, 'web-fetch gen-3')).rejects.toBeInstanceOf(ReleaseRefused);
    }
    await expect(vault.release(ref, 'missing', 'https://api.example.com/', 'mcp')).rejects.toBeInstanceOf(ReleaseRefused);
    const trail = await vault.auditTrail(ref);
    expect(trail.filter((entry) => entry.action === 'release').map((entry) => entry.host)).toEqual(['api.example.com', 'api.example.com']);
    expect(trail.filter((entry) => entry.action === 'refuse').map((entry) => entry.host)).toEqual(expect.arrayContaining(['example.com', 'x.api.example.com', 'api.example.com.evil.net', 'evil.net']));
    expect(trail.every((entry) => entry.requester && entry.at && entry.secret)).toBe(true);
    expect(JSON.stringify(trail)).not.toContain('tok-123');
  });

  it('returns null hosts and fingerprint for legacy rows, never releases them, and binds hosts when stored again', async () => {
    const owner = await member();
    const ref: VaultRef = { orgId: owner.tenant.orgId, workspaceId: owner.tenant.workspaceId, purpose: 'vault' };
    const repository = new VaultRepository(db, store.tableName);
    await repository.putSecret(vaultIdOf(ref), { name: 'legacy', hosts: null, sealed: 'AQ==', fingerprint: null, created_at: '2025-01-01T00:00:00.000Z', updated_at: '2025-01-01T00:00:00.000Z' });
    expect((await call(owner.key, 'GET', '/vault/secrets/legacy')).json!.data).toEqual({ name: 'legacy', hosts: null, fingerprint: null, created_at: '2025-01-01T00:00:00.000Z' });
    await expect(store.deps.vault!.release(ref, 'legacy', 'https://api.example.com/', 'test')).rejects.toThrow(/no bound hosts/);
    const again = await call(owner.key, 'PUT', '/vault/secrets/legacy', { hosts: ['api.example.com'], value: 'new' });
    expect(again.json!.data.hosts).toEqual(['api.example.com']);
    expect(again.json!.data.fingerprint).toMatch(/^sha256:/);
  });
});

describe('scope rules', () => {
  it('a key of workspace A cannot read, list, overwrite or delete anything of workspace B', async () => {
    const a = await member();
    const b = await member();
    await call(b.key, 'PUT', '/vault/secrets/b_secret', { hosts: ['b.example.com'], value: 'bbb' });
    const intern = await internOf(b);
    await call(b.key, 'PUT', `/vault/interns/${intern.id}/secrets/b_intern`, { hosts: ['b.example.com'], value: 'bbb' });
    // A's key addresses its own scope: B's secret does not exist there.
    expect((await call(a.key, 'GET', '/vault/secrets/b_secret')).status).toBe(404);
    expect((await call(a.key, 'DELETE', '/vault/secrets/b_secret')).status).toBe(404);
    expect((await call(a.key, 'GET', '/vault/secrets')).json!.data).toEqual([]);
    for (const [method, path, body] of [
      ['GET', `/vault/interns/${intern.id}/secrets`],
      ['GET', `/vault/interns/${intern.id}/secrets/b_intern`],
      ['PUT', `/vault/interns/${intern.id}/secrets/b_intern`, { hosts: ['a.example.com'], value: 'overwrite' }],
      ['DELETE', `/vault/interns/${intern.id}/secrets/b_intern`],
      ['POST', `/vault/interns/${intern.id}/secrets/copy`, { names: ['b_secret'] }],
      ['GET', `/vault/interns/${intern.id}/effective-secrets`],
      ['GET', `/interns/${intern.id}`],
      ['PATCH', `/interns/${intern.id}`, { name: 'taken' }],
      ['DELETE', `/interns/${intern.id}`],
      ['POST', `/interns/${intern.id}/keys`, {}],
    ] as Array<[string, string, unknown?]>) {
      expect([method, path, (await call(a.key, method, path, body)).status]).toEqual([method, path, 404]);
    }
    // B's own view is untouched.
    expect((await call(b.key, 'GET', `/vault/interns/${intern.id}/secrets/b_intern`)).status).toBe(200);
    expect((await call(b.key, 'GET', '/vault/secrets/b_secret')).status).toBe(200);
  });

  it('an intern\'s own key is confined to that intern', async () => {
    const owner = await member();
    await call(owner.key, 'PUT', '/vault/secrets/shared', { hosts: ['w.example.com'], value: 'workspace value' });
    const ada = await internOf(owner, 'Ada');
    const bob = await internOf(owner, 'Bob');
    await call(owner.key, 'PUT', `/vault/interns/${ada.id}/secrets/own`, { hosts: ['i.example.com'], value: 'intern value' });
    // Its own secrets and effective secrets, by the intern routes and by /vault/secrets (its scope).
    expect((await call(ada.key, 'GET', `/vault/interns/${ada.id}/secrets`)).json!.data.map((s: Json) => s.name)).toEqual(['own']);
    expect((await call(ada.key, 'GET', '/vault/secrets')).json!.data.map((s: Json) => s.name)).toEqual(['own']);
    const effective = await call(ada.key, 'GET', `/vault/interns/${ada.id}/effective-secrets`);
    expect(effective.json!.data.map((s: Json) => [s.name, s.scope])).toEqual([['own', 'intern'], ['shared', 'workspace']]);
    // Writes to its own vault follow the rules.
    expect((await call(ada.key, 'PUT', `/vault/interns/${ada.id}/secrets/mine`, { hosts: ['i.example.com'], value: 'x' })).status).toBe(200);
    expect((await call(ada.key, 'PUT', '/vault/secrets/also_mine', { hosts: ['i.example.com'], value: 'x' })).status).toBe(200);
    expect((await call(owner.key, 'GET', `/vault/interns/${ada.id}/secrets/also_mine`)).status).toBe(200);
    expect((await call(owner.key, 'GET', '/vault/secrets/also_mine')).status).toBe(404);
    // Every other intern route and every workspace route: 404.
    for (const [method, path, body] of [
      ['GET', `/vault/interns/${bob.id}/secrets`],
      ['GET', `/vault/interns/${bob.id}/effective-secrets`],
      ['POST', `/vault/interns/${ada.id}/secrets/copy`, { names: ['shared'] }],
      ['GET', '/interns'],
      ['POST', '/interns', { name: 'Eve' }],
      ['GET', `/interns/${ada.id}`],
      ['POST', `/interns/${ada.id}/suspend`],
      ['POST', `/interns/${ada.id}/keys`, {}],
    ] as Array<[string, string, unknown?]>) {
      expect([method, path, (await call(ada.key, method, path, body)).status]).toEqual([method, path, 404]);
    }
  });

  it('answers 404 to everything outside the intern programme, 503 to writes while they are disabled, and refuses regional hostnames', async () => {
    const outside = await member(false);
    for (const [method, path, body] of [
      ['GET', '/vault/secrets'], ['GET', '/vault/secrets/x'], ['PUT', '/vault/secrets/x', { hosts: ['a.example.com'], value: 'v' }], ['GET', '/interns'], ['POST', '/interns', { name: 'n' }],
    ] as Array<[string, string, unknown?]>) {
      expect((await call(outside.key, method, path, body)).status).toBe(404);
    }
    const inside = await member();
    await store.deps.organizations.setFlags(inside.tenant.orgId, { vault_writes_disabled: true }, new Date().toISOString());
    const blocked = await call(inside.key, 'PUT', '/vault/secrets/x', { hosts: ['a.example.com'], value: 'v' });
    expect(blocked.status).toBe(503);
    expect(blocked.json!.error.message).toMatch(/Vault writes are disabled/);
    expect((await call(inside.key, 'DELETE', '/vault/secrets/x')).status).toBe(503);
    expect((await call(inside.key, 'GET', '/vault/secrets')).status).toBe(200);
    await store.deps.organizations.setFlags(inside.tenant.orgId, { vault_writes_disabled: false }, new Date().toISOString());

    const regional = await call(inside.key, 'GET', '/vault/secrets', undefined, { host: 'abc123.execute-api.eu-west-1.amazonaws.com' });
    expect(regional.status).toBe(403);
    expect(regional.json!.error.message).toMatch(/regional/);
    expect((await call(inside.key, 'GET', '/vault/secrets', undefined, { host: 'xyz.lambda-url.us-east-1.on.aws' })).status).toBe(403);
    // Through the CloudFront front door (which marks its requests with the deployment's token) the same
    // origin is the global hostname; a made-up marker is not.
    const frontDoor = store.depsWith({ GATEWAY_FRONT_DOOR_TOKEN: 'token-from-the-deployment' });
    expect((await call(inside.key, 'GET', '/vault/secrets', undefined, { host: 'abc123.execute-api.eu-west-1.amazonaws.com', 'x-gateway-front-door': 'token-from-the-deployment' }, frontDoor)).status).toBe(200);
    expect((await call(inside.key, 'GET', '/vault/secrets', undefined, { host: 'abc123.execute-api.eu-west-1.amazonaws.com', 'x-gateway-front-door': '1' }, frontDoor)).status).toBe(403);
    expect((await call(inside.key, 'GET', '/vault/secrets', undefined, { host: 'abc123.execute-api.eu-west-1.amazonaws.com', 'x-gateway-front-door': 'anything' })).status).toBe(403);
    expect((await call(inside.admin, 'GET', '/vault/secrets')).status).toBe(403);
  });
});

describe('workspace deletion', () => {
  it('takes the workspace\'s vault with it, and waits for its interns to go first', async () => {
    const owner = await member();
    const created = await call(owner.admin, 'POST', '/workspaces', { name: 'Temp', slug: 'temp' });
    const workspaceId = created.json!.data.id as string;
    const key = await call(owner.admin, 'POST', '/keys', { name: 'temp key', workspace_id: workspaceId });
    await call(key.json!.key as string, 'PUT', '/vault/secrets/temp_secret', { hosts: ['t.example.com'], value: 'temporary' });
    const intern = await call(key.json!.key as string, 'POST', '/interns', { name: 'Temp intern' });
    await call(owner.admin, 'DELETE', `/keys/${key.json!.data.hash}`);
    const blocked = await call(owner.admin, 'DELETE', '/workspaces/temp');
    expect(blocked.status).toBe(409);
    expect(blocked.json!.error.message).toMatch(/interns/);
    await new InternRepository(db, store.tableName).deleteIntern(owner.tenant.orgId, intern.json!.id as string);
    expect((await call(owner.admin, 'DELETE', '/workspaces/temp')).json).toEqual({ deleted: true });
    const vaultId = vaultIdOf({ orgId: owner.tenant.orgId, workspaceId, purpose: 'vault' });
    expect(await new VaultRepository(db, store.tableName).getDataKey(vaultId)).toBeUndefined();
    expect(await new VaultRepository(db, store.tableName).listSecrets(vaultId)).toEqual([]);
  });
});

describe('copy and interns', () => {
  it('copies named workspace secrets into an intern\'s vault, re-sealed, all or nothing', async () => {
    const owner = await member();
    await call(owner.key, 'PUT', '/vault/secrets/one', { hosts: ['one.example.com'], value: 'v1' });
    await call(owner.key, 'PUT', '/vault/secrets/two', { hosts: ['two.example.com'], value: 'v2' });
    const intern = await internOf(owner);
    expect((await call(owner.key, 'POST', `/vault/interns/${intern.id}/secrets/copy`, { names: ['one', 'missing'] })).status).toBe(404);
    expect((await call(owner.key, 'GET', `/vault/interns/${intern.id}/secrets`)).json!.data).toEqual([]);
    const copied = await call(owner.key, 'POST', `/vault/interns/${intern.id}/secrets/copy`, { names: ['one', 'two'] });
    expect(copied.status).toBe(200);
    expect(copied.json!.data.map((s: Json) => [s.name, s.hosts])).toEqual([['one', ['one.example.com']], ['two', ['two.example.com']]]);
    const source = (await call(owner.key, 'GET', '/vault/secrets/one')).json!.data;
    expect(copied.json!.data[0].fingerprint).not.toBe(source.fingerprint);
    const ref: VaultRef = { orgId: owner.tenant.orgId, workspaceId: owner.tenant.workspaceId, internId: intern.id, purpose: 'vault' };
    expect(await store.deps.vault!.release(ref, 'two', 'https://two.example.com/', 'test')).toBe('v2');
    expect((await call(owner.key, 'POST', `/vault/interns/${intern.id}/secrets/copy`, { names: ['one', 'one'] })).status).toBe(400);
  });

  it('creates, lists, reads, updates, suspends, provisions and deletes interns; deletion takes their keys and vault', async () => {
    const owner = await member();
    const created = await call(owner.key, 'POST', '/interns', { name: 'Grace', description: 'helps' });
    expect(created.json).toMatchObject({ name: 'Grace', description: 'helps', status: 'queued', workspace_id: owner.tenant.workspaceId, progress: null, attached_vault_id: null });
    const id = created.json!.id as string;
    expect((await call(owner.key, 'POST', '/interns', { name: 'Grace' })).status).toBe(409);
    expect((await call(owner.key, 'GET', '/interns')).json!.data.map((i: Json) => i.id)).toEqual([id]);
    expect((await call(owner.key, 'PATCH', `/interns/${id}`, { model: 'openai/gpt-4o', instructions: null })).json).toMatchObject({ model: 'openai/gpt-4o', instructions: null });
    expect((await call(owner.key, 'PATCH', `/interns/${id}`, { model: 'gpt-4o' })).status).toBe(400);
    expect((await call(owner.key, 'POST', `/interns/${id}/provision`)).json).toEqual({ provisioning: true });
    expect((await call(owner.key, 'GET', `/interns/${id}`)).json!.status).toBe('running');
    expect((await call(owner.key, 'POST', `/interns/${id}/suspend`)).json).toEqual({ suspended: true });
    expect((await call(owner.key, 'GET', '/interns', undefined)).json!.data[0].status).toBe('stopped');
    const key = (await call(owner.key, 'POST', `/interns/${id}/keys`, { name: 'runtime' })).json!;
    await call(key.key as string, 'PUT', '/vault/secrets/held', { hosts: ['h.example.com'], value: 'gone soon' });
    const deleted = await call(owner.key, 'DELETE', `/interns/${id}`);
    expect(deleted).toEqual({ status: 202, json: { deleting: true } });
    expect((await call(owner.key, 'GET', `/interns/${id}`)).status).toBe(404);
    expect((await call(key.key as string, 'GET', '/vault/secrets')).status).toBe(401);
    const vaultId = vaultIdOf({ orgId: owner.tenant.orgId, workspaceId: owner.tenant.workspaceId, internId: id, purpose: 'vault' });
    expect(await new VaultRepository(db, store.tableName).getDataKey(vaultId)).toBeUndefined();
    expect(await scanAll()).not.toContain(itemKeys.vaultSecret(vaultId, 'held').pk);
  });
});
