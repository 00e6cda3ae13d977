// The guardrail routes (management keys): guardrails of the caller's organization, and their key assignments.
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { InvalidInputError, NotFoundError } from '../platform/errors.js';
import { nanosToUsd } from '../platform/money.js';
import type { Principal } from '../platform/http/auth.js';
import { listPage } from '../platform/http/list-page.js';
import type { ApiKeyRepository } from '../keys/index.js';
import { DEFAULT_GUARDRAIL_PREFIX, type MemberRepository, type WorkspaceRepository } from '../organizations/index.js';
import type { GuardrailRepository } from './guardrail-repository.js';
import type { GuardrailOperations } from './routes.js';
import type { guardrailSchema } from './schemas.js';
import type { Guardrail, KeyAssignment, MemberAssignment } from './types.js';
import type { BuiltinFilter } from './content-filters.js';

export interface GuardrailPorts {
  guardrails: GuardrailRepository;
  keys: Pick<ApiKeyRepository, 'get'>;
  workspaces: Pick<WorkspaceRepository, 'getWorkspace'>;
  members: Pick<MemberRepository, 'list'>;
  /** Drops the organization's policy cached for inference: the change applies to its next request here. */
  invalidate: (orgId: string) => void;
  clock: () => Date;
}

export function guardrailView(guardrail: Guardrail): z.infer<typeof guardrailSchema> {
  return {
    id: guardrail.id,
    name: guardrail.name,
    description: guardrail.description,
    workspace_id: guardrail.workspace_id,
    allowed_models: guardrail.allowed_models,
    ignored_models: guardrail.ignored_models,
    allowed_providers: guardrail.allowed_providers,
    ignored_providers: guardrail.ignored_providers,
    include_byok_in_budgets: guardrail.include_byok_in_budgets,
    limit_usd: guardrail.limit == null ? null : nanosToUsd(guardrail.limit),
    reset_interval: guardrail.reset_interval ?? null,
    content_filters: guardrail.content_filters ?? null,
    content_filter_builtins: guardrail.content_filter_builtins ?? null,
    created_at: guardrail.created_at,
    updated_at: guardrail.updated_at,
  };
}

/** Built-in filters as stored (person-name and address were refused by the schema). */
function builtinsOf(list: Array<{ slug: string; action: BuiltinFilter['action']; label?: string | undefined }> | null | undefined): BuiltinFilter[] | null {
  return list ? list.map((entry) => ({ slug: entry.slug as BuiltinFilter['slug'], action: entry.action, ...(entry.label ? { label: entry.label } : {}) })) : null;
}

const lower = (list: string[] | null | undefined) => (list ? [...new Set(list.map((entry) => entry.toLowerCase()))] : list);

export function createGuardrailOperations(deps: GuardrailPorts): GuardrailOperations {
  const orgOf = (principal: Principal) => principal.key.org_id;

  async function found(principal: Principal, id: string): Promise<Guardrail> {
    // A workspace's default_guardrail_id names no stored guardrail: its settings are the workspace's budgets.
    if (id.startsWith(DEFAULT_GUARDRAIL_PREFIX)) {
      const workspaceId = id.slice(DEFAULT_GUARDRAIL_PREFIX.length);
      const workspace = await deps.workspaces.getWorkspace(orgOf(principal), workspaceId);
      if (workspace) throw new NotFoundError(`Guardrail not found: ${id} is the default guardrail of workspace ${workspaceId}, whose settings are that workspace's budgets (GET /workspaces/${workspaceId}/budgets)`);
      throw new NotFoundError(`Guardrail not found: ${id}`);
    }
    const guardrail = await deps.guardrails.get(orgOf(principal), id);
    if (!guardrail) throw new NotFoundError(`Guardrail not found: ${id}`);
    return guardrail;
  }

  async function orgKeys(principal: Principal, hashes: string[]) {
    const keys = [];
    for (const hash of hashes) {
      const key = await deps.keys.get(hash);
      if (!key || key.org_id !== orgOf(principal)) throw new InvalidInputError(`Invalid body.key_hashes: ${hash} is not a key of this organization`);
      keys.push({ hash, name: key.name, label: key.label });
    }
    return keys;
  }

  /** The user ids, each checked to be a member of the organization (one read of its members). */
  async function orgMembers(principal: Principal, userIds: string[]): Promise<string[]> {
    const members = new Set((await deps.members.list(orgOf(principal))).map((member) => member.id));
    const stranger = userIds.find((userId) => !members.has(userId));
    if (stranger !== undefined) throw new InvalidInputError(`Invalid body.member_user_ids: ${stranger} is not a member of this organization`);
    return userIds;
  }

  const memberPage = (all: MemberAssignment[], query: { offset?: number | undefined; limit?: number | undefined }) => ({
    body: listPage(all.sort((a, b) => b.created_at.localeCompare(a.created_at) || a.user_id.localeCompare(b.user_id)), query),
  });

  const assignmentsPage = (all: KeyAssignment[], query: { offset?: number | undefined; limit?: number | undefined }) => ({
    body: listPage(all.sort((a, b) => b.created_at.localeCompare(a.created_at) || a.key_hash.localeCompare(b.key_hash)), query),
  });

  return {
    async listGuardrails({ principal, query }) {
      const { guardrails } = await deps.guardrails.policy(orgOf(principal), true);
      const all = guardrails
        .filter((guardrail) => query.workspace_id === undefined || guardrail.workspace_id === query.workspace_id)
        .sort((a, b) => b.created_at.localeCompare(a.created_at) || a.id.localeCompare(b.id));
      return { body: listPage(all, query, guardrailView) };
    },
    async createGuardrail({ principal, body }) {
      const orgId = orgOf(principal);
      if (body.workspace_id !== undefined && !(await deps.workspaces.getWorkspace(orgId, body.workspace_id))) {
        throw new InvalidInputError(`Invalid body.workspace_id: no workspace ${body.workspace_id} in this organization`);
      }
      const now = deps.clock().toISOString();
      const guardrail: Guardrail = {
        id: randomUUID(), org_id: orgId, name: body.name, description: body.description ?? null, workspace_id: body.workspace_id ?? null,
        allowed_models: body.allowed_models ?? null, ignored_models: body.ignored_models ?? null,
        allowed_providers: lower(body.allowed_providers) ?? null, ignored_providers: lower(body.ignored_providers) ?? null,
        include_byok_in_budgets: body.include_byok_in_budgets ?? false,
        limit: body.limit_usd ?? null, reset_interval: body.reset_interval ?? null,
        content_filters: body.content_filters ?? null, content_filter_builtins: builtinsOf(body.content_filter_builtins),
        created_at: now, updated_at: now,
      };
      await deps.guardrails.put(guardrail);
      deps.invalidate(orgId);
      return { status: 201, body: { data: guardrailView(guardrail) } };
    },
    async getGuardrail({ principal, params }) {
      return { body: { data: guardrailView(await found(principal, params.id)) } };
    },
    async updateGuardrail({ principal, params, body }) {
      const current = await found(principal, params.id);
      const next: Guardrail = {
        ...current,
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(body.allowed_models !== undefined ? { allowed_models: body.allowed_models } : {}),
        ...(body.ignored_models !== undefined ? { ignored_models: body.ignored_models } : {}),
        ...(body.allowed_providers !== undefined ? { allowed_providers: lower(body.allowed_providers) ?? null } : {}),
        ...(body.ignored_providers !== undefined ? { ignored_providers: lower(body.ignored_providers) ?? null } : {}),
        ...(body.include_byok_in_budgets !== undefined ? { include_byok_in_budgets: body.include_byok_in_budgets } : {}),
        ...(body.limit_usd !== undefined ? { limit: body.limit_usd } : {}),
        ...(body.reset_interval !== undefined ? { reset_interval: body.reset_interval } : {}),
        ...(body.content_filters !== undefined ? { content_filters: body.content_filters } : {}),
        ...(body.content_filter_builtins !== undefined ? { content_filter_builtins: builtinsOf(body.content_filter_builtins) } : {}),
        updated_at: deps.clock().toISOString(),
      };
      await deps.guardrails.put(next);
      deps.invalidate(current.org_id);
      return { body: { data: guardrailView(next) } };
    },
    async deleteGuardrail({ principal, params }) {
      const current = await found(principal, params.id);
      await deps.guardrails.delete(current.org_id, current.id);
      deps.invalidate(current.org_id);
      return { body: { deleted: true } };
    },
    async assignGuardrailKeys({ principal, params, body }) {
      const guardrail = await found(principal, params.id);
      const keys = await orgKeys(principal, body.key_hashes);
      const assigned = await deps.guardrails.assignKeys(guardrail.org_id, guardrail.id, keys, principal.key.hash, deps.clock().toISOString());
      deps.invalidate(guardrail.org_id);
      return { body: { assigned_count: assigned } };
    },
    async unassignGuardrailKeys({ principal, params, body }) {
      const guardrail = await found(principal, params.id);
      const unassigned = await deps.guardrails.unassignKeys(guardrail.org_id, guardrail.id, body.key_hashes);
      deps.invalidate(guardrail.org_id);
      return { body: { unassigned_count: unassigned } };
    },
    async listGuardrailKeyAssignments({ principal, params, query }) {
      const guardrail = await found(principal, params.id);
      const { assignments } = await deps.guardrails.policy(guardrail.org_id, true);
      return assignmentsPage(assignments.filter((entry) => entry.guardrail_id === guardrail.id), query);
    },
    async assignGuardrailMembers({ principal, params, body }) {
      const guardrail = await found(principal, params.id);
      const userIds = await orgMembers(principal, body.member_user_ids);
      const assigned = await deps.guardrails.assignMembers(guardrail.org_id, guardrail.id, userIds, principal.key.hash, deps.clock().toISOString());
      deps.invalidate(guardrail.org_id);
      return { body: { assigned_count: assigned } };
    },
    async unassignGuardrailMembers({ principal, params, body }) {
      const guardrail = await found(principal, params.id);
      const unassigned = await deps.guardrails.unassignMembers(guardrail.org_id, guardrail.id, body.member_user_ids);
      deps.invalidate(guardrail.org_id);
      return { body: { unassigned_count: unassigned } };
    },
    async listGuardrailMemberAssignments({ principal, params, query }) {
      const guardrail = await found(principal, params.id);
      const { memberAssignments } = await deps.guardrails.policy(guardrail.org_id, true);
      return memberPage(memberAssignments.filter((entry) => entry.guardrail_id === guardrail.id), query);
    },
    async listMemberAssignments({ principal, query }) {
      const { memberAssignments } = await deps.guardrails.policy(orgOf(principal), true);
      return memberPage(memberAssignments, query);
    },
    async listKeyAssignments({ principal, query }) {
      const { assignments } = await deps.guardrails.policy(orgOf(principal), true);
      return assignmentsPage(assignments, query);
    },
  };
}
