// Private endpoints, one item each under their organization's partition: one Query reads an organization's
// whole list (what routing caches).
import { DeleteCommand, GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { putVersioned } from '../platform/dynamo/write-failures.js';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { partition, queryAll } from '../platform/dynamo/query.js';
import type { PrivateEndpoint } from './types.js';

function fromItem(item: Record<string, unknown>): PrivateEndpoint {
  const { pk: _pk, sk: _sk, type: _type, ...rest } = item;
  return rest as unknown as PrivateEndpoint;
}

export class PrivateEndpointRepository {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string) {}

  /** Stores a new endpoint, or (with `replacing`) a change of the version read; false when another change came first. */
  put(endpoint: PrivateEndpoint, replacing?: Pick<PrivateEndpoint, 'updated_at'>): Promise<boolean> {
    return putVersioned(this.db, this.tableName, { ...itemKeys.privateEndpoint(endpoint.org_id, endpoint.id), type: 'private_endpoint', ...endpoint }, replacing);
  }

  async get(orgId: string, id: string): Promise<PrivateEndpoint | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.privateEndpoint(orgId, id), ConsistentRead: true }));
    return Item ? fromItem(Item) : undefined;
  }

  async list(orgId: string, consistent = false): Promise<PrivateEndpoint[]> {
    const { pk, skPrefix } = itemKeys.privateEndpointsOf(orgId);
    return (await queryAll(this.db, partition(this.tableName, pk, { skPrefix, consistent }))).map(fromItem);
  }

  async delete(orgId: string, id: string): Promise<void> {
    await this.db.send(new DeleteCommand({ TableName: this.tableName, Key: itemKeys.privateEndpoint(orgId, id) }));
  }
}
