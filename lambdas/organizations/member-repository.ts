// Members and workspace members, under the organization's partition.
import { DeleteCommand, GetCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { partition, queryAll } from '../platform/dynamo/query.js';
import { cancellationOf } from '../platform/dynamo/write-failures.js';
import { memberEmailClaim, memberItem, workspaceMemberItem, type Member, type WorkspaceMember } from './members.js';

function strip<T>(item: Record<string, unknown>): T {
  const { pk: _pk, sk: _sk, type: _type, ...rest } = item;
  return rest as T;
}

export class MemberRepository {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string) {}

  /** Adds a member; false when the organization has a member with that email already. */
  async add(member: Member, workspaces: WorkspaceMember[] = []): Promise<boolean> {
    try {
      await this.db.send(new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: this.tableName, Item: memberEmailClaim(member), ConditionExpression: 'attribute_not_exists(pk)' } },
          { Put: { TableName: this.tableName, Item: memberItem(member), ConditionExpression: 'attribute_not_exists(pk)' } },
          ...workspaces.map((entry) => ({ Put: { TableName: this.tableName, Item: workspaceMemberItem(member.org_id, entry) } })),
        ],
      }));
      return true;
    } catch (err) {
      if (cancellationOf(err)?.failedAt(0)) return false;
      throw err;
    }
  }

  async get(orgId: string, userId: string): Promise<Member | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.member(orgId, userId), ConsistentRead: true }));
    return Item ? strip<Member>(Item) : undefined;
  }

  async byEmail(orgId: string, email: string): Promise<Member | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.memberEmail(orgId, email.trim().toLowerCase()), ConsistentRead: true }));
    return Item ? this.get(orgId, Item.user_id as string) : undefined;
  }

  /** The organization's members, oldest first. */
  async list(orgId: string): Promise<Member[]> {
    const { pk, skPrefix } = itemKeys.membersOf(orgId);
    return (await queryAll(this.db, partition(this.tableName, pk, { skPrefix, consistent: true })))
      .map((item) => strip<Member>(item))
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  }

  /**
   * Removes a member, their email claim and every workspace membership. The member goes first: a workspace
   * add racing with the removal then fails its check that the member exists, and leaves nothing behind.
   */
  async remove(member: Member): Promise<void> {
    await this.db.send(new TransactWriteCommand({
      TransactItems: [
        { Delete: { TableName: this.tableName, Key: itemKeys.memberEmail(member.org_id, member.email) } },
        { Delete: { TableName: this.tableName, Key: itemKeys.member(member.org_id, member.id) } },
      ],
    }));
    const { pk, skPrefix } = itemKeys.allWorkspaceMembersOf(member.org_id);
    const memberships = (await queryAll(this.db, partition(this.tableName, pk, { skPrefix, consistent: true }))).filter((item) => item.user_id === member.id);
    for (const item of memberships) await this.db.send(new DeleteCommand({ TableName: this.tableName, Key: { pk: item.pk, sk: item.sk } }));
  }

  /** Removes every membership of a workspace (it is being deleted). */
  async dropWorkspace(orgId: string, workspaceId: string): Promise<void> {
    const { pk, skPrefix } = itemKeys.workspaceMembersOf(orgId, workspaceId);
    for (const item of await queryAll(this.db, partition(this.tableName, pk, { skPrefix, consistent: true }))) {
      await this.db.send(new DeleteCommand({ TableName: this.tableName, Key: { pk: item.pk, sk: item.sk } }));
    }
  }

  async workspaceMembers(orgId: string, workspaceId: string): Promise<WorkspaceMember[]> {
    const { pk, skPrefix } = itemKeys.workspaceMembersOf(orgId, workspaceId);
    return (await queryAll(this.db, partition(this.tableName, pk, { skPrefix, consistent: true })))
      .map((item) => strip<WorkspaceMember>(item))
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.user_id.localeCompare(b.user_id));
  }

  /** Adds the members to the workspace (those already in it stay as they are); the memberships added. */
  async addToWorkspace(orgId: string, workspaceId: string, userIds: string[], now: string): Promise<WorkspaceMember[]> {
    const have = new Set((await this.workspaceMembers(orgId, workspaceId)).map((entry) => entry.user_id));
    const added: WorkspaceMember[] = [];
    for (const userId of new Set(userIds)) {
      if (have.has(userId)) continue;
      const entry: WorkspaceMember = { id: `${workspaceId}:${userId}`, workspace_id: workspaceId, user_id: userId, role: 'member', created_at: now };
      try {
        await this.db.send(new TransactWriteCommand({
          TransactItems: [
            // The member and the workspace must still exist when the membership is written.
            { ConditionCheck: { TableName: this.tableName, Key: itemKeys.member(orgId, userId), ConditionExpression: 'attribute_exists(pk)' } },
            { ConditionCheck: { TableName: this.tableName, Key: itemKeys.workspace(orgId, workspaceId), ConditionExpression: 'attribute_exists(pk)' } },
            { Put: { TableName: this.tableName, Item: workspaceMemberItem(orgId, entry), ConditionExpression: 'attribute_not_exists(pk)' } },
          ],
        }));
        added.push(entry);
      } catch (err) {
        if (!cancellationOf(err)) throw err;
      }
    }
    return added;
  }

  /** Every workspace membership of the organization. */
  async memberships(orgId: string): Promise<WorkspaceMember[]> {
    const { pk, skPrefix } = itemKeys.allWorkspaceMembersOf(orgId);
    return (await queryAll(this.db, partition(this.tableName, pk, { skPrefix, consistent: true }))).map((item) => strip<WorkspaceMember>(item));
  }

  /**
   * Writes a membership (new, or its role and grants changed) if the member and the workspace still exist;
   * false when one of them is gone.
   */
  async putMembership(orgId: string, entry: WorkspaceMember): Promise<boolean> {
    try {
      await this.db.send(new TransactWriteCommand({
        TransactItems: [
          { ConditionCheck: { TableName: this.tableName, Key: itemKeys.member(orgId, entry.user_id), ConditionExpression: 'attribute_exists(pk)' } },
          { ConditionCheck: { TableName: this.tableName, Key: itemKeys.workspace(orgId, entry.workspace_id), ConditionExpression: 'attribute_exists(pk)' } },
          { Put: { TableName: this.tableName, Item: workspaceMemberItem(orgId, entry) } },
        ],
      }));
      return true;
    } catch (err) {
      if (cancellationOf(err)) return false;
      throw err;
    }
  }

  async deleteMembership(orgId: string, workspaceId: string, userId: string): Promise<void> {
    await this.db.send(new DeleteCommand({ TableName: this.tableName, Key: itemKeys.workspaceMember(orgId, workspaceId, userId) }));
  }

  /** Removes the members from the workspace; how many were in it. */
  async removeFromWorkspace(orgId: string, workspaceId: string, userIds: string[]): Promise<number> {
    const have = new Set((await this.workspaceMembers(orgId, workspaceId)).map((entry) => entry.user_id));
    let removed = 0;
    for (const userId of new Set(userIds)) {
      if (!have.has(userId)) continue;
      await this.db.send(new DeleteCommand({ TableName: this.tableName, Key: itemKeys.workspaceMember(orgId, workspaceId, userId) }));
      removed += 1;
    }
    return removed;
  }
}
