// End users under their organization's partition (ORG#<org>, ENDUSER#<user hash>), each item carrying its
// spend meter's flat attributes (billing/meter-item.ts), which holds and the aggregator move with ADD. So a
// change of its settings is an UpdateItem of those fields only, never a put over the meter.
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { partition, queryAll } from '../platform/dynamo/query.js';
import { UpdateBuilder } from '../platform/dynamo/update-builder.js';
import { nanosFromStore, nanosToStore } from '../platform/money.js';
import { meterFromItem, meterToItem } from '../billing/meter-item.js';
import { newMeter } from '../billing/meter.js';
import type { Interval } from '../billing/periods.js';
import type { EndUser } from './types.js';

export type EndUserChanges = Partial<Pick<EndUser, 'name' | 'limit' | 'limit_reset' | 'include_byok_in_limit' | 'disabled'>>;

/** An end user from its stored item (a refused hold returns one too). */
export function endUserFromItem(item: Record<string, unknown>): EndUser {
  return {
    org_id: item.org_id as string,
    user: item.user as string,
    user_hash: item.user_hash as string,
    name: (item.name as string | null | undefined) ?? null,
    limit: item.limit === undefined || item.limit === null ? null : nanosFromStore(item.limit),
    limit_reset: (item.limit_reset as Interval | null | undefined) ?? null,
    include_byok_in_limit: item.include_byok_in_limit === true,
    disabled: item.disabled === true,
    settings_version: typeof item.settings_version === 'number' ? item.settings_version : 0,
    meter: meterFromItem(item),
    created_at: item.created_at as string,
    updated_at: item.updated_at as string,
  };
}

export class EndUserRepository {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string) {}

  /** Stores a new end user; false when one with that id exists already. */
  async create(endUser: Omit<EndUser, 'meter' | 'settings_version'>, at: Date): Promise<EndUser | undefined> {
    const stored: EndUser = { ...endUser, settings_version: 1, meter: newMeter(at) };
    try {
      await this.db.send(new PutCommand({
        TableName: this.tableName,
        Item: {
          ...itemKeys.endUser(endUser.org_id, endUser.user_hash), type: 'end_user',
          org_id: stored.org_id, user: stored.user, user_hash: stored.user_hash, name: stored.name,
          limit: stored.limit === null ? null : nanosToStore(stored.limit), limit_reset: stored.limit_reset,
          include_byok_in_limit: stored.include_byok_in_limit, disabled: stored.disabled, settings_version: stored.settings_version,
          created_at: stored.created_at, updated_at: stored.updated_at,
          ...meterToItem(stored.meter),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }));
      return stored;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return undefined;
      throw err;
    }
  }

  async get(orgId: string, userHash: string, consistent = true): Promise<EndUser | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.endUser(orgId, userHash), ConsistentRead: consistent }));
    return Item ? endUserFromItem(Item) : undefined;
  }

  /** Every end user of the organization, in hash order. */
  async list(orgId: string, consistent = false): Promise<EndUser[]> {
    const { pk, skPrefix } = itemKeys.endUsersOf(orgId);
    return (await queryAll(this.db, partition(this.tableName, pk, { skPrefix, consistent }))).map(endUserFromItem);
  }

  /** Changes its settings (its settings version moves on); undefined when it does not exist. */
  async update(orgId: string, userHash: string, changes: EndUserChanges, updatedAt: string): Promise<EndUser | undefined> {
    const update = new UpdateBuilder();
    update.setFields({ ...changes, limit: changes.limit === undefined ? undefined : changes.limit === null ? null : nanosToStore(changes.limit), updated_at: updatedAt });
    update.add('settings_version', 1);
    update.condition('attribute_exists(pk)');
    try {
      const { Attributes } = await this.db.send(new UpdateCommand({ TableName: this.tableName, Key: itemKeys.endUser(orgId, userHash), ...update.build(), ReturnValues: 'ALL_NEW' }));
      return Attributes ? endUserFromItem(Attributes) : undefined;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return undefined;
      throw err;
    }
  }

  /** False when it did not exist. Records of its requests not yet applied skip its meter. */
  async delete(orgId: string, userHash: string): Promise<boolean> {
    try {
      await this.db.send(new DeleteCommand({ TableName: this.tableName, Key: itemKeys.endUser(orgId, userHash), ConditionExpression: 'attribute_exists(pk)' }));
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }
}
