// End users under their organization's partition. Each registration is two items:
//   ENDUSER#<user hash>           the registration: which epoch is current (and that the id is taken)
//   ENDUSER#<user hash>#<epoch>   its record: settings, and the spend meter's flat attributes
//                                  (billing/meter-item.ts), which holds and the aggregator move with ADD
// A delete removes both; registering the id again makes a new epoch, so a hold or a record of the first
// registration still in flight finds its meter gone and never touches the new one. A change of settings is
// an UpdateItem of those fields only, never a put over the meter.
import { randomBytes } from 'node:crypto';
import { TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { partition, queryAll, queryUpTo } from '../platform/dynamo/query.js';
import { UpdateBuilder } from '../platform/dynamo/update-builder.js';
import { transactRetryingConflicts } from '../platform/dynamo/conflict-retry.js';
import { UnavailableError } from '../platform/errors.js';
import { nanosFromStore, nanosToStore } from '../platform/money.js';
import { meterFromItem, meterToItem } from '../billing/meter-item.js';
import { newMeter } from '../billing/meter.js';
import type { Interval } from '../billing/periods.js';
import type { EndUser } from './types.js';

export type EndUserChanges = Partial<Pick<EndUser, 'name' | 'limit' | 'limit_reset' | 'include_byok_in_limit' | 'disabled'>>;

const RECORD = 'end_user';
const REGISTRATION = 'end_user_registration';

/** An end user from its stored record (a refused hold returns one too). */
export function endUserFromItem(item: Record<string, unknown>): EndUser {
  return {
    org_id: item.org_id as string,
    user: item.user as string,
    user_hash: item.user_hash as string,
    epoch: item.epoch as string,
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

/** Attempts of a registration's create or delete that meet a concurrent transaction (its requests' holds, the aggregator). */
const TRANSACT_ATTEMPTS = 8;

export class EndUserRepository {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string, private readonly sleep?: (ms: number) => Promise<void>) {}

  /**
   * A transaction over a registration, tried again while it meets another transaction on its items (on AWS, a
   * busy end user's holds and the aggregator write its record); `refusedAt0` when its first item's condition
   * failed. Still conflicting after the attempts: a 503 to retry, never a 500.
   */
  private async transact(items: NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']>): Promise<'done' | 'refusedAt0'> {
    const refusal = await transactRetryingConflicts(() => this.db.send(new TransactWriteCommand({ TransactItems: items })), {
      attempts: TRANSACT_ATTEMPTS,
      outcome: (cancellation) => cancellation.failedAt(0),
      busy: () => new UnavailableError('The end user is busy (concurrent requests); retry shortly', { retryAfterSeconds: 1 }),
      ...(this.sleep ? { sleep: this.sleep } : {}),
    });
    return refusal ? 'refusedAt0' : 'done';
  }

  /** Stores a new registration; undefined when the id is registered already. */
  async create(endUser: Omit<EndUser, 'meter' | 'settings_version' | 'epoch'>, at: Date): Promise<EndUser | undefined> {
    const stored: EndUser = { ...endUser, epoch: randomBytes(6).toString('base64url'), settings_version: 1, meter: newMeter(at) };
    const outcome = await this.transact([
          {
            Put: {
              TableName: this.tableName,
              Item: { ...itemKeys.endUser(stored.org_id, stored.user_hash), type: REGISTRATION, epoch: stored.epoch },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          {
            Put: {
              TableName: this.tableName,
              Item: {
                ...itemKeys.endUserRecord(stored.org_id, stored.user_hash, stored.epoch), type: RECORD,
                org_id: stored.org_id, user: stored.user, user_hash: stored.user_hash, epoch: stored.epoch, name: stored.name,
                limit: stored.limit === null ? null : nanosToStore(stored.limit), limit_reset: stored.limit_reset,
                include_byok_in_limit: stored.include_byok_in_limit, disabled: stored.disabled, settings_version: stored.settings_version,
                created_at: stored.created_at, updated_at: stored.updated_at,
                ...meterToItem(stored.meter),
              },
            },
          },
    ]);
    return outcome === 'done' ? stored : undefined;
  }

  /** The current registration's record. */
  async get(orgId: string, userHash: string, consistent = true): Promise<EndUser | undefined> {
    const { pk, skPrefix } = itemKeys.endUserRecordsOf(orgId, userHash);
    const records = (await queryAll(this.db, partition(this.tableName, pk, { skPrefix, consistent }))).filter((item) => item.type === RECORD);
    // One at a time: a delete removes a registration's record with it.
    return records.length ? endUserFromItem(records[records.length - 1]!) : undefined;
  }

  /** Every end user of the organization, in hash order. */
  async list(orgId: string, consistent = false): Promise<EndUser[]> {
    const { pk, skPrefix } = itemKeys.endUsersOf(orgId);
    return (await queryAll(this.db, partition(this.tableName, pk, { skPrefix, consistent }))).filter((item) => item.type === RECORD).map(endUserFromItem);
  }

  /** The organization's end users, if it has at most `max` (two items each); undefined when it has more. */
  async listUpTo(orgId: string, max: number): Promise<EndUser[] | undefined> {
    const { pk, skPrefix } = itemKeys.endUsersOf(orgId);
    const { items, truncated } = await queryUpTo(this.db, partition(this.tableName, pk, { skPrefix, consistent: true }), 2 * max, { atMost: 2 * max + 1 });
    return truncated ? undefined : items.filter((item) => item.type === RECORD).map(endUserFromItem);
  }

  /** Changes the settings of a registration (its settings version moves on); undefined when it is gone. */
  async update(endUser: Pick<EndUser, 'org_id' | 'user_hash' | 'epoch'>, changes: EndUserChanges, updatedAt: string): Promise<EndUser | undefined> {
    const update = new UpdateBuilder();
    update.setFields({ ...changes, limit: changes.limit === undefined ? undefined : changes.limit === null ? null : nanosToStore(changes.limit), updated_at: updatedAt });
    update.add('settings_version', 1);
    update.condition('attribute_exists(pk)');
    try {
      const { Attributes } = await this.db.send(new UpdateCommand({
        TableName: this.tableName, Key: itemKeys.endUserRecord(endUser.org_id, endUser.user_hash, endUser.epoch), ...update.build(), ReturnValues: 'ALL_NEW',
      }));
      return Attributes ? endUserFromItem(Attributes) : undefined;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return undefined;
      throw err;
    }
  }

  /** Removes a registration and its record (with its meter); false when it was gone already. */
  async delete(endUser: Pick<EndUser, 'org_id' | 'user_hash' | 'epoch'>): Promise<boolean> {
    return (await this.transact([
      {
        Delete: {
          TableName: this.tableName, Key: itemKeys.endUser(endUser.org_id, endUser.user_hash),
          ConditionExpression: '#epoch = :epoch', ExpressionAttributeNames: { '#epoch': 'epoch' }, ExpressionAttributeValues: { ':epoch': endUser.epoch },
        },
      },
      { Delete: { TableName: this.tableName, Key: itemKeys.endUserRecord(endUser.org_id, endUser.user_hash, endUser.epoch) } },
    ])) === 'done';
  }
}
