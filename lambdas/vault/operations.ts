// Vault routes (workspace and intern secrets, copy, effective secrets) and the intern routes that give the
// vault's scopes something to refer to. Scope rules: the key selects the scope, with no
// default workspace and no fallback; everything answers 404 outside the intern programme; an intern's own key
// is confined to that intern; writes answer 503 while vault writes are disabled; regional hostnames are refused.
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { ManagementOperations } from '../app/routes.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError, ServiceUnavailableError } from '../platform/http/errors.js';
import { principalOf, type Principal } from '../platform/http/auth.js';
import type { GatewayDeps } from '../app/deps.js';
import type { GatewayRequest } from '../platform/http/request.js';
import type { ApiKey } from '../keys/types.js';
import { newApiKey } from '../keys/new-key.js';
import { hashKey, hashesEqual } from '../keys/key-format.js';
import { keyView } from '../keys/key-view.js';
import type { Intern, InternStatus } from './vault-repository.js';
import type { Organization } from '../organizations/types.js';
import { vaultIdOf, type VaultRef } from './envelope.js';
import { HostError, normalizeHosts } from './hosts.js';
import type { SecretMetadata, Vault } from './vault.js';
import { INTERN_STATUSES, secretNameSchema, type internSchema } from './schemas.js';
import { FRONT_DOOR_HEADER } from './front-door-header.js';

type VaultOperations = Pick<ManagementOperations,
  | 'listVaultSecrets' | 'getVaultSecret' | 'putVaultSecret' | 'deleteVaultSecret'
  | 'listInternVaultSecrets' | 'getInternVaultSecret' | 'putInternVaultSecret' | 'deleteInternVaultSecret'
  | 'copyVaultSecretsToIntern' | 'listInternEffectiveSecrets'
  | 'listInterns' | 'createIntern' | 'getIntern' | 'updateIntern' | 'deleteIntern' | 'provisionIntern' | 'suspendIntern' | 'createInternKey'>;

const NOT_FOUND = 'Not found';
/** The AWS regional endpoints a deployment also answers on; the CloudFront front door marks its requests. */
const REGIONAL_AWS_HOST = /\.(execute-api\.[a-z0-9-]+\.amazonaws\.com|lambda-url\.[a-z0-9-]+\.on\.aws)$/;

interface Caller {
  key: ApiKey;
  org: Organization;
}

/**
 * Rule 9: the vault is served only on the global hostname, never on a regional one. The raw AWS regional
 * endpoints count as global only for requests CloudFront marked with the deployment's front-door token.
 */
export function isRegionalHost(request: GatewayRequest, env: NodeJS.ProcessEnv = process.env): boolean {
  const host = (request.host.split(':')[0] ?? '').toLowerCase();
  const configured = (env.GATEWAY_REGIONAL_HOSTNAMES ?? '').split(',').map((entry) => entry.trim().toLowerCase()).filter(Boolean);
  if (configured.includes(host)) return true;
  if (!REGIONAL_AWS_HOST.test(host)) return false;
  const token = env.GATEWAY_FRONT_DOOR_TOKEN;
  const sent = request.headers[FRONT_DOOR_HEADER];
  return !(token && sent && hashesEqual(hashKey(sent), hashKey(token)));
}

/** The caller of a vault or intern route: in the programme (else 404) and on the global hostname. */
async function callerOf(principal: Principal | null, request: GatewayRequest, deps: GatewayDeps): Promise<Caller> {
  const { key } = principalOf(principal);
  const org = await deps.organizations.get(key.org_id);
  if (!org?.intern_programme) throw new NotFoundError(NOT_FOUND);
  if (isRegionalHost(request)) throw new ForbiddenError('The vault is not served on regional hostnames; use the global base URL');
  return { key, org };
}

function vaultOf(deps: GatewayDeps): Vault {
  if (!deps.vault) throw new ServiceUnavailableError('The vault is not configured on this deployment (no KMS key)');
  return deps.vault;
}

function writable(caller: Caller): void {
  if (caller.org.vault_writes_disabled || process.env.GATEWAY_VAULT_WRITES === 'off') {
    throw new ServiceUnavailableError('Vault writes are disabled for this account; try again later');
  }
}

const workspaceVault = (key: ApiKey): VaultRef => ({ orgId: key.org_id, workspaceId: key.workspace_id, purpose: 'vault' });
const internVault = (key: ApiKey, internId: string): VaultRef => ({ orgId: key.org_id, workspaceId: key.workspace_id, internId, purpose: 'vault' });

/** The scope of /vault/secrets: the key's workspace, or the intern an intern's key belongs to. */
function keyScope(caller: Caller): VaultRef {
  return caller.key.intern_id ? internVault(caller.key, caller.key.intern_id) : workspaceVault(caller.key);
}

/** An intern of the key's workspace, for intern routes; 404 for any other (and for other interns' keys). */
async function internOf(caller: Caller, deps: GatewayDeps, internId: string | undefined): Promise<Intern> {
  if (!internId) throw new NotFoundError(NOT_FOUND);
  if (caller.key.intern_id && caller.key.intern_id !== internId) throw new NotFoundError(NOT_FOUND);
  const intern = await deps.interns.getIntern(caller.key.org_id, internId);
  if (!intern || intern.workspace_id !== caller.key.workspace_id) throw new NotFoundError(NOT_FOUND);
  return intern;
}

/** Routes an intern's own key never reaches (every workspace route and every other intern route). */
function notForInternKeys(caller: Caller): void {
  if (caller.key.intern_id) throw new NotFoundError(NOT_FOUND);
}

function nameParam(value: string | undefined): string {
  const parsed = secretNameSchema.safeParse(value ?? '');
  if (!parsed.success) throw new BadRequestError(`Invalid path parameter name: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data;
}

function hostsOf(hosts: string[]): string[] {
  try {
    return normalizeHosts(hosts);
  } catch (err) {
    if (err instanceof HostError) throw new BadRequestError(err.message);
    throw err;
  }
}

function page<T>(all: T[], query: { limit?: number | undefined; offset?: number | undefined }): { data: T[]; has_more: boolean } {
  const offset = query.offset ?? 0;
  const limit = query.limit ?? 100;
  return { data: all.slice(offset, offset + limit), has_more: offset + limit < all.length };
}

export function internView(intern: Intern): z.infer<typeof internSchema> {
  return {
    id: intern.id,
    name: intern.name,
    description: intern.description,
    instructions: intern.instructions,
    model: intern.model,
    status: intern.status,
    progress: null,
    hostname: null,
    last_failure_message: null,
    vault_id: vaultIdOf({ orgId: intern.org_id, workspaceId: intern.workspace_id, internId: intern.id, purpose: 'vault' }),
    attached_vault_id: null,
    workspace_id: intern.workspace_id,
    created_at: intern.created_at,
    updated_at: intern.updated_at,
  };
}

async function putSecret(vault: Vault, ref: VaultRef, name: string, body: { hosts: string[]; value: string }): Promise<{ data: SecretMetadata }> {
  return { data: await vault.put(ref, name, hostsOf(body.hosts), body.value) };
}

export const vaultOperations: VaultOperations = {
  async listVaultSecrets({ principal, request, query, deps }) {
    const caller = await callerOf(principal, request, deps);
    return { body: page(await vaultOf(deps).list(keyScope(caller)), query) };
  },

  async getVaultSecret({ principal, request, params, deps }) {
    const caller = await callerOf(principal, request, deps);
    const name = nameParam(params.name);
    const secret = await vaultOf(deps).get(keyScope(caller), name);
    if (!secret) throw new NotFoundError(`Secret not found: ${name}`);
    return { body: { data: secret } };
  },

  async putVaultSecret({ principal, request, params, body, deps }) {
    const caller = await callerOf(principal, request, deps);
    const name = nameParam(params.name);
    writable(caller);
    return { body: await putSecret(vaultOf(deps), keyScope(caller), name, body) };
  },

  async deleteVaultSecret({ principal, request, params, deps }) {
    const caller = await callerOf(principal, request, deps);
    const name = nameParam(params.name);
    writable(caller);
    if (!(await vaultOf(deps).delete(keyScope(caller), name))) throw new NotFoundError(`Secret not found: ${name}`);
    return { status: 204, body: undefined };
  },

  async listInternVaultSecrets({ principal, request, params, query, deps }) {
    const caller = await callerOf(principal, request, deps);
    const intern = await internOf(caller, deps, params.internId);
    return { body: page(await vaultOf(deps).list(internVault(caller.key, intern.id)), query) };
  },

  async getInternVaultSecret({ principal, request, params, deps }) {
    const caller = await callerOf(principal, request, deps);
    const intern = await internOf(caller, deps, params.internId);
    const name = nameParam(params.name);
    const secret = await vaultOf(deps).get(internVault(caller.key, intern.id), name);
    if (!secret) throw new NotFoundError(`Secret not found: ${name}`);
    return { body: { data: secret } };
  },

  async putInternVaultSecret({ principal, request, params, body, deps }) {
    const caller = await callerOf(principal, request, deps);
    const intern = await internOf(caller, deps, params.internId);
    const name = nameParam(params.name);
    writable(caller);
    return { body: await putSecret(vaultOf(deps), internVault(caller.key, intern.id), name, body) };
  },

  async deleteInternVaultSecret({ principal, request, params, deps }) {
    const caller = await callerOf(principal, request, deps);
    const intern = await internOf(caller, deps, params.internId);
    const name = nameParam(params.name);
    writable(caller);
    if (!(await vaultOf(deps).delete(internVault(caller.key, intern.id), name))) throw new NotFoundError(`Secret not found: ${name}`);
    return { status: 204, body: undefined };
  },

  async copyVaultSecretsToIntern({ principal, request, params, body, deps }) {
    const caller = await callerOf(principal, request, deps);
    notForInternKeys(caller);
    const intern = await internOf(caller, deps, params.internId);
    writable(caller);
    const result = await vaultOf(deps).copy(workspaceVault(caller.key), internVault(caller.key, intern.id), body.names);
    if ('missing' in result) throw new NotFoundError(`Secret not found in the workspace vault: ${result.missing}`);
    if ('unbound' in result) throw new ConflictError(`Secret ${result.unbound} has no bound hosts; store it again with hosts before copying it`);
    return { body: { data: result.copied } };
  },

  async listInternEffectiveSecrets({ principal, request, params, query, deps }) {
    const caller = await callerOf(principal, request, deps);
    const intern = await internOf(caller, deps, params.internId);
    const vault = vaultOf(deps);
    const own = await vault.list(internVault(caller.key, intern.id));
    const workspace = await vault.list(workspaceVault(caller.key));
    const byName = new Map<string, SecretMetadata & { scope: 'intern' | 'attached' | 'workspace' }>();
    for (const secret of workspace) byName.set(secret.name, { ...secret, scope: 'workspace' });
    for (const secret of own) byName.set(secret.name, { ...secret, scope: 'intern' });
    const merged = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
    return { body: page(merged, query) };
  },

  async listInterns({ principal, request, query, deps }) {
    const caller = await callerOf(principal, request, deps);
    notForInternKeys(caller);
    if (query.workspace_id !== undefined && query.workspace_id !== caller.key.workspace_id) {
      throw new BadRequestError('Invalid workspace_id: must be the workspace of the API key');
    }
    const statuses = query.status ? new Set(query.status.split(',').map((status) => status.trim()).filter(Boolean)) : undefined;
    for (const status of statuses ?? []) {
      if (!(INTERN_STATUSES as readonly string[]).includes(status)) throw new BadRequestError(`Invalid status: ${status}; one of ${INTERN_STATUSES.join(', ')}`);
    }
    const all = (await deps.interns.listInterns(caller.key.org_id))
      .filter((intern) => intern.workspace_id === caller.key.workspace_id && (!statuses || statuses.has(intern.status)))
      .sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id));
    let start = 0;
    if (query.starting_after) {
      start = all.findIndex((intern) => intern.id === query.starting_after) + 1;
      if (start === 0) throw new BadRequestError('Invalid starting_after: not a cursor of this list');
    }
    const limit = query.limit ?? 100;
    const data = all.slice(start, start + limit);
    const hasMore = start + limit < all.length;
    return { body: { data: data.map(internView), has_more: hasMore, ...(hasMore ? { next_cursor: data.at(-1)!.id } : {}) } };
  },

  async createIntern({ principal, request, body, deps }) {
    const caller = await callerOf(principal, request, deps);
    notForInternKeys(caller);
    if (body.workspace_id !== undefined && body.workspace_id !== caller.key.workspace_id) {
      throw new BadRequestError('Invalid body.workspace_id: must be the workspace of the API key');
    }
    const existing = await deps.interns.listInterns(caller.key.org_id);
    if (existing.some((intern) => intern.workspace_id === caller.key.workspace_id && intern.created_by === caller.key.hash && intern.name === body.name)) {
      throw new ConflictError(`An intern named "${body.name}" already exists in this workspace`);
    }
    const now = deps.clock().toISOString();
    const intern: Intern = {
      id: randomUUID(), org_id: caller.key.org_id, workspace_id: caller.key.workspace_id, name: body.name,
      description: body.description ?? null, instructions: body.instructions ?? null, model: null,
      status: body.provision ? 'running' : 'queued', created_by: caller.key.hash, created_at: now, updated_at: now,
    };
    await deps.interns.putIntern(intern);
    return { status: 201, body: internView(intern) };
  },

  async getIntern({ principal, request, params, deps }) {
    const caller = await callerOf(principal, request, deps);
    notForInternKeys(caller);
    return { body: internView(await internOf(caller, deps, params.internId)) };
  },

  async updateIntern({ principal, request, params, body, deps }) {
    const caller = await callerOf(principal, request, deps);
    notForInternKeys(caller);
    const intern = await internOf(caller, deps, params.internId);
    const updated: Intern = {
      ...intern,
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.description !== undefined ? { description: body.description } : {}),
      ...(body.instructions !== undefined ? { instructions: body.instructions } : {}),
      ...(body.model !== undefined ? { model: body.model } : {}),
      updated_at: deps.clock().toISOString(),
    };
    // Deleted meanwhile: do not bring it back.
    if (!(await deps.interns.putIntern(updated, true))) throw new NotFoundError(NOT_FOUND);
    return { body: internView(updated) };
  },

  async deleteIntern({ principal, request, params, deps }) {
    const caller = await callerOf(principal, request, deps);
    notForInternKeys(caller);
    const intern = await internOf(caller, deps, params.internId);
    // Teardown: the intern's keys, its private vault, then the intern itself.
    const keys = await deps.keys.list(caller.key.org_id, { offset: 0, pageSize: Number.MAX_SAFE_INTEGER, includeDisabled: true, workspaceId: intern.workspace_id });
    for (const key of keys.filter((candidate) => candidate.intern_id === intern.id)) {
      await deps.keys.delete(key.hash, key.org_id);
      deps.keyCache.invalidate(key.hash);
    }
    if (deps.vault) await deps.vault.destroy(internVault(caller.key, intern.id));
    await deps.interns.deleteIntern(intern.org_id, intern.id);
    return { status: 202, body: { deleting: true as const } };
  },

  async provisionIntern({ principal, request, params, deps }) {
    return transition(principal, request, params.internId, deps, 'running', { provisioning: true as const }, 202);
  },

  async suspendIntern({ principal, request, params, deps }) {
    return transition(principal, request, params.internId, deps, 'stopped', { suspended: true as const }, 200);
  },

  async createInternKey({ principal, request, params, body, deps }) {
    const caller = await callerOf(principal, request, deps);
    notForInternKeys(caller);
    const intern = await internOf(caller, deps, params.internId);
    const now = deps.clock();
    const { key, text } = newApiKey({
      orgId: caller.key.org_id, orgKind: caller.key.org_kind, workspaceId: intern.workspace_id, kind: 'standard',
      name: body.name ?? `${intern.name} (intern)`, internId: intern.id, creatorUserId: caller.key.creator_user_id, now,
    });
    await deps.keys.create(key);
    return { status: 201, body: { data: keyView(key, now), key: text } };
  },
};

async function transition<T>(principal: Principal | null, request: GatewayRequest, internId: string | undefined, deps: GatewayDeps, status: InternStatus, reply: T, code: number) {
  const caller = await callerOf(principal, request, deps);
  notForInternKeys(caller);
  const intern = await internOf(caller, deps, internId);
  if (intern.status === 'destroying') throw new ConflictError('The intern is being deleted');
  if (!(await deps.interns.putIntern({ ...intern, status, updated_at: deps.clock().toISOString() }, true))) throw new NotFoundError(NOT_FOUND);
  return { status: code, body: reply };
}
