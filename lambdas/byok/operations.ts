// BYOK routes (management keys): provider credentials sealed under the organization's BYOK vault data key,
// listed and read as metadata with a masked label, never in clear.
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { InvalidInputError, NotFoundError, UnavailableError } from '../platform/errors.js';
import type { Principal } from '../platform/http/auth.js';
import type { Vault } from '../vault/index.js';
import type { ApiKeyRepository } from '../keys/index.js';
import type { WorkspaceRepository } from '../organizations/index.js';
import type { ByokRepository } from './byok-repository.js';
import { byokVaultRef, maskKey, type ByokCredential } from './types.js';
import type { byokSchema } from './schemas.js';
import type { ByokOperations } from './routes.js';

export interface ByokPorts {
  byok: ByokRepository;
  /** Seals the keys; undefined without a KMS key (then writes answer 503). */
  vault: Pick<Vault, 'sealValue'> | undefined;
  /** The providers a credential may be for. */
  providers: ReadonlySet<string>;
  keys: Pick<ApiKeyRepository, 'get'>;
  workspaces: Pick<WorkspaceRepository, 'getWorkspace'>;
  /** Drops the organization's credentials cached for inference. */
  invalidateCredentials: (orgId: string) => void;
  clock: () => Date;
}

const orgOf = (principal: Principal): string => principal.key.org_id;

function vaultOf(deps: ByokPorts): Pick<Vault, 'sealValue'> {
  if (!deps.vault) throw new UnavailableError('BYOK is not available on this deployment (no KMS key)');
  return deps.vault;
}

export function byokView(credential: ByokCredential): z.infer<typeof byokSchema> {
  return {
    id: credential.id,
    provider: credential.provider,
    name: credential.name,
    label: credential.label,
    disabled: credential.disabled,
    is_fallback: credential.is_fallback,
    is_required: credential.is_required,
    is_byok_only: credential.is_byok_only,
    sort_order: credential.sort_order,
    allowed_models: credential.allowed_models,
    allowed_user_ids: credential.allowed_user_ids,
    allowed_api_key_hashes: credential.allowed_api_key_hashes,
    declared_zdr: credential.declared_zdr,
    workspace_id: credential.workspace_id,
    created_at: credential.created_at,
  };
}

async function credentialOr404(deps: ByokPorts, orgId: string, id: string): Promise<ByokCredential> {
  const credential = await deps.byok.get(orgId, id);
  if (!credential) throw new NotFoundError(`BYOK credential not found: ${id}`);
  return credential;
}

function checkFlags(credential: Pick<ByokCredential, 'is_fallback' | 'is_byok_only'>): void {
  if (credential.is_fallback && credential.is_byok_only) throw new InvalidInputError('Invalid body: is_byok_only cannot be combined with is_fallback');
}

async function checkKeyHashes(deps: ByokPorts, orgId: string, hashes: string[] | null | undefined): Promise<void> {
  for (const hash of hashes ?? []) {
    const key = await deps.keys.get(hash);
    if (!key || key.org_id !== orgId) throw new InvalidInputError(`Invalid body.allowed_api_key_hashes: ${hash} is not a key of this account`);
  }
}

export function createByokOperations(deps: ByokPorts): ByokOperations {
  return {
  async listByok({ principal, query }) {
    const orgId = orgOf(principal);
    const all = (await deps.byok.list(orgId))
      .filter((credential) => (query.provider === undefined || credential.provider === query.provider)
        && (query.workspace_id === undefined || credential.workspace_id === query.workspace_id || credential.workspace_id === null))
      .sort((a, b) => a.provider.localeCompare(b.provider) || a.sort_order - b.sort_order || a.created_at.localeCompare(b.created_at));
    const offset = query.offset ?? 0;
    return { body: { data: all.slice(offset, offset + (query.limit ?? 50)).map(byokView), total_count: all.length } };
  },

  async createByok({ principal, body }) {
    const orgId = orgOf(principal);
    const providers = deps.providers;
    if (!providers.has(body.provider)) {
      throw new InvalidInputError(`Invalid body.provider: "${body.provider}" is not a provider of this gateway's catalog (${[...providers].sort().join(', ')})`);
    }
    if (body.workspace_id !== undefined && !(await deps.workspaces.getWorkspace(orgId, body.workspace_id))) {
      throw new InvalidInputError(`Invalid body.workspace_id: no workspace ${body.workspace_id} in this organization`);
    }
    await checkKeyHashes(deps, orgId, body.allowed_api_key_hashes);
    checkFlags({ is_fallback: body.is_fallback ?? false, is_byok_only: body.is_byok_only ?? false });
    const existing = (await deps.byok.list(orgId)).filter((credential) => credential.provider === body.provider);
    const id = randomUUID();
    const now = deps.clock().toISOString();
    const credential: ByokCredential = {
      id,
      org_id: orgId,
      provider: body.provider,
      name: body.name ?? null,
      label: maskKey(body.key),
      disabled: body.disabled ?? false,
      is_fallback: body.is_fallback ?? false,
      is_required: body.is_required ?? false,
      is_byok_only: body.is_byok_only ?? false,
      sort_order: existing.reduce((max, entry) => Math.max(max, entry.sort_order + 1), 0),
      allowed_models: body.allowed_models ?? null,
      allowed_user_ids: body.allowed_user_ids ?? null,
      allowed_api_key_hashes: body.allowed_api_key_hashes ?? null,
      declared_zdr: body.declared_zdr ?? null,
      workspace_id: body.workspace_id ?? null,
      sealed: await vaultOf(deps).sealValue(byokVaultRef(orgId), id, body.key),
      created_at: now,
      updated_at: now,
    };
    await deps.byok.put(credential);
    deps.invalidateCredentials(orgId);
    return { status: 201, body: { data: byokView(credential) } };
  },

  async getByok({ principal, params }) {
    return { body: { data: byokView(await credentialOr404(deps, orgOf(principal), params.id)) } };
  },

  async updateByok({ principal, params, body }) {
    const orgId = orgOf(principal);
    const current = await credentialOr404(deps, orgId, params.id);
    await checkKeyHashes(deps, orgId, body.allowed_api_key_hashes);
    const { key, ...fields } = body;
    const merged: ByokCredential = { ...current, ...Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) };
    checkFlags(merged);
    const updated: ByokCredential = {
      ...merged,
      ...(key !== undefined ? { label: maskKey(key), sealed: await vaultOf(deps).sealValue(byokVaultRef(orgId), current.id, key) } : {}),
      updated_at: deps.clock().toISOString(),
    };
    await deps.byok.put(updated);
    deps.invalidateCredentials(orgId);
    return { body: { data: byokView(updated) } };
  },

  async deleteByok({ principal, params }) {
    const orgId = orgOf(principal);
    const credential = await credentialOr404(deps, orgId, params.id);
    await deps.byok.delete(orgId, credential.id);
    deps.invalidateCredentials(orgId);
    return { body: { deleted: true as const } };
  },
  };
}
