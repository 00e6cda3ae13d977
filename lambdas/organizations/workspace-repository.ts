// Workspaces and their budgets, under their organization's partition beside it (the item layout:
// organization-item.ts); each workspace's slug is claimed by an item of its own, so slugs stay unique.
import { GetCommand, TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Budget, BudgetInterval, Workspace, WorkspaceSettings } from './types.js';
import { budgetToItem, workspaceFromItem, workspaceSlugClaimItem, workspaceToItem } from './organization-item.js';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { partition, queryAll } from '../platform/dynamo/query.js';
import { UpdateBuilder } from '../platform/dynamo/update-builder.js';
import { cancellationOf, unlessConditionFails } from '../platform/dynamo/write-failures.js';

export class WorkspaceRepository {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string) {}

  /** Creates a workspace; false when its slug is taken in the organization. */
  async createWorkspace(workspace: Workspace): Promise<boolean> {
    try {
      await this.db.send(new TransactWriteCommand({
        TransactItems: [
          { ConditionCheck: { TableName: this.tableName, Key: itemKeys.organization(workspace.org_id), ConditionExpression: 'attribute_exists(pk)' } },
          { Put: { TableName: this.tableName, Item: workspaceToItem(workspace), ConditionExpression: 'attribute_not_exists(pk)' } },
          { Put: { TableName: this.tableName, Item: workspaceSlugClaimItem(workspace), ConditionExpression: 'attribute_not_exists(pk)' } },
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
            { Put: { TableName: this.tableName, Item: workspaceSlugClaimItem(next), ConditionExpression: 'attribute_not_exists(pk)' } },
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
}
