// The operator command as a process, against a local data directory (it starts DynamoDB Local itself when no gateway runs).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestStore, type TestStore } from '../support/store.js';

const dataDir = mkdtempSync(join(tmpdir(), 'gateway-admin-'));
let store: TestStore;
beforeAll(async () => { store = await createTestStore(); });
afterAll(async () => {
  rmSync(dataDir, { recursive: true, force: true });
  await store.drop();
});

/** Runs the command against a table in the test run's DynamoDB Local (as against a deployed table). */
function admin(...args: string[]) {
  return run([...args, '--endpoint', store.endpoint, '--table', store.tableName]);
}

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'bin/admin.ts', ...args], { env: process.env }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('npm run admin', () => {
  it('creates, lists and revokes management keys', async () => {
    const created = await admin('create-management-key', '--name', 'ops', '--expires', '2099-01-01T00:00:00Z', '--json');
    expect(created.code).toBe(0);
    const key = JSON.parse(created.stdout) as { key: string; hash: string; expires_at: string };
    expect(key.key).toMatch(/^sk-gw-v1-/);
    expect(key.expires_at).toBe('2099-01-01T00:00:00.000Z');

    const listed = JSON.parse((await admin('list-management-keys', '--json')).stdout) as Array<{ hash: string; name: string; expired: boolean }>;
    expect(listed).toEqual([expect.objectContaining({ hash: key.hash, name: 'ops', expired: false })]);
    expect(JSON.stringify(listed)).not.toContain(key.key);

    expect((await admin('revoke-management-key', key.hash)).code).toBe(0);
    expect(JSON.parse((await admin('list-management-keys', '--json')).stdout)).toEqual([]);
    expect((await admin('revoke-management-key', key.hash)).code).toBe(2);
  }, 60_000);

  it('creates personal accounts and keys inside them', async () => {
    const org = JSON.parse((await admin('create-organization', '--name', 'Jo', '--personal', '--json')).stdout) as { org_id: string; kind: string };
    expect(org.kind).toBe('personal');
    const created = await admin('create-management-key', '--name', 'jo', '--org', org.org_id, '--json');
    expect(JSON.parse(created.stdout)).toMatchObject({ org_id: org.org_id });
  }, 60_000);

  it('adds credits to an organization and shows its balance', async () => {
    const org = JSON.parse((await admin('create-organization', '--name', 'Paying', '--credits', '2.5', '--json')).stdout) as { org_id: string };
    const added = await admin('add-credits', '--org', org.org_id, '--amount', '10.000000001', '--note', 'PO 7', '--json');
    expect(added.code).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({ org_id: org.org_id, amount: '10.000000001', total_credits: '12.500000001', total_usage: '0' });
    const corrected = await admin('add-credits', '--org', org.org_id, '--amount=-0.000000001', '--json');
    expect(JSON.parse(corrected.stdout)).toMatchObject({ total_credits: '12.5' });
    const shown = JSON.parse((await admin('credits', '--org', org.org_id, '--json')).stdout) as Record<string, string>;
    expect(shown).toEqual({ org_id: org.org_id, total_credits: '12.5', total_usage: '0', held: '0', available: '12.5' });
    expect(await store.deps.organizations.get(org.org_id)).toMatchObject({ total_credits: 12_500_000_000n });
    expect((await admin('add-credits', '--org', org.org_id, '--amount', '1.0000000001')).code).toBe(2);
    expect((await admin('add-credits', '--org', org.org_id)).code).toBe(2);
    expect((await admin('add-credits', '--org', 'missing', '--amount', '1')).code).toBe(2);
    expect((await admin('create-organization', '--name', 'Neg', '--credits', '-1')).code).toBe(2);
  }, 60_000);

  it('adds, lists and removes members of an organization, starting with its owner', async () => {
    const org = JSON.parse((await admin('create-organization', '--name', 'People', '--owner-email', 'boss@people.example', '--json')).stdout) as { org_id: string; workspace_id: string; owner_email: string };
    expect(org.owner_email).toBe('boss@people.example');
    const added = await admin('add-member', '--org', org.org_id, '--workspace', org.workspace_id, '--email', 'Dev@People.example', '--first-name', 'Dev', '--json');
    expect(added.code).toBe(0);
    const member = JSON.parse(added.stdout) as { id: string; email: string; role: string };
    expect(member).toMatchObject({ email: 'dev@people.example', role: 'org:member' });
    expect((await admin('add-member', '--org', org.org_id, '--email', 'dev@people.example')).code).toBe(2);
    const listed = JSON.parse((await admin('list-members', '--org', org.org_id, '--json')).stdout) as Array<{ email: string; role: string }>;
    expect(listed.map((entry) => [entry.email, entry.role])).toEqual([['boss@people.example', 'org:admin'], ['dev@people.example', 'org:member']]);
    expect((await store.deps.members.workspaceMembers(org.org_id, org.workspace_id)).map((entry) => entry.user_id)).toContain(member.id);
    expect((await admin('remove-member', '--org', org.org_id, '--email', 'dev@people.example')).code).toBe(0);
    expect((await store.deps.members.workspaceMembers(org.org_id, org.workspace_id)).map((entry) => entry.user_id)).not.toContain(member.id);
    expect((await admin('remove-member', '--org', org.org_id, '--email', 'dev@people.example')).code).toBe(2);
    expect((await admin('add-member', '--org', org.org_id, '--email', 'not-an-email')).code).toBe(2);
  }, 60_000);

  it('switches an organization\'s intern programme and vault writes', async () => {
    const org = JSON.parse((await admin('create-organization', '--name', 'Switchy', '--json')).stdout) as { org_id: string };
    const on = await admin('set-organization', '--org', org.org_id, '--intern-programme', 'on', '--vault-writes', 'off', '--json');
    expect(JSON.parse(on.stdout)).toEqual({ org_id: org.org_id, intern_programme: true, vault_writes: false });
    expect(await store.deps.organizations.get(org.org_id)).toMatchObject({ intern_programme: true, vault_writes_disabled: true });
    expect((await admin('set-organization', '--org', org.org_id)).code).toBe(2);
    expect((await admin('set-organization', '--org', org.org_id, '--vault-writes', 'maybe')).code).toBe(2);
  }, 60_000);

  it('uses the local data directory when no table is named, starting DynamoDB Local itself', async () => {
    const created = await run(['create-management-key', '--name', 'local', '--data-dir', dataDir, '--json']);
    expect(created.code).toBe(0);
    const listed = await run(['list-management-keys', '--data-dir', dataDir, '--json']);
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ name: 'local', hash: JSON.parse(created.stdout).hash })]);
  }, 60_000);

  it('explains bad usage with exit code 2', async () => {
    for (const args of [['create-management-key'], ['create-management-key', '--name', 'x', '--expires', 'soon'], ['create-management-key', '--name', 'x', '--expires', '2001-01-01T00:00:00Z'], ['fly'], ['revoke-management-key', 'abc'], ['list-management-keys', '--bogus']]) {
      const result = await admin(...args);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('usage: npm run admin');
    }
  }, 60_000);
});
