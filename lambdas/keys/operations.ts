// Key management routes: list, create, read, update, delete, and the calling key's own metadata.
import { ForbiddenError, InvalidInputError, NotFoundError } from '../platform/errors.js';
import { currentKeyView, keyView } from './key-view.js';
import { newApiKey } from './new-key.js';
import type { ApiKeyRepository, KeyPatch } from './api-key-repository.js';
import type { KeyCache } from './key-cache.js';
import type { KeyOperations } from './routes.js';
import type { WorkspaceRepository } from '../organizations/index.js';

export const KEY_PAGE_SIZE = 100;

export interface KeyPorts {
  keys: ApiKeyRepository;
  keyCache: Pick<KeyCache, 'invalidate'>;
  /** To check that a new key's workspace belongs to the organization. */
  workspaces: Pick<WorkspaceRepository, 'getWorkspace'>;
  clock: () => Date;
  /**
   * Waits until every process holding a lease of the key sees a change of its terms (their caches of keys
   * and workspaces have expired): the reply then means that every request after it is under the new terms.
   */
  leaseTermsLag: () => Promise<void>;
  /** To check that a new key's creator_user_id is a member of the organization (member guardrails follow it). */
  members?: { get(orgId: string, userId: string): Promise<unknown> };
  /** What else names a deleted key (its guardrail assignments) lets go of it. */
  keyDeleted?: (orgId: string, hash: string) => Promise<void>;
}

export function createKeyOperations(deps: KeyPorts): KeyOperations {
  return {
  async listKeys({ principal, query }) {
    const { key } = principal;
    const keys = await deps.keys.list(key.org_id, {
      offset: query.offset ?? 0,
      pageSize: KEY_PAGE_SIZE,
      includeDisabled: query.include_disabled ?? false,
      workspaceId: query.workspace_id,
    });
    const now = deps.clock();
    return { body: { data: keys.map((entry) => keyView(entry, now)) } };
  },

  async createKey({ principal, body }) {
    const { key: caller } = principal;
    const workspaceId = body.workspace_id ?? caller.workspace_id;
    if (body.workspace_id !== undefined && !(await deps.workspaces.getWorkspace(caller.org_id, workspaceId))) {
      throw new InvalidInputError(`Invalid body.workspace_id: no workspace ${workspaceId} in this organization`);
    }
    // Guardrails assigned to a member govern the keys they created: a creator that is no member would
    // escape them unnoticed.
    if (body.creator_user_id != null && deps.members && !(await deps.members.get(caller.org_id, body.creator_user_id))) {
      throw new InvalidInputError('Invalid body.creator_user_id: not a member of this organization', { metadata: { param: 'creator_user_id' } });
    }
    const now = deps.clock();
    if (body.expires_at && Date.parse(body.expires_at) <= now.getTime()) {
      throw new InvalidInputError('Invalid body.expires_at: must be in the future');
    }
    const { key, text } = newApiKey({
      orgId: caller.org_id,
      orgKind: caller.org_kind,
      workspaceId,
      kind: 'standard',
      name: body.name,
      limit: body.limit ?? null,
      limitReset: body.limit_reset ?? null,
      includeByokInLimit: body.include_byok_in_limit ?? false,
      expiresAt: body.expires_at ?? null,
      creatorUserId: body.creator_user_id ?? null,
      now,
    });
    await deps.keys.create(key);
    return { status: 201, body: { data: keyView(key, now), key: text } };
  },

  async getKey({ principal, params }) {
    const { key: caller } = principal;
    const { hash } = params;
    const key = await deps.keys.get(hash);
    if (!key || key.org_id !== caller.org_id) throw new NotFoundError(`API key not found: ${hash}`);
    return { body: { data: keyView(key, deps.clock()) } };
  },

  async updateKey({ principal, params, body }) {
    const { key: caller } = principal;
    const { hash } = params;
    // SPEC: a key edits and deletes the account's *other* keys: a management key that disabled itself would
    // lock its holder out (renaming itself is harmless).
    if (hash === caller.hash && body.disabled === true) throw new ForbiddenError('A key cannot disable itself: use another management key');
    // Only values that set a limit: clearing one (null, false) is always allowed.
    const limitFields = (['limit', 'limit_reset', 'include_byok_in_limit'] as const).filter((field) => body[field] != null && body[field] !== false);
    if (limitFields.length > 0) {
      const target = await deps.keys.get(hash);
      if (!target || target.org_id !== caller.org_id) throw new NotFoundError(`API key not found: ${hash}`);
      // A management key cannot call completion endpoints: there is nothing for a credit limit to limit.
      if (target.kind === 'management') throw new InvalidInputError(`Invalid body.${limitFields[0]}: a management key has no credit limit`, { metadata: { param: limitFields[0] } });
    }
    const patch: KeyPatch = {
      name: body.name,
      disabled: body.disabled,
      include_byok_in_limit: body.include_byok_in_limit,
      limit_reset: body.limit_reset,
      limit: body.limit,
    };
    const updated = await deps.keys.update(hash, caller.org_id, patch, deps.clock().toISOString());
    if (!updated) throw new NotFoundError(`API key not found: ${hash}`);
    deps.keyCache.invalidate(hash);
    if (updated.meter.leases > 0) await deps.leaseTermsLag();
    return { body: { data: keyView(updated, deps.clock()) } };
  },

  async deleteKey({ principal, params }) {
    const { key: caller } = principal;
    const { hash } = params;
    if (hash === caller.hash) throw new ForbiddenError('A key cannot delete itself: use another management key');
    const deleted = await deps.keys.delete(hash, caller.org_id);
    if (!deleted) throw new NotFoundError(`API key not found: ${hash}`);
    deps.keyCache.invalidate(hash);
    await deps.keyDeleted?.(caller.org_id, hash);
    if (deleted.meter.leases > 0) await deps.leaseTermsLag();
    return { body: { deleted: true } };
  },

  async getCurrentKey({ principal }) {
    // Read through the cache: usage and limit_remaining must be current, not as of the cached copy.
    const cached = principal.key;
    const key = (await deps.keys.get(cached.hash)) ?? cached;
    return { body: { data: currentKeyView(key, deps.clock()) } };
  },
  };
}
