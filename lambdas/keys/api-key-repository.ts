// API key rows: one item per key under its hash, listed per organization through gsi1, newest first
// (the item layout: api-key-item.ts).
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ApiKey } from './types.js';
import { keyFromItem, keyToItem } from './api-key-item.js';
import { nanosToStore } from '../platform/money.js';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { queryPage } from '../platform/dynamo/query.js';
import { UpdateBuilder } from '../platform/dynamo/update-builder.js';
import { unlessConditionFails } from '../platform/dynamo/write-failures.js';

export interface ListKeysOptions {
  offset: number;
  pageSize: number;
  includeDisabled: boolean;
  workspaceId?: string | undefined;
}

export type KeyPatch = Partial<Pick<ApiKey, 'name' | 'disabled' | 'include_byok_in_limit' | 'limit' | 'limit_reset'>>;

export class ApiKeyRepository {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string) {}

  async create(key: ApiKey): Promise<void> {
    await this.db.send(new PutCommand({
      TableName: this.tableName,
      Item: keyToItem(key),
      ConditionExpression: 'attribute_not_exists(pk)',
    }));
  }

  /** @param readUnits told the read capacity the lookup consumed (for the request's cost ledger). */
  async get(hash: string, readUnits?: (units: number) => void): Promise<ApiKey | undefined> {
    const { Item, ConsumedCapacity } = await this.db.send(new GetCommand({
      TableName: this.tableName, Key: itemKeys.apiKey(hash), ...(readUnits ? { ReturnConsumedCapacity: 'TOTAL' as const } : {}),
    }));
    readUnits?.(ConsumedCapacity?.ReadCapacityUnits ?? ConsumedCapacity?.CapacityUnits ?? 0);
    return Item ? keyFromItem(Item) : undefined;
  }

  async list(orgId: string, options: ListKeysOptions): Promise<ApiKey[]> {
    const filters: string[] = [];
    const values: Record<string, unknown> = { ':pk': itemKeys.apiKeysOf(orgId).gsi1pk };
    if (!options.includeDisabled) {
      filters.push('disabled = :false');
      values[':false'] = false;
    }
    if (options.workspaceId) {
      filters.push('workspace_id = :ws');
      values[':ws'] = options.workspaceId;
    }
    const items = await queryPage(this.db, {
      TableName: this.tableName,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      FilterExpression: filters.length ? filters.join(' AND ') : undefined,
      ExpressionAttributeValues: values,
      ScanIndexForward: false,
    }, { offset: options.offset, limit: options.pageSize });
    return items.map(keyFromItem);
  }

  /** Applies a patch to a key of the given organization; undefined when no such key exists there. */
  async update(hash: string, orgId: string, patch: KeyPatch, now: string): Promise<ApiKey | undefined> {
    const update = new UpdateBuilder().set('updated_at', now);
    // Every update bumps settings_version, so reservations made with an older copy of the key are retried.
    const version = update.name('settings_version', 'sv');
    update.setExpression(`${version} = if_not_exists(${version}, ${update.value('zero', 0)}) + ${update.value('one', 1)}`);
    update.setFields(patch, '', (field, value) => (field === 'limit' && typeof value === 'bigint' ? nanosToStore(value) : value));
    update.condition(`attribute_exists(pk) AND ${update.name('org_id')} = ${update.value('org_id', orgId)}`);
    const result = await unlessConditionFails(this.db.send(new UpdateCommand({
      TableName: this.tableName,
      Key: itemKeys.apiKey(hash),
      ...update.build(),
      ReturnValues: 'ALL_NEW',
    })), undefined);
    return result?.Attributes ? keyFromItem(result.Attributes) : undefined;
  }

  /** Deletes the organization's key; returns it as it was (undefined: no such key there). */
  async delete(hash: string, orgId: string): Promise<ApiKey | undefined> {
    return unlessConditionFails(this.db.send(new DeleteCommand({
      TableName: this.tableName,
      Key: itemKeys.apiKey(hash),
      ConditionExpression: 'attribute_exists(pk) AND org_id = :org_id',
      ExpressionAttributeValues: { ':org_id': orgId },
      ReturnValues: 'ALL_OLD',
    })).then((result) => (result.Attributes ? keyFromItem(result.Attributes) : undefined)), undefined);
  }
}
