// Organizations (or personal accounts) and their workspaces, kept under one partition per organization.
import { GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { Organization, OrganizationSettings, Workspace } from '../tenancy/types.js';
import { nanosFromStore, nanosToStore } from '../shared/money.js';
import { itemKeys } from './item-keys.js';

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
      ],
    }));
  }

  async get(orgId: string): Promise<Organization | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.organization(orgId) }));
    return Item ? orgFromItem(Item) : undefined;
  }

  async updateSettings(orgId: string, settings: Partial<OrganizationSettings>, now: string): Promise<Organization | undefined> {
    const names: Record<string, string> = { '#settings': 'settings', '#updated_at': 'updated_at' };
    const values: Record<string, unknown> = { ':updated_at': now };
    const sets = ['#updated_at = :updated_at'];
    for (const [field, value] of Object.entries(settings)) {
      if (value === undefined) continue;
      names[`#${field}`] = field;
      values[`:${field}`] = value;
      sets.push(`#settings.#${field} = :${field}`);
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

  async getWorkspace(orgId: string, workspaceId: string): Promise<Workspace | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.workspace(orgId, workspaceId) }));
    return Item ? workspaceFromItem(Item) : undefined;
  }

  async listWorkspaces(orgId: string): Promise<Workspace[]> {
    const { pk, skPrefix } = itemKeys.workspacesOf(orgId);
    const items: Workspace[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.db.send(new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
        ExclusiveStartKey: startKey,
      }));
      items.push(...(page.Items ?? []).map(workspaceFromItem));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return items;
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
  };
}

function orgFromItem(item: Record<string, unknown>): Organization {
  const settings = (item.settings ?? {}) as Partial<OrganizationSettings>;
  return {
    id: item.id as string,
    name: item.name as string,
    kind: item.kind as Organization['kind'],
    settings: { is_filtered_model_catalog_enabled: settings.is_filtered_model_catalog_enabled === true },
    total_credits: nanosFromStore(item.total_credits),
    total_usage: nanosFromStore(item.total_usage),
    created_at: item.created_at as string,
    updated_at: item.updated_at as string,
  };
}

function workspaceToItem(workspace: Workspace): Record<string, unknown> {
  return { ...itemKeys.workspace(workspace.org_id, workspace.id), type: 'workspace', ...workspace };
}

function workspaceFromItem(item: Record<string, unknown>): Workspace {
  return {
    id: item.id as string,
    org_id: item.org_id as string,
    name: item.name as string,
    slug: item.slug as string,
    created_at: item.created_at as string,
    updated_at: item.updated_at as string,
  };
}
