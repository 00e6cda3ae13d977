// How organizations and workspaces are stored: one item each under the organization's partition, settings
// as top-level attributes, a workspace's meter beside them (billing/meter-item.ts). Read by the organization
// and workspace repositories and by the ledger, whose transactions see these items when a reservation is refused.
import { BUDGET_INTERVALS, DEFAULT_WORKSPACE_SETTINGS, type Budget, type Organization, type OrganizationSettings, type Workspace } from './types.js';
import { meterFromItem, meterToItem } from '../billing/meter-item.js';
import { nanosFromStore, nanosToStore } from '../platform/money.js';
import { itemKeys } from '../platform/dynamo/item-keys.js';

export function orgToItem(org: Organization): Record<string, unknown> {
  return {
    ...itemKeys.organization(org.id),
    type: 'organization',
    ...org,
    total_credits: nanosToStore(org.total_credits),
    total_usage: nanosToStore(org.total_usage),
    held: nanosToStore(org.held),
    // What a reservation may still take; kept as its own attribute because conditions cannot subtract.
    balance: nanosToStore(org.total_credits - org.total_usage - org.held),
  };
}

export function orgFromItem(item: Record<string, unknown>): Organization {
  const settings = (item.settings ?? {}) as Partial<OrganizationSettings>;
  return {
    id: item.id as string,
    name: item.name as string,
    kind: item.kind as Organization['kind'],
    settings: { is_filtered_model_catalog_enabled: settings.is_filtered_model_catalog_enabled === true },
    total_credits: nanosFromStore(item.total_credits),
    total_usage: nanosFromStore(item.total_usage),
    held: nanosFromStore(item.held),
    intern_programme: item.intern_programme === true,
    vault_writes_disabled: item.vault_writes_disabled === true,
    created_at: item.created_at as string,
    updated_at: item.updated_at as string,
  };
}

/** A budget as stored in the workspace's `budgets` map. */
export function budgetToItem(budget: Budget): Record<string, unknown> {
  return { ...budget, limit: nanosToStore(budget.limit) };
}

function budgetsToItem(budgets: Workspace['budgets']): Record<string, unknown> {
  return Object.fromEntries(Object.entries(budgets).map(([interval, budget]) => [interval, budgetToItem(budget)]));
}

function budgetsFromItem(value: unknown): Workspace['budgets'] {
  const budgets: Workspace['budgets'] = {};
  for (const interval of BUDGET_INTERVALS) {
    const stored = (value as Record<string, Record<string, unknown>> | undefined)?.[interval];
    if (stored) budgets[interval] = { id: stored.id as string, limit: nanosFromStore(stored.limit), created_at: stored.created_at as string, updated_at: stored.updated_at as string };
  }
  return budgets;
}

export function workspaceToItem(workspace: Workspace): Record<string, unknown> {
  const { meter, budgets, ...rest } = workspace;
  return { ...itemKeys.workspace(workspace.org_id, workspace.id), type: 'workspace', ...rest, budgets: budgetsToItem(budgets), ...meterToItem(meter) };
}

/** The item that claims a workspace's slug in its organization (slugs are unique per organization). */
export function workspaceSlugClaimItem(workspace: Pick<Workspace, 'org_id' | 'id' | 'slug'>): Record<string, unknown> {
  return { ...itemKeys.workspaceSlug(workspace.org_id, workspace.slug), type: 'workspace_slug', workspace_id: workspace.id };
}

export function workspaceFromItem(item: Record<string, unknown>): Workspace {
  const optional = <T>(name: string, fallback: T): T => (item[name] === undefined ? fallback : item[name] as T);
  return {
    id: item.id as string,
    org_id: item.org_id as string,
    name: item.name as string,
    slug: item.slug as string,
    description: optional('description', DEFAULT_WORKSPACE_SETTINGS.description),
    default_text_model: optional('default_text_model', DEFAULT_WORKSPACE_SETTINGS.default_text_model),
    default_image_model: optional('default_image_model', DEFAULT_WORKSPACE_SETTINGS.default_image_model),
    default_provider_sort: optional('default_provider_sort', DEFAULT_WORKSPACE_SETTINGS.default_provider_sort),
    disabled_server_tools: optional('disabled_server_tools', DEFAULT_WORKSPACE_SETTINGS.disabled_server_tools),
    io_logging_api_key_ids: optional('io_logging_api_key_ids', DEFAULT_WORKSPACE_SETTINGS.io_logging_api_key_ids),
    io_logging_sampling_rate: optional('io_logging_sampling_rate', DEFAULT_WORKSPACE_SETTINGS.io_logging_sampling_rate),
    is_data_discount_logging_enabled: optional('is_data_discount_logging_enabled', false),
    is_observability_broadcast_enabled: optional('is_observability_broadcast_enabled', false),
    is_observability_io_logging_enabled: optional('is_observability_io_logging_enabled', false),
    created_by: optional('created_by', null),
    created_at: item.created_at as string,
    updated_at: item.updated_at as string,
    budgets: budgetsFromItem(item.budgets),
    include_byok_in_budgets: item.include_byok_in_budgets === true,
    budget_version: typeof item.budget_version === 'number' ? item.budget_version : 0,
    meter: meterFromItem(item),
  };
}
