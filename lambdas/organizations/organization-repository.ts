// Organizations (or personal accounts) and their workspaces, kept under one partition per organization
// (the item layout: organization-item.ts).
import { GetCommand, PutCommand, TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Budget, BudgetInterval, Organization, OrganizationSettings, Workspace, WorkspaceSettings } from './types.js';
import { budgetToItem, orgFromItem, orgToItem, workspaceFromItem, workspaceToItem } from './organization-item.js';
import { nanosFromStore, nanosToStore, type Nanos } from '../platform/money.js';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { partition, queryAll } from '../platform/dynamo/query.js';
import { UpdateBuilder } from '../platform/dynamo/update-builder.js';
import { cancellationOf, unlessConditionFails } from '../platform/dynamo/write-failures.js';

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
      if (cancellationOf(err)?.failedAt(2)) return false;
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
    const changes = new UpdateBuilder().set('updated_at', now).setFields(settings);
    changes.condition(`attribute_exists(pk) AND ${changes.name('slug')} = ${changes.value('old_slug', current.slug)}`);
    const update = {
      Update: {
        TableName: this.tableName,
        Key: itemKeys.workspace(current.org_id, current.id),
        ...changes.build(),
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
      const cancellation = cancellationOf(err);
      if (moves && cancellation?.failedAt(2)) return 'conflict';
      if (cancellation?.failedAt(0)) return undefined;
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
      if (cancellationOf(err)?.failedAt(0)) return false;
      throw err;
    }
  }

  /**
   * Creates or replaces one budget of a workspace (and optionally the workspace-wide BYOK switch); every
   * change bumps budget_version so that reservations made with an older copy are retried.
   */
  async putBudget(orgId: string, workspaceId: string, interval: BudgetInterval, budget: Budget | null, includeByok: boolean | undefined, now: string): Promise<Workspace | undefined> {
    // Workspaces from before budgets existed have no map to set a path in: give them one first.
    await unlessConditionFails(this.db.send(new UpdateCommand({
      TableName: this.tableName,
      Key: itemKeys.workspace(orgId, workspaceId),
      UpdateExpression: 'SET #budgets = :empty',
      ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#budgets)',
      ExpressionAttributeNames: { '#budgets': 'budgets' },
      ExpressionAttributeValues: { ':empty': {} },
    })), undefined);
    const update = new UpdateBuilder();
    const version = update.name('budget_version', 'bv');
    update.setExpression(`${version} = if_not_exists(${version}, ${update.value('zero', 0)}) + ${update.value('one', 1)}`).set('updated_at', now);
    const path = `${update.name('budgets')}.${update.name(interval, 'i')}`;
    if (budget) update.setExpression(`${path} = ${update.value('budget', budgetToItem(budget))}`);
    else update.removeExpression(path);
    if (includeByok !== undefined) update.set('include_byok_in_budgets', includeByok);
    update.condition('attribute_exists(pk)');
    const result = await unlessConditionFails(this.db.send(new UpdateCommand({
      TableName: this.tableName,
      Key: itemKeys.workspace(orgId, workspaceId),
      ...update.build(),
      ReturnValues: 'ALL_NEW',
    })), undefined);
    return result?.Attributes ? workspaceFromItem(result.Attributes) : undefined;
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
      await unlessConditionFails(this.db.send(new UpdateCommand({
        TableName: this.tableName,
        Key: itemKeys.organization(orgId),
        UpdateExpression: 'SET balance = :balance',
        ConditionExpression: 'attribute_not_exists(balance)',
        ExpressionAttributeValues: { ':balance': nanosToStore(nanosFromStore(item.total_credits) - nanosFromStore(item.total_usage) - nanosFromStore(item.held)) },
      })), undefined);
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
      if (cancellationOf(err)?.failedAt(0)) return undefined;
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
    const update = new UpdateBuilder().set('updated_at', now);
    if (prefix) update.name('settings');
    update.setFields(fields, prefix).condition('attribute_exists(pk)');
    const result = await unlessConditionFails(this.db.send(new UpdateCommand({
      TableName: this.tableName,
      Key: itemKeys.organization(orgId),
      ...update.build(),
      ReturnValues: 'ALL_NEW',
    })), undefined);
    return result?.Attributes ? orgFromItem(result.Attributes) : undefined;
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
    return (await queryAll(this.db, partition(this.tableName, pk, { skPrefix }))).map(workspaceFromItem);
  }

  async getDefaultOrganization(): Promise<DefaultOrganization | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.defaultOrganization(), ConsistentRead: true }));
    return Item ? { org_id: Item.org_id as string, workspace_id: Item.workspace_id as string } : undefined;
  }

  /** Records which organization is the default (local start, first operator key) once; false if one was recorded first. */
  async putDefaultOrganization(defaults: DefaultOrganization): Promise<boolean> {
    return unlessConditionFails(this.db.send(new PutCommand({
      TableName: this.tableName,
      Item: { ...itemKeys.defaultOrganization(), type: 'default_organization', ...defaults },
      ConditionExpression: 'attribute_not_exists(pk)',
    })).then(() => true), false);
  }
}
