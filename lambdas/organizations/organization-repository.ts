// Organizations (or personal accounts) and the record of the default organization; an organization is
// created together with its first workspace (the item layout: organization-item.ts). Workspaces themselves:
// workspace-repository.ts; credit grants: the credits feature's repository.
import { GetCommand, PutCommand, TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Organization, OrganizationSettings, Workspace } from './types.js';
import { orgFromItem, orgToItem, workspaceSlugClaimItem, workspaceToItem } from './organization-item.js';
import { memberEmailClaim, memberItem, workspaceMemberItem, type Member, type WorkspaceMember } from './members.js';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { UpdateBuilder } from '../platform/dynamo/update-builder.js';
import { unlessConditionFails } from '../platform/dynamo/write-failures.js';

export interface DefaultOrganization {
  org_id: string;
  workspace_id: string;
}

export class OrganizationRepository {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string) {}

  /** Creates an organization with its first workspace, both or neither. */
  /** The organization, its first workspace and its owner (a member of both), in one transaction. */
  async create(org: Organization, workspace: Workspace, owner: Member): Promise<void> {
    const membership: WorkspaceMember = { id: `${workspace.id}:${owner.id}`, workspace_id: workspace.id, user_id: owner.id, role: 'admin', created_at: owner.created_at };
    await this.db.send(new TransactWriteCommand({
      TransactItems: [
        { Put: { TableName: this.tableName, Item: orgToItem(org), ConditionExpression: 'attribute_not_exists(pk)' } },
        { Put: { TableName: this.tableName, Item: workspaceToItem(workspace), ConditionExpression: 'attribute_not_exists(pk)' } },
        { Put: { TableName: this.tableName, Item: workspaceSlugClaimItem(workspace), ConditionExpression: 'attribute_not_exists(pk)' } },
        { Put: { TableName: this.tableName, Item: memberItem(owner), ConditionExpression: 'attribute_not_exists(pk)' } },
        { Put: { TableName: this.tableName, Item: memberEmailClaim(owner), ConditionExpression: 'attribute_not_exists(pk)' } },
        { Put: { TableName: this.tableName, Item: workspaceMemberItem(org.id, membership), ConditionExpression: 'attribute_not_exists(pk)' } },
      ],
    }));
  }

  /** Sets the operator's switches of an organization; undefined when there is no such organization. */
  setFlags(orgId: string, flags: Partial<Pick<Organization, 'intern_programme' | 'vault_writes_disabled'>>, now: string): Promise<Organization | undefined> {
    return this.updateOrganization(orgId, flags, '', now);
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
