// Operator command: management keys and organizations, against the local store or a deployed table.
//
//   npm run admin -- create-management-key --name ops [--expires 2027-01-01T00:00:00Z] [--org ID --workspace ID]
//   npm run admin -- list-management-keys [--org ID]
//   npm run admin -- revoke-management-key HASH
//   npm run admin -- create-organization --name Acme [--personal] [--credits 25]
//   npm run admin -- add-credits --amount 25 [--org ID] [--note TEXT]
//   npm run admin -- credits [--org ID]
//   npm run admin -- set-organization [--org ID] [--intern-programme on|off] [--vault-writes on|off]
//   npm run admin -- add-member --email E [--first-name F] [--last-name L] [--role admin|member] [--org ID] [--workspace ID]
//   npm run admin -- remove-member --email E [--org ID]
//   npm run admin -- list-members [--org ID]
//
// Target: the local gateway's store by default (GATEWAY_DATA_DIR); a deployed table with
// --table NAME [--region REGION] (credentials from the usual AWS chain). --json prints JSON.
import { parseArgs } from 'node:util';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDocumentClient } from '../lambdas/platform/dynamo/client.js';
import { ApiKeyRepository } from '../lambdas/keys/api-key-repository.js';
import { OrganizationRepository } from '../lambdas/organizations/organization-repository.js';
import { WorkspaceRepository } from '../lambdas/organizations/workspace-repository.js';
import { MemberRepository } from '../lambdas/organizations/member-repository.js';
import { newMember } from '../lambdas/organizations/members.js';

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,253}$/;
import { ensureTable } from '../lambdas/platform/dynamo/create-table.js';
import { ensureDefaultOrganization } from '../lambdas/organizations/default-organization.js';
import { createOrganization } from '../lambdas/organizations/create-organization.js';
import { newApiKey } from '../lambdas/keys/new-key.js';
import { CreditRepository, newCreditGrant } from '../lambdas/credits/index.js';
import { MoneyFormatError, nanosToDecimal, usdToNanos } from '../lambdas/platform/money.js';
import { startDynamoDbLocal, type DynamoDbLocal } from './local/dynamodb-local.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const USAGE = `usage: npm run admin -- <command> [options]
commands:
  create-management-key --name NAME [--expires ISO-8601] [--org ID --workspace ID]
  list-management-keys [--org ID]
  revoke-management-key HASH
  create-organization --name NAME [--personal] [--credits USD] [--owner-email EMAIL]
  add-member --email EMAIL [--first-name F] [--last-name L] [--role admin|member] [--org ID] [--workspace ID]
  remove-member --email EMAIL [--org ID]   (also from every workspace)
  list-members [--org ID]
  add-credits --amount USD [--org ID] [--note TEXT]   (--amount=-5 corrects an earlier grant)
  credits [--org ID]
  set-organization [--org ID] [--intern-programme on|off] [--vault-writes on|off]
target options:
  --table NAME [--region REGION] [--endpoint URL]   a deployed table (default: the local gateway's store)
  --data-dir DIR                                    local data directory (default: GATEWAY_DATA_DIR or .gateway-data)
  --json                                            print JSON`;

class UsageError extends Error {}

interface Target {
  keys: ApiKeyRepository;
  organizations: OrganizationRepository;
  members: MemberRepository;
  workspaces: WorkspaceRepository;
  credits: CreditRepository;
  close(): Promise<void>;
}

async function openTarget(values: Record<string, string | boolean | undefined>): Promise<Target> {
  let endpoint = values.endpoint as string | undefined;
  let tableName = values.table as string | undefined;
  let localDb: DynamoDbLocal | undefined;
  if (!tableName) {
    const dataDir = resolve((values['data-dir'] as string | undefined) ?? process.env.GATEWAY_DATA_DIR ?? '.gateway-data');
    const runtimeFile = join(dataDir, 'runtime.json');
    const running = existsSync(runtimeFile) ? JSON.parse(readFileSync(runtimeFile, 'utf8')) as { pid: number; dynamodb_endpoint: string; table_name: string } : undefined;
    if (running && isAlive(running.pid)) {
      endpoint = running.dynamodb_endpoint;
      tableName = running.table_name;
    } else {
      localDb = await startDynamoDbLocal({ dataDir: join(dataDir, 'dynamodb') });
      endpoint = localDb.endpoint;
      tableName = process.env.TABLE_NAME || 'gateway';
      const admin = new DynamoDBClient({ endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
      await ensureTable(admin, tableName);
      admin.destroy();
    }
  }
  const db = createDocumentClient({ endpoint, region: (values.region as string | undefined) ?? process.env.AWS_REGION });
  return {
    keys: new ApiKeyRepository(db, tableName),
    organizations: new OrganizationRepository(db, tableName),
    members: new MemberRepository(db, tableName),
    workspaces: new WorkspaceRepository(db, tableName),
    credits: new CreditRepository(db, tableName),
    close: async () => {
      db.destroy();
      await localDb?.stop();
    },
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function resolveScope(target: Target, values: Record<string, string | boolean | undefined>, needWorkspace = true): Promise<{ orgId: string; workspaceId: string; orgKind: 'organization' | 'personal' }> {
  const orgId = values.org as string | undefined;
  if (!orgId) {
    const defaults = await ensureDefaultOrganization(target.organizations, { credits: 0n, now: new Date(), owner: { email: process.env.GATEWAY_OWNER_EMAIL?.trim() || 'owner@localhost' } });
    return { orgId: defaults.org_id, workspaceId: defaults.workspace_id, orgKind: 'organization' };
  }
  const org = await target.organizations.get(orgId);
  if (!org) throw new UsageError(`no organization ${orgId}`);
  if (!needWorkspace) return { orgId, workspaceId: '', orgKind: org.kind };
  let workspaceId = values.workspace as string | undefined;
  if (workspaceId) {
    if (!(await target.workspaces.getWorkspace(orgId, workspaceId))) throw new UsageError(`no workspace ${workspaceId} in organization ${orgId}`);
  } else {
    const workspaces = await target.workspaces.listWorkspaces(orgId);
    if (workspaces.length !== 1) throw new UsageError(`organization ${orgId} has ${workspaces.length} workspaces: name one with --workspace`);
    workspaceId = workspaces[0]!.id;
  }
  return { orgId, workspaceId, orgKind: org.kind };
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' }, expires: { type: 'string' }, org: { type: 'string' }, workspace: { type: 'string' },
      personal: { type: 'boolean' }, credits: { type: 'string' }, amount: { type: 'string' }, note: { type: 'string' },
      'intern-programme': { type: 'string' }, 'vault-writes': { type: 'string' },
      email: { type: 'string' }, 'first-name': { type: 'string' }, 'last-name': { type: 'string' }, role: { type: 'string' }, 'owner-email': { type: 'string' },
      table: { type: 'string' }, region: { type: 'string' }, endpoint: { type: 'string' }, 'data-dir': { type: 'string' },
      json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, ...rest] = positionals;
  if (!command || values.help) {
    console.log(USAGE);
    return command ? 0 : 2;
  }
  const print = (json: unknown, text: string) => console.log(values.json ? JSON.stringify(json, null, 2) : text);

  if (!['create-management-key', 'list-management-keys', 'revoke-management-key', 'create-organization', 'add-credits', 'credits', 'set-organization', 'add-member', 'remove-member', 'list-members'].includes(command)) {
    throw new UsageError(`unknown command "${command}"`);
  }
  if (command === 'create-management-key' || command === 'create-organization') {
    if (!values.name || values.name.trim() === '') throw new UsageError('--name is required');
  }
  let expiresAt: string | null = null;
  if (values.expires) {
    const time = Date.parse(values.expires);
    if (Number.isNaN(time)) throw new UsageError(`--expires is not an ISO 8601 time: ${values.expires}`);
    if (time <= Date.now()) throw new UsageError('--expires must be in the future');
    expiresAt = new Date(time).toISOString();
  }
  if (command === 'revoke-management-key' && !/^[0-9a-f]{64}$/.test(rest[0] ?? '')) throw new UsageError('revoke-management-key takes the key hash (64 hex characters)');
  let amount = 0n;
  for (const [flag, text] of [['--credits', values.credits], ['--amount', values.amount]] as const) {
    if (text === undefined) continue;
    try {
      amount = usdToNanos(text);
    } catch (err) {
      if (err instanceof MoneyFormatError) throw new UsageError(`${flag} must be a USD amount such as 25 or 10.50: ${err.message}`);
      throw err;
    }
  }
  if (values.credits !== undefined && amount < 0n) throw new UsageError('--credits must not be negative');
  if (command === 'add-credits' && (values.amount === undefined || amount === 0n)) throw new UsageError('--amount is required and must not be 0');
  const onOff = (flag: string, value: string | undefined): boolean | undefined => {
    if (value === undefined) return undefined;
    if (value !== 'on' && value !== 'off') throw new UsageError(`--${flag} takes on or off, got "${value}"`);
    return value === 'on';
  };
  const internProgramme = onOff('intern-programme', values['intern-programme']);
  const vaultWrites = onOff('vault-writes', values['vault-writes']);
  if (command === 'set-organization' && internProgramme === undefined && vaultWrites === undefined) throw new UsageError('set-organization needs --intern-programme and/or --vault-writes');
  const email = values.email?.trim();
  if ((command === 'add-member' || command === 'remove-member') && (!email || !EMAIL.test(email))) throw new UsageError('--email is required and must be an email address');
  if (values['owner-email'] !== undefined && !EMAIL.test(values['owner-email'].trim())) throw new UsageError('--owner-email must be an email address');
  if (values.role !== undefined && values.role !== 'admin' && values.role !== 'member') throw new UsageError(`--role takes admin or member, got "${values.role}"`);
  if (command === 'add-member' && values.workspace !== undefined && values.org === undefined) throw new UsageError('add-member --workspace needs --org too');

  const target = await openTarget(values);
  try {
    switch (command) {
      case 'create-management-key': {
        const scope = await resolveScope(target, values);
        const { key, text } = newApiKey({ ...scope, kind: 'management', name: values.name!.trim(), expiresAt, now: new Date() });
        await target.keys.create(key);
        print({ key: text, hash: key.hash, name: key.name, expires_at: key.expires_at, org_id: key.org_id, workspace_id: key.workspace_id },
          `Management key (shown once): ${text}\n  hash ${key.hash}\n  organization ${key.org_id}, workspace ${key.workspace_id}\n  expires ${key.expires_at ?? 'never'}`);
        return 0;
      }
      case 'list-management-keys': {
        const scope = await resolveScope(target, values);
        const all = await target.keys.list(scope.orgId, { offset: 0, pageSize: Number.MAX_SAFE_INTEGER, includeDisabled: true });
        const keys = all.filter((key) => key.kind === 'management').map((key) => ({
          hash: key.hash, name: key.name, label: key.label, disabled: key.disabled, created_at: key.created_at, expires_at: key.expires_at,
          expired: key.expires_at !== null && Date.parse(key.expires_at) <= Date.now(),
        }));
        print(keys, keys.length
          ? keys.map((key) => `${key.hash}  ${key.label}  ${key.name}  created ${key.created_at}  expires ${key.expires_at ?? 'never'}${key.expired ? ' (expired)' : ''}${key.disabled ? ' (disabled)' : ''}`).join('\n')
          : 'no management keys');
        return 0;
      }
      case 'revoke-management-key': {
        const hash = rest[0]!;
        const key = await target.keys.get(hash);
        if (!key || key.kind !== 'management') throw new UsageError(`no management key ${hash}`);
        await target.keys.delete(hash, key.org_id);
        print({ deleted: true, hash }, `revoked ${hash}`);
        return 0;
      }
      case 'create-organization': {
        const { org, workspace, owner } = await createOrganization(target.organizations, {
          name: values.name!.trim(), kind: values.personal ? 'personal' : 'organization', credits: amount, now: new Date(),
          ...(values['owner-email'] ? { owner: { email: values['owner-email'].trim() } } : {}),
        });
        print({ org_id: org.id, kind: org.kind, workspace_id: workspace.id, owner_user_id: owner.id, owner_email: owner.email },
          `organization ${org.id} (${org.kind}), workspace ${workspace.id}, owner ${owner.email} (${owner.id})`);
        return 0;
      }
      case 'add-credits': {
        const { orgId } = await resolveScope(target, { ...values, workspace: undefined }, false);
        const grant = newCreditGrant({ amount, note: values.note ?? null, by: 'operator', now: new Date() });
        const org = await target.credits.addCredits(orgId, grant);
        if (!org) throw new UsageError(`no organization ${orgId}`);
        print({ org_id: org.id, grant_id: grant.id, amount: nanosToDecimal(amount), total_credits: nanosToDecimal(org.total_credits), total_usage: nanosToDecimal(org.total_usage) },
          `added $${nanosToDecimal(amount)} to ${org.id}: credits $${nanosToDecimal(org.total_credits)}, used $${nanosToDecimal(org.total_usage)}, held $${nanosToDecimal(org.held)}`);
        return 0;
      }
      case 'set-organization': {
        const { orgId } = await resolveScope(target, { ...values, workspace: undefined }, false);
        const org = await target.organizations.setFlags(orgId, {
          ...(internProgramme !== undefined ? { intern_programme: internProgramme } : {}),
          ...(vaultWrites !== undefined ? { vault_writes_disabled: !vaultWrites } : {}),
        }, new Date().toISOString());
        if (!org) throw new UsageError(`no organization ${orgId}`);
        print({ org_id: org.id, intern_programme: org.intern_programme, vault_writes: !org.vault_writes_disabled },
          `${org.id}: intern programme ${org.intern_programme ? 'on' : 'off'}, vault writes ${org.vault_writes_disabled ? 'off' : 'on'}`);
        return 0;
      }
      case 'add-member': {
        const scope = await resolveScope(target, values, values.workspace !== undefined);
        const now = new Date().toISOString();
        const member = newMember(scope.orgId, { email: email!, firstName: values['first-name'] ?? null, lastName: values['last-name'] ?? null, role: values.role === 'admin' ? 'org:admin' : 'org:member' }, now);
        const workspaces = values.workspace ? [{ id: `${scope.workspaceId}:${member.id}`, workspace_id: scope.workspaceId, user_id: member.id, role: 'member' as const, created_at: now }] : [];
        if (!(await target.members.add(member, workspaces))) throw new UsageError(`organization ${scope.orgId} has a member ${member.email} already`);
        print(member, `added ${member.email} (${member.id}) to ${scope.orgId} as ${member.role}${values.workspace ? `, and to workspace ${scope.workspaceId}` : ''}`);
        return 0;
      }
      case 'remove-member': {
        const { orgId } = await resolveScope(target, { ...values, workspace: undefined }, false);
        const member = await target.members.byEmail(orgId, email!);
        if (!member) throw new UsageError(`organization ${orgId} has no member ${email}`);
        await target.members.remove(member);
        print({ removed: true, user_id: member.id }, `removed ${member.email} (${member.id}) and their workspace memberships`);
        return 0;
      }
      case 'list-members': {
        const { orgId } = await resolveScope(target, { ...values, workspace: undefined }, false);
        const members = await target.members.list(orgId);
        print(members, members.length ? members.map((member) => `${member.id}  ${member.email}  ${member.role}  since ${member.created_at}`).join('\n') : 'no members');
        return 0;
      }
      case 'credits': {
        const { orgId } = await resolveScope(target, { ...values, workspace: undefined }, false);
        const org = await target.organizations.get(orgId);
        if (!org) throw new UsageError(`no organization ${orgId}`);
        const available = org.total_credits - org.total_usage - org.held;
        print({ org_id: org.id, total_credits: nanosToDecimal(org.total_credits), total_usage: nanosToDecimal(org.total_usage), held: nanosToDecimal(org.held), available: nanosToDecimal(available) },
          `${org.id}: credits $${nanosToDecimal(org.total_credits)}, used $${nanosToDecimal(org.total_usage)}, held $${nanosToDecimal(org.held)}, available $${nanosToDecimal(available)}`);
        return 0;
      }
    }
    return 2;
  } finally {
    await target.close();
  }
}

main(process.argv.slice(2)).then((code) => process.exit(code), (err: unknown) => {
  if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    console.error(`error: ${(err as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
