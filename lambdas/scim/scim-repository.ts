// SCIM users, groups, group mappings and sync jobs, each an item under the organization's partition.
import { DeleteCommand, GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { partition, queryAll } from '../platform/dynamo/query.js';
import type { GroupMapping, ScimGroup, ScimUser, SyncJob } from './types.js';

type Kind = 'USER' | 'GROUP' | 'MAP' | 'JOB';
interface Shapes { USER: ScimUser; GROUP: ScimGroup; MAP: GroupMapping; JOB: SyncJob }

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
}
