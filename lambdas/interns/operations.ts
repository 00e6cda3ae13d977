// Intern routes (regular keys of a workspace in the intern programme): interns, their lifecycle (provision,
// suspend, delete with their keys and private vault) and keys confined to one intern. Their secrets are
// the vault's routes (/vault/interns/...).
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { ConflictError, InvalidInputError, NotFoundError } from '../platform/errors.js';
import type { Principal } from '../platform/http/auth.js';
import type { GatewayRequest } from '../platform/http/request.js';
import { keyView, newApiKey, type ApiKeyRepository, type KeyCache } from '../keys/index.js';
import type { OrganizationRepository } from '../organizations/index.js';
import { callerOf, internOf, internVault, notForInternKeys, NOT_FOUND, vaultIdOf, type HostRules, type Vault } from '../vault/index.js';
import type { Intern, InternRepository, InternStatus } from './intern-repository.js';
import { INTERN_STATUSES, type internSchema } from './schemas.js';
import type { InternOperations } from './routes.js';

export interface InternPorts {
  interns: Pick<InternRepository, 'listInterns' | 'getIntern' | 'putIntern' | 'deleteIntern'>;
  /** The caller's organization (in the intern programme). */
  organizations: Pick<OrganizationRepository, 'get'>;
  /** An intern's keys: created here, deleted with the intern. */
  keys: Pick<ApiKeyRepository, 'list' | 'create' | 'delete'>;
  keyCache: Pick<KeyCache, 'invalidate'>;
  /** The intern's private vault, destroyed with it; undefined without a KMS key. */
  vault: Pick<Vault, 'destroy'> | undefined;
  clock: () => Date;
  /** Which hosts are regional: intern routes, like the vault's, are refused there. */
  hosts: HostRules;
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

export function createInternOperations(deps: InternPorts): InternOperations {
  return {
    async listInterns({ principal, request, query }) {
      const caller = await callerOf(principal, request, deps.organizations, deps.hosts);
      notForInternKeys(caller);
      if (query.workspace_id !== undefined && query.workspace_id !== caller.key.workspace_id) {
        throw new InvalidInputError('Invalid workspace_id: must be the workspace of the API key');
      }
      const statuses = query.status ? new Set(query.status.split(',').map((status) => status.trim()).filter(Boolean)) : undefined;
      for (const status of statuses ?? []) {
        if (!(INTERN_STATUSES as readonly string[]).includes(status)) throw new InvalidInputError(`Invalid status: ${status}; one of ${INTERN_STATUSES.join(', ')}`);
      }
      const all = (await deps.interns.listInterns(caller.key.org_id))
        .filter((intern) => intern.workspace_id === caller.key.workspace_id && (!statuses || statuses.has(intern.status)))
        .sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id));
      let start = 0;
      if (query.starting_after) {
        start = all.findIndex((intern) => intern.id === query.starting_after) + 1;
        if (start === 0) throw new InvalidInputError('Invalid starting_after: not a cursor of this list');
      }
      const limit = query.limit ?? 100;
      const data = all.slice(start, start + limit);
      const hasMore = start + limit < all.length;
      return { body: { data: data.map(internView), has_more: hasMore, ...(hasMore ? { next_cursor: data.at(-1)!.id } : {}) } };
    },

    async createIntern({ principal, request, body }) {
      const caller = await callerOf(principal, request, deps.organizations, deps.hosts);
      notForInternKeys(caller);
      if (body.workspace_id !== undefined && body.workspace_id !== caller.key.workspace_id) {
        throw new InvalidInputError('Invalid body.workspace_id: must be the workspace of the API key');
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

    async getIntern({ principal, request, params }) {
      const caller = await callerOf(principal, request, deps.organizations, deps.hosts);
      notForInternKeys(caller);
      return { body: internView(await internOf(caller, deps.interns, params.internId)) };
    },

    async updateIntern({ principal, request, params, body }) {
      const caller = await callerOf(principal, request, deps.organizations, deps.hosts);
      notForInternKeys(caller);
      const intern = await internOf(caller, deps.interns, params.internId);
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

    async deleteIntern({ principal, request, params }) {
      const caller = await callerOf(principal, request, deps.organizations, deps.hosts);
      notForInternKeys(caller);
      const intern = await internOf(caller, deps.interns, params.internId);
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

    async provisionIntern({ principal, request, params }) {
      return transition(deps, principal, request, params.internId, 'running', { provisioning: true as const }, 202);
    },

    async suspendIntern({ principal, request, params }) {
      return transition(deps, principal, request, params.internId, 'stopped', { suspended: true as const }, 200);
    },

    async createInternKey({ principal, request, params, body }) {
      const caller = await callerOf(principal, request, deps.organizations, deps.hosts);
      notForInternKeys(caller);
      const intern = await internOf(caller, deps.interns, params.internId);
      const now = deps.clock();
      const { key, text } = newApiKey({
        orgId: caller.key.org_id, orgKind: caller.key.org_kind, workspaceId: intern.workspace_id, kind: 'standard',
        name: body.name ?? `${intern.name} (intern)`, internId: intern.id, creatorUserId: caller.key.creator_user_id, now,
      });
      await deps.keys.create(key);
      return { status: 201, body: { data: keyView(key, now), key: text } };
    },
  };
}

async function transition<T>(deps: InternPorts, principal: Principal, request: GatewayRequest, internId: string, status: InternStatus, reply: T, code: number) {
  const caller = await callerOf(principal, request, deps.organizations, deps.hosts);
  notForInternKeys(caller);
  const intern = await internOf(caller, deps.interns, internId);
  if (intern.status === 'destroying') throw new ConflictError('The intern is being deleted');
  if (!(await deps.interns.putIntern({ ...intern, status, updated_at: deps.clock().toISOString() }, true))) throw new NotFoundError(NOT_FOUND);
  return { status: code, body: reply };
}
