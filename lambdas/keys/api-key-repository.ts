// API key rows: one item per key under its hash, listed per organization through gsi1, newest first.
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { ApiKey } from './types.js';
import { meterFromItem, meterToItem } from '../billing/meter.js';
import { nanosFromStore, nanosToStore } from '../platform/money.js';
import { itemKeys } from '../platform/dynamo/item-keys.js';

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
      Item: toItem(key),
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
    const found: ApiKey[] = [];
    let skipped = 0;
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.db.send(new QueryCommand({
        TableName: this.tableName,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk',
        FilterExpression: filters.length ? filters.join(' AND ') : undefined,
        ExpressionAttributeValues: values,
        ScanIndexForward: false,
        ExclusiveStartKey: startKey,
      }));
      for (const item of page.Items ?? []) {
        if (skipped < options.offset) {
          skipped += 1;
          continue;
        }
        found.push(keyFromItem(item));
        if (found.length === options.pageSize) return found;
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return found;
  }

  /** Applies a patch to a key of the given organization; undefined when no such key exists there. */
  async update(hash: string, orgId: string, patch: KeyPatch, now: string): Promise<ApiKey | undefined> {
    const names: Record<string, string> = { '#updated_at': 'updated_at', '#org_id': 'org_id', '#sv': 'settings_version' };
    const values: Record<string, unknown> = { ':updated_at': now, ':org_id': orgId, ':one': 1, ':zero': 0 };
    // Every update bumps settings_version, so reservations made with an older copy of the key are retried.
    const sets = ['#updated_at = :updated_at', '#sv = if_not_exists(#sv, :zero) + :one'];
    for (const [field, value] of Object.entries(patch)) {
      if (value === undefined) continue;
      names[`#${field}`] = field;
      values[`:${field}`] = field === 'limit' && typeof value === 'bigint' ? nanosToStore(value) : value;
      sets.push(`#${field} = :${field}`);
    }
    try {
      const { Attributes } = await this.db.send(new UpdateCommand({
        TableName: this.tableName,
        Key: itemKeys.apiKey(hash),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: 'attribute_exists(pk) AND #org_id = :org_id',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }));
      return Attributes ? keyFromItem(Attributes) : undefined;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return undefined;
      throw err;
    }
  }

  /** Deletes a key of the given organization; false when no such key exists there. */
  async delete(hash: string, orgId: string): Promise<boolean> {
    try {
      await this.db.send(new DeleteCommand({
        TableName: this.tableName,
        Key: itemKeys.apiKey(hash),
        ConditionExpression: 'attribute_exists(pk) AND org_id = :org_id',
        ExpressionAttributeValues: { ':org_id': orgId },
      }));
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }
}

function toItem(key: ApiKey): Record<string, unknown> {
  const { usage: _usage, byok_usage: _byok, periods: _periods, held: _held, ...settings } = key;
  return {
    ...itemKeys.apiKey(key.hash),
    ...itemKeys.apiKeyListing(key.org_id, key.created_at, key.hash),
    type: 'api_key',
    ...settings,
    limit: key.limit === null ? null : nanosToStore(key.limit),
    ...meterToItem(key),
  };
}

export function keyFromItem(item: Record<string, unknown>): ApiKey {
  return {
    hash: item.hash as string,
    org_id: item.org_id as string,
    org_kind: item.org_kind as ApiKey['org_kind'],
    workspace_id: item.workspace_id as string,
    kind: item.kind as ApiKey['kind'],
    name: item.name as string,
    label: item.label as string,
    disabled: item.disabled === true,
    limit: item.limit === null || item.limit === undefined ? null : nanosFromStore(item.limit),
    limit_reset: (item.limit_reset ?? null) as ApiKey['limit_reset'],
    include_byok_in_limit: item.include_byok_in_limit === true,
    expires_at: (item.expires_at ?? null) as string | null,
    created_at: item.created_at as string,
    updated_at: (item.updated_at ?? null) as string | null,
    creator_user_id: (item.creator_user_id ?? null) as string | null,
    intern_id: (item.intern_id ?? null) as string | null,
    settings_version: typeof item.settings_version === 'number' ? item.settings_version : 0,
    ...meterFromItem(item),
  };
}
