// SCIM users, groups, group mappings and sync jobs, each an item under the organization's partition. A
// user's userName and email are claimed by items of their own, written in one transaction with the user, so
// two pushes of the same user at once (an identity provider retrying a POST it thinks timed out) make one.
import { DeleteCommand, GetCommand, PutCommand, TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unlessConditionFails } from '../platform/dynamo/write-failures.js';
import { transactRetryingConflicts } from '../platform/dynamo/conflict-retry.js';
import { UnavailableError } from '../platform/errors.js';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { partition, queryAll } from '../platform/dynamo/query.js';
import type { GroupMapping, ScimGroup, ScimUser, SyncJob } from './types.js';

type Kind = 'USER' | 'GROUP' | 'MAP' | 'JOB';
interface Shapes { USER: ScimUser; GROUP: ScimGroup; MAP: GroupMapping; JOB: SyncJob }

const CLAIMED = ['userName', 'email'] as const;
const valueOf = (user: ScimUser, attribute: (typeof CLAIMED)[number]) => (attribute === 'userName' ? user.user_name : user.email);

const TYPES: Record<Kind, string> = { USER: 'scim_user', GROUP: 'scim_group', MAP: 'scim_group_mapping', JOB: 'scim_sync_job' };
/** Sync jobs are kept for 30 days. */
const JOB_TTL_S = 30 * 24 * 3600;

function strip<T>(item: Record<string, unknown>): T {
  const { pk: _pk, sk: _sk, type: _type, expires_at: _ttl, ...rest } = item;
  return rest as T;
}

export class ScimRepository {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string) {}

  async put<K extends Kind>(orgId: string, kind: K, value: Shapes[K]): Promise<void> {
    await this.db.send(new PutCommand({
      TableName: this.tableName,
      Item: { ...itemKeys.scim(orgId, kind, value.id), type: TYPES[kind], ...value, ...(kind === 'JOB' ? { expires_at: Math.floor(Date.now() / 1000) + JOB_TTL_S } : {}) },
    }));
  }

  /**
   * Takes a user out of a group's members in place: the rest of the group is not written again, so a change
   * made to it meanwhile stays. The element is removed only while it is still that user (read again if not).
   */
  async removeGroupMember(orgId: string, groupId: string, userId: string, now: string): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const group = await this.get(orgId, 'GROUP', groupId);
      const index = group ? group.member_ids.indexOf(userId) : -1;
      if (index < 0) return;
      const removed = await unlessConditionFails(this.db.send(new UpdateCommand({
        TableName: this.tableName,
        Key: itemKeys.scim(orgId, 'GROUP', groupId),
        UpdateExpression: `REMOVE member_ids[${index}] SET updated_at = :now`,
        ConditionExpression: `member_ids[${index}] = :user`,
        ExpressionAttributeValues: { ':user': userId, ':now': now },
      })).then(() => true), false);
      if (removed) return;
    }
    throw new UnavailableError('The group changed while a user was being taken out of it; retry', { retryAfterSeconds: 1 });
  }

  async get<K extends Kind>(orgId: string, kind: K, id: string): Promise<Shapes[K] | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.scim(orgId, kind, id), ConsistentRead: true }));
    return Item ? strip<Shapes[K]>(Item) : undefined;
  }

  async list<K extends Kind>(orgId: string, kind: K): Promise<Array<Shapes[K]>> {
    const { pk, skPrefix } = itemKeys.scimOf(orgId, kind);
    return (await queryAll(this.db, partition(this.tableName, pk, { skPrefix, consistent: true }))).map((item) => strip<Shapes[K]>(item));
  }

  async delete(orgId: string, kind: Kind, id: string): Promise<void> {
    await this.db.send(new DeleteCommand({ TableName: this.tableName, Key: itemKeys.scim(orgId, kind, id) }));
  }

  /**
   * Stores a user with its userName and email claimed for it (`previous`: the user as stored, whose claims of
   * other values are let go); the attribute another user holds, when one does.
   */
  async putUser(user: ScimUser, previous: ScimUser | undefined): Promise<'stored' | { taken: 'userName' | 'email' }> {
    const claims = CLAIMED.map((attribute) => ({ attribute, value: valueOf(user, attribute) }));
    const released = previous ? CLAIMED.filter((attribute) => valueOf(previous, attribute).toLowerCase() !== valueOf(user, attribute).toLowerCase()) : [];
    const refusal = await transactRetryingConflicts(() => this.db.send(new TransactWriteCommand({
      TransactItems: [
        ...claims.map(({ attribute, value }) => ({
          Put: {
            TableName: this.tableName,
            Item: { ...itemKeys.scimClaim(user.org_id, attribute, value), type: 'scim_claim', user_id: user.id },
            ConditionExpression: 'attribute_not_exists(pk) OR user_id = :id',
            ExpressionAttributeValues: { ':id': user.id },
          },
        })),
        { Put: { TableName: this.tableName, Item: { ...itemKeys.scim(user.org_id, 'USER', user.id), type: TYPES.USER, ...user } } },
        ...released.map((attribute) => ({
          Delete: {
            TableName: this.tableName, Key: itemKeys.scimClaim(user.org_id, attribute, valueOf(previous!, attribute)),
            ConditionExpression: 'attribute_not_exists(pk) OR user_id = :id', ExpressionAttributeValues: { ':id': user.id },
          },
        })),
      ],
    })), {
      // Not tried again: meeting another write of the same user at once (on AWS), the identity provider sends it again.
      attempts: 1,
      outcome: (cancellation) => CLAIMED.some((_, index) => cancellation.failedAt(index)),
      busy: () => new UnavailableError('Another change of this SCIM user is under way; retry shortly', { retryAfterSeconds: 1 }),
    });
    const taken = refusal && CLAIMED.find((_, index) => refusal.failedAt(index));
    return taken ? { taken } : 'stored';
  }

  /** Removes a user and its claims. */
  async deleteUser(user: ScimUser): Promise<void> {
    await this.db.send(new TransactWriteCommand({
      TransactItems: [
        { Delete: { TableName: this.tableName, Key: itemKeys.scim(user.org_id, 'USER', user.id) } },
        ...CLAIMED.map((attribute) => ({
          Delete: {
            TableName: this.tableName, Key: itemKeys.scimClaim(user.org_id, attribute, valueOf(user, attribute)),
            ConditionExpression: 'attribute_not_exists(pk) OR user_id = :id', ExpressionAttributeValues: { ':id': user.id },
          },
        })),
      ],
    }));
  }
}
