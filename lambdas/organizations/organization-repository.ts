// Organizations (or personal accounts) and their workspaces, kept under one partition per organization.
import { GetCommand, PutCommand, TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  BUDGET_INTERVALS, DEFAULT_WORKSPACE_SETTINGS, type Budget, type BudgetInterval, type Organization, type OrganizationSettings, type Workspace, type WorkspaceSettings,
} from './types.js';
import { meterFromItem, meterToItem } from '../billing/meter.js';
import { nanosFromStore, nanosToStore, type Nanos } from '../platform/money.js';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { queryAll } from '../platform/dynamo/query-all.js';

export interface CreditGrant {
  id: string;
  amount: Nanos;
  note: string | null;
  /** Who added them: 'operator' (command line or operator key) or a key hash. */
  by: string;
  created_at: string;
}

export interface DefaultOrganization {
  org_id: string;
  workspace_id: string;
}

export class OrganizationRepository {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string) {}

  /** Creates an organization with its first workspace, both or neither. */
  async create(org: Organization, workspace: Workspace): Promise<void> {
    await this.db.send(new TransactWriteCommand({
      TransactItems: [
        { Put: { TableName: this.tableName, Item: orgToItem(org), ConditionExpression: 'attribute_not_exists(pk)' } },
        { Put: { TableName: this.tableName, Item: workspaceToItem(workspace), ConditionExpression: 'attribute_not_exists(pk)' } },
        { Put: { TableName: this.tableName, Item: this.slugClaim(workspace), ConditionExpression: 'attribute_not_exists(pk)' } },
      ],
    }));
  }

  private slugClaim(workspace: Pick<Workspace, 'org_id' | 'id' | 'slug'>): Record<string, unknown> {
    return { ...itemKeys.workspaceSlug(workspace.org_id, workspace.slug), type: 'workspace_slug', workspace_id: workspace.id };
  }

  /** Creates a workspace; false when its slug is taken in the organization. */
  async createWorkspace(workspace: Workspace): Promise<boolean> {
    try {
      await this.db.send(new TransactWriteCommand({
        TransactItems: [
          { ConditionCheck: { TableName: this.tableName, Key: itemKeys.organization(workspace.org_id), ConditionExpression: 'attribute_exists(pk)' } },
          { Put: { TableName: this.tableName, Item: workspaceToItem(workspace), ConditionExpression: 'attribute_not_exists(pk)' } },
          { Put: { TableName: this.tableName, Item: this.slugClaim(workspace), ConditionExpression: 'attribute_not_exists(pk)' } },
        ],
      }));
      return true;
    } catch (err) {
      if (err instanceof TransactionCanceledException && err.CancellationReasons?.[2]?.Code === 'ConditionalCheckFailed') return false;
      throw err;
    }
  }

  /** A workspace by id or by slug. */
  async findWorkspace(orgId: string, ref: string): Promise<Workspace | undefined> {
    const byId = await this.getWorkspace(orgId, ref);
    if (byId) return byId;
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.workspaceSlug(orgId, ref) }));
    return Item ? this.getWorkspace(orgId, Item.workspace_id as string) : undefined;
  }

  /**
   * Applies new settings to a workspace read just before (`current`); a slug change moves its claim in the
   * same transaction. 'conflict' when the new slug is taken, undefined when the workspace changed or vanished.
   */
  async updateWorkspace(current: Workspace, settings: Partial<WorkspaceSettings>, now: string): Promise<Workspace | 'conflict' | undefined> {
    const next: Workspace = { ...current, ...settings, updated_at: now };
    const names: Record<string, string> = { '#updated_at': 'updated_at', '#slug': 'slug' };
    const values: Record<string, unknown> = { ':updated_at': now, ':old_slug': current.slug };
    const sets = ['#updated_at = :updated_at'];
    for (const [field, value] of Object.entries(settings)) {
      if (value === undefined) continue;
      names[`#${field}`] = field;
      values[`:${field}`] = value;
      sets.push(`#${field} = :${field}`);
    }
    const update = {
      Update: {
        TableName: this.tableName,
        Key: itemKeys.workspace(current.org_id, current.id),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: 'attribute_exists(pk) AND #slug = :old_slug',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
    };
    const moves = next.slug !== current.slug;
    try {
      await this.db.send(new TransactWriteCommand({
        TransactItems: moves
          ? [
            update,
            { Delete: { TableName: this.tableName, Key: itemKeys.workspaceSlug(current.org_id, current.slug) } },
            { Put: { TableName: this.tableName, Item: this.slugClaim(next), ConditionExpression: 'attribute_not_exists(pk)' } },
          ]
          : [update],
      }));
    } catch (err) {
      if (err instanceof TransactionCanceledException) {
        if (moves && err.CancellationReasons?.[2]?.Code === 'ConditionalCheckFailed') return 'conflict';
        if (err.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed') return undefined;
      }
      throw err;
    }
    return this.getWorkspace(current.org_id, current.id);
  }

  async deleteWorkspace(workspace: Workspace): Promise<boolean> {
    try {
      await this.db.send(new TransactWriteCommand({
        TransactItems: [
          { Delete: { TableName: this.tableName, Key: itemKeys.workspace(workspace.org_id, workspace.id), ConditionExpression: 'attribute_exists(pk)' } },
          { Delete: { TableName: this.tableName, Key: itemKeys.workspaceSlug(workspace.org_id, workspace.slug) } },
        ],
      }));
      return true;
    } catch (err) {
      if (err instanceof TransactionCanceledException && err.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed') return false;
      throw err;
    }
  }

  /**
   * Creates or replaces one budget of a workspace (and optionally the workspace-wide BYOK switch); every
   * change bumps budget_version so that reservations made with an older copy are retried.
   */
  async putBudget(orgId: string, workspaceId: string, interval: BudgetInterval, budget: Budget | null, includeByok: boolean | undefined, now: string): Promise<Workspace | undefined> {
    const names: Record<string, string> = { '#budgets': 'budgets', '#i': interval, '#bv': 'budget_version', '#updated_at': 'updated_at' };
    const values: Record<string, unknown> = { ':one': 1, ':zero': 0, ':updated_at': now };
    const sets = ['#bv = if_not_exists(#bv, :zero) + :one', '#updated_at = :updated_at'];
    let remove = '';
    // Workspaces from before budgets existed have no map to set a path in: give them one first.
    await this.db.send(new UpdateCommand({
      TableName: this.tableName,
      Key: itemKeys.workspace(orgId, workspaceId),
      UpdateExpression: 'SET #budgets = :empty',
      ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#budgets)',
      ExpressionAttributeNames: { '#budgets': 'budgets' },
      ExpressionAttributeValues: { ':empty': {} },
    })).catch((err: unknown) => { if (!(err instanceof ConditionalCheckFailedException)) throw err; });
    if (budget) {
      values[':budget'] = { ...budget, limit: nanosToStore(budget.limit) };
      sets.push('#budgets.#i = :budget');
    } else remove = ' REMOVE #budgets.#i';
    if (includeByok !== undefined) {
      names['#ib'] = 'include_byok_in_budgets';
      values[':ib'] = includeByok;
      sets.push('#ib = :ib');
    }
    try {
      const { Attributes } = await this.db.send(new UpdateCommand({
        TableName: this.tableName,
        Key: itemKeys.workspace(orgId, workspaceId),
        UpdateExpression: `SET ${sets.join(', ')}${remove}`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }));
      return Attributes ? workspaceFromItem(Attributes) : undefined;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return undefined;
      throw err;
    }
  }

  /** Sets the operator's switches of an organization; undefined when there is no such organization. */
  setFlags(orgId: string, flags: Partial<Pick<Organization, 'intern_programme' | 'vault_writes_disabled'>>, now: string): Promise<Organization | undefined> {
    return this.updateOrganization(orgId, flags, '', now);
  }

  /**
   * Adds credits to an organization (a negative amount corrects an earlier grant) and records the grant.
   * Undefined when there is no such organization.
   */
  async addCredits(orgId: string, grant: CreditGrant): Promise<Organization | undefined> {
    // An organization from before balances existed gets its balance first, or ADD would start it at the grant.
    const existing = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.organization(orgId), ConsistentRead: true }));
    if (existing.Item && existing.Item.balance === undefined) {
      const item = existing.Item;
      await this.db.send(new UpdateCommand({
        TableName: this.tableName,
        Key: itemKeys.organization(orgId),
        UpdateExpression: 'SET balance = :balance',
        ConditionExpression: 'attribute_not_exists(balance)',
        ExpressionAttributeValues: { ':balance': nanosToStore(nanosFromStore(item.total_credits) - nanosFromStore(item.total_usage) - nanosFromStore(item.held)) },
      })).catch((err: unknown) => { if (!(err instanceof ConditionalCheckFailedException)) throw err; });
    }
    try {
      await this.db.send(new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: this.tableName,
              Key: itemKeys.organization(orgId),
              UpdateExpression: 'ADD total_credits :amount, balance :amount SET updated_at = :at',
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeValues: { ':amount': nanosToStore(grant.amount), ':at': grant.created_at },
            },
          },
          {
            Put: {
              TableName: this.tableName,
              Item: { ...itemKeys.creditGrant(orgId, grant.created_at, grant.id), type: 'credit_grant', ...grant, amount: nanosToStore(grant.amount) },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
        ],
      }));
    } catch (err) {
      if (err instanceof TransactionCanceledException && err.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed') return undefined;
      throw err;
    }
    return this.get(orgId);
  }

  async get(orgId: string): Promise<Organization | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.organization(orgId) }));
    return Item ? orgFromItem(Item) : undefined;
  }

  async updateSettings(orgId: string, settings: Partial<OrganizationSettings>, now: string): Promise<Organization | undefined> {
    return this.updateOrganization(orgId, settings, '#settings.', now);
  }

  /** Sets fields of an organization (under `prefix`, a path such as `#settings.`); undefined when there is none. */
  private async updateOrganization(orgId: string, fields: Record<string, unknown>, prefix: string, now: string): Promise<Organization | undefined> {
    const names: Record<string, string> = { '#updated_at': 'updated_at', ...(prefix ? { '#settings': 'settings' } : {}) };
    const values: Record<string, unknown> = { ':updated_at': now };
    const sets = ['#updated_at = :updated_at'];
    for (const [field, value] of Object.entries(fields)) {
      if (value === undefined) continue;
      names[`#${field}`] = field;
      values[`:${field}`] = value;
      sets.push(`${prefix}#${field} = :${field}`);
    }
    try {
      const { Attributes } = await this.db.send(new UpdateCommand({
        TableName: this.tableName,
        Key: itemKeys.organization(orgId),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }));
      return Attributes ? orgFromItem(Attributes) : undefined;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return undefined;
      throw err;
    }
  }

  /** @param readUnits told the read capacity the lookup consumed (for the request's cost ledger). */
  async getWorkspace(orgId: string, workspaceId: string, readUnits?: (units: number) => void): Promise<Workspace | undefined> {
    const { Item, ConsumedCapacity } = await this.db.send(new GetCommand({
      TableName: this.tableName, Key: itemKeys.workspace(orgId, workspaceId), ...(readUnits ? { ReturnConsumedCapacity: 'TOTAL' as const } : {}),
    }));
    readUnits?.(ConsumedCapacity?.ReadCapacityUnits ?? ConsumedCapacity?.CapacityUnits ?? 0);
    return Item ? workspaceFromItem(Item) : undefined;
  }

  async listWorkspaces(orgId: string): Promise<Workspace[]> {
    const { pk, skPrefix } = itemKeys.workspacesOf(orgId);
    return (await queryAll(this.db, this.tableName, pk, { skPrefix })).map(workspaceFromItem);
  }

  async getDefaultOrganization(): Promise<DefaultOrganization | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.defaultOrganization(), ConsistentRead: true }));
    return Item ? { org_id: Item.org_id as string, workspace_id: Item.workspace_id as string } : undefined;
  }

  /** Records which organization is the default (local start, first operator key) once; false if one was recorded first. */
  async putDefaultOrganization(defaults: DefaultOrganization): Promise<boolean> {
    try {
      await this.db.send(new PutCommand({
        TableName: this.tableName,
        Item: { ...itemKeys.defaultOrganization(), type: 'default_organization', ...defaults },
        ConditionExpression: 'attribute_not_exists(pk)',
      }));
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }
}

function orgToItem(org: Organization): Record<string, unknown> {
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

function budgetsToItem(budgets: Workspace['budgets']): Record<string, unknown> {
  return Object.fromEntries(Object.entries(budgets).map(([interval, budget]) => [interval, { ...budget, limit: nanosToStore(budget.limit) }]));
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
  const { usage: _u, byok_usage: _b, periods: _p, held: _h, budgets, ...rest } = workspace;
  return { ...itemKeys.workspace(workspace.org_id, workspace.id), type: 'workspace', ...rest, budgets: budgetsToItem(budgets), ...meterToItem(workspace) };
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
    ...meterFromItem(item),
  };
}
