// Workspaces (list, create, get, update, delete) and their budgets (daily, weekly, monthly, lifetime),
// for management keys, always within the calling key's organization.
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { ConflictError, InvalidInputError, NotFoundError } from '../platform/errors.js';
import type { Principal } from '../platform/http/auth.js';
import { listPage } from '../platform/http/list-page.js';
import { nanosToUsd } from '../platform/money.js';
import { budgetWindow, meterAt, spent } from '../billing/meter.js';
import { windowEnd } from '../billing/periods.js';
import { BUDGET_INTERVALS, defaultGuardrailId, newWorkspace, type BudgetInterval, type MemberRepository, type Workspace, type WorkspaceRepository } from '../organizations/index.js';
import type { ApiKeyRepository } from '../keys/index.js';
import type { Vault } from '../vault/index.js';
import type { InternRepository } from '../interns/index.js';
import type { ByokRepository } from '../byok/index.js';
import type { budgetSchema, workspaceSchema } from './schemas.js';
import type { WorkspaceOperations } from './routes.js';

export interface WorkspacePorts {
  workspaces: Pick<WorkspaceRepository, 'listWorkspaces' | 'findWorkspace' | 'createWorkspace' | 'updateWorkspace' | 'deleteWorkspace' | 'putBudget'>;
  /** A workspace with keys or interns is not deleted. */
  keys: Pick<ApiKeyRepository, 'list'>;
  interns: Pick<InternRepository, 'listInterns'>;
  /**
   * What else is scoped to the workspace and names it (guardrails, observability destinations, private
   * endpoints, SCIM group mappings): each kind that has some, in words. A workspace that has any is not deleted.
   */
  scopedTo?: (orgId: string, workspaceId: string) => Promise<string[]>;
  /** What a deleted workspace leaves behind: its vault (undefined without a KMS key) and its BYOK credentials. */
  vault: Pick<Vault, 'destroy'> | undefined;
  byok: Pick<ByokRepository, 'list' | 'delete'>;
  /** Drops the organization's credentials cached for inference. */
  invalidateCredentials: (orgId: string) => void;
  /** The organization's members, and which workspaces they belong to. */
  members: Pick<MemberRepository, 'list' | 'workspaceMembers' | 'addToWorkspace' | 'removeFromWorkspace' | 'dropWorkspace'>;
  clock: () => Date;
  /** Waits until processes holding leases of the workspace see its new budgets (keys/operations.ts says why). */
  leaseTermsLag: () => Promise<void>;
}

const orgOf = (principal: Principal): string => principal.key.org_id;

const DEFAULT_PAGE = 50;

export function workspaceView(workspace: Workspace): z.infer<typeof workspaceSchema> {
  return {
    id: workspace.id,
    name: workspace.name,
    slug: workspace.slug,
    description: workspace.description,
    default_text_model: workspace.default_text_model,
    default_image_model: workspace.default_image_model,
    default_provider_sort: workspace.default_provider_sort,
    default_guardrail_id: defaultGuardrailId(workspace.id),
    disabled_server_tools: workspace.disabled_server_tools,
    io_logging_api_key_ids: workspace.io_logging_api_key_ids,
    io_logging_sampling_rate: workspace.io_logging_sampling_rate,
    is_data_discount_logging_enabled: workspace.is_data_discount_logging_enabled,
    is_observability_broadcast_enabled: workspace.is_observability_broadcast_enabled,
    is_observability_io_logging_enabled: workspace.is_observability_io_logging_enabled,
    include_byok_in_budgets: workspace.include_byok_in_budgets,
    created_by: workspace.created_by,
    created_at: workspace.created_at,
    updated_at: workspace.updated_at,
  };
}

function budgetView(workspace: Workspace, interval: BudgetInterval, now: Date): z.infer<typeof budgetSchema> | undefined {
  const budget = workspace.budgets[interval];
  if (!budget) return undefined;
  const window = budgetWindow(interval);
  const meter = meterAt(workspace.meter, now);
  const used = spent(meter, window, workspace.include_byok_in_budgets);
  const remaining = budget.limit - used - meter.held;
  return {
    id: budget.id,
    workspace_id: workspace.id,
    limit_usd: nanosToUsd(budget.limit),
    reset_interval: interval === 'lifetime' ? null : interval,
    usage_usd: nanosToUsd(used),
    remaining_usd: nanosToUsd(remaining > 0n ? remaining : 0n),
    resets_at: interval === 'lifetime' ? null : windowEnd(interval, now),
    created_at: budget.created_at,
    updated_at: budget.updated_at,
  };
}

async function workspaceOr404(deps: WorkspacePorts, orgId: string, ref: string): Promise<Workspace> {
  const workspace = await deps.workspaces.findWorkspace(orgId, ref);
  if (!workspace) throw new NotFoundError(`Workspace not found: ${ref}`);
  return workspace;
}

/** The route's pattern admits exactly the budget intervals. */
const intervalParam = (value: string): BudgetInterval => value as BudgetInterval;

export function createWorkspaceOperations(deps: WorkspacePorts): WorkspaceOperations {
  return {
  async listWorkspaceMembers({ principal, params, query }) {
    const workspace = await workspaceOr404(deps, orgOf(principal), params.id);
    return { body: listPage(await deps.members.workspaceMembers(workspace.org_id, workspace.id), query) };
  },

  async addWorkspaceMembers({ principal, params, body }) {
    const workspace = await workspaceOr404(deps, orgOf(principal), params.id);
    // One read of the organization's members, not one a user id (the add checks each again in its transaction).
    const members = new Set((await deps.members.list(workspace.org_id)).map((member) => member.id));
    const stranger = body.user_ids.find((userId) => !members.has(userId));
    if (stranger !== undefined) throw new InvalidInputError(`Invalid body.user_ids: ${stranger} is not a member of this organization`);
    const added = await deps.members.addToWorkspace(workspace.org_id, workspace.id, body.user_ids, deps.clock().toISOString());
    return { body: { added_count: added.length, data: added } };
  },

  async removeWorkspaceMembers({ principal, params, body }) {
    const workspace = await workspaceOr404(deps, orgOf(principal), params.id);
    return { body: { removed_count: await deps.members.removeFromWorkspace(workspace.org_id, workspace.id, body.user_ids) } };
  },

  async listWorkspaces({ principal, query }) {
    const all = (await deps.workspaces.listWorkspaces(orgOf(principal))).sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
    const offset = query.offset ?? 0;
    const page = all.slice(offset, offset + (query.limit ?? DEFAULT_PAGE));
    return { body: { data: page.map(workspaceView), total_count: all.length } };
  },

  async createWorkspace({ principal, body }) {
    const orgId = orgOf(principal);
    const workspace = newWorkspace(orgId, body, principal.key.creator_user_id, deps.clock());
    if (!(await deps.workspaces.createWorkspace(workspace))) throw new ConflictError(`A workspace with slug "${body.slug}" already exists`);
    return { status: 201, body: { data: workspaceView(workspace) } };
  },

  async getWorkspace({ principal, params }) {
    return { body: { data: workspaceView(await workspaceOr404(deps, orgOf(principal), params.id)) } };
  },

  async updateWorkspace({ principal, params, body }) {
    const orgId = orgOf(principal);
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const current = await workspaceOr404(deps, orgId, params.id);
      const updated = await deps.workspaces.updateWorkspace(current, body, deps.clock().toISOString());
      if (updated === 'conflict') throw new ConflictError(`A workspace with slug "${body.slug}" already exists`);
      if (updated) return { body: { data: workspaceView(updated) } };
      // Renamed or deleted meanwhile: read it again.
    }
    throw new ConflictError('The workspace changed while it was being updated; retry');
  },

  async deleteWorkspace({ principal, params }) {
    const orgId = orgOf(principal);
    const workspace = await workspaceOr404(deps, orgId, params.id);
    const keys = await deps.keys.list(orgId, { offset: 0, pageSize: 1, includeDisabled: true, workspaceId: workspace.id });
    if (keys.length > 0) throw new ConflictError(`Workspace ${workspace.slug} still has API keys; delete them or create them elsewhere first`);
    const interns = (await deps.interns.listInterns(orgId)).filter((intern) => intern.workspace_id === workspace.id);
    if (interns.length > 0) throw new ConflictError(`Workspace ${workspace.slug} still has interns; delete them first`);
    const scoped = deps.scopedTo ? await deps.scopedTo(orgId, workspace.id) : [];
    if (scoped.length > 0) throw new ConflictError(`Workspace ${workspace.slug} still has ${scoped.join(', ')}; delete them first`);
    if (!(await deps.workspaces.deleteWorkspace(workspace))) throw new NotFoundError(`Workspace not found: ${params.id}`);
    // What belonged to it only: its memberships, its vault (secrets and data key) and the BYOK credentials scoped to it.
    await deps.members.dropWorkspace(orgId, workspace.id);
    if (deps.vault) await deps.vault.destroy({ orgId, workspaceId: workspace.id, purpose: 'vault' });
    for (const credential of await deps.byok.list(orgId)) {
      if (credential.workspace_id === workspace.id) await deps.byok.delete(orgId, credential.id);
    }
    deps.invalidateCredentials(orgId);
    return { body: { deleted: true as const } };
  },

  async listWorkspaceBudgets({ principal, params }) {
    const workspace = await workspaceOr404(deps, orgOf(principal), params.workspace_ref);
    const now = deps.clock();
    const data = BUDGET_INTERVALS.flatMap((interval) => budgetView(workspace, interval, now) ?? []);
    return { body: { data, include_byok_in_budgets: workspace.include_byok_in_budgets } };
  },

  async getWorkspaceBudget({ principal, params }) {
    const interval = intervalParam(params.interval);
    const workspace = await workspaceOr404(deps, orgOf(principal), params.workspace_ref);
    const view = budgetView(workspace, interval, deps.clock());
    if (!view) throw new NotFoundError(`Workspace ${workspace.slug} has no ${interval} budget`);
    return { body: { data: view, include_byok_in_budgets: workspace.include_byok_in_budgets } };
  },

  async putWorkspaceBudget({ principal, params, body }) {
    const interval = intervalParam(params.interval);
    const orgId = orgOf(principal);
    const workspace = await workspaceOr404(deps, orgId, params.workspace_ref);
    const now = deps.clock();
    const existing = workspace.budgets[interval];
    const budget = { id: existing?.id ?? randomUUID(), limit: body.limit_usd, created_at: existing?.created_at ?? now.toISOString(), updated_at: now.toISOString() };
    const updated = await deps.workspaces.putBudget(orgId, workspace.id, interval, budget, body.include_byok_in_budgets, now.toISOString());
    if (!updated) throw new NotFoundError(`Workspace not found: ${params.workspace_ref}`);
    if (updated.meter.leases > 0) await deps.leaseTermsLag();
    return { body: { data: budgetView(updated, interval, now)!, include_byok_in_budgets: updated.include_byok_in_budgets } };
  },

  async deleteWorkspaceBudget({ principal, params }) {
    const interval = intervalParam(params.interval);
    const orgId = orgOf(principal);
    const workspace = await workspaceOr404(deps, orgId, params.workspace_ref);
    if (workspace.budgets[interval]) {
      const updated = await deps.workspaces.putBudget(orgId, workspace.id, interval, null, undefined, deps.clock().toISOString());
      if (updated && updated.meter.leases > 0) await deps.leaseTermsLag();
    }
    return { body: { deleted: true as const } };
  },
  };
}
