// Observability destinations, one item each under their organization's partition: one Query reads an
// organization's whole list (what the delivery side caches).
import { DeleteCommand, GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { putVersioned } from '../platform/dynamo/write-failures.js';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { partition, queryAll } from '../platform/dynamo/query.js';
import type { Destination } from './types.js';

function fromItem(item: Record<string, unknown>): Destination {
  const { pk: _pk, sk: _sk, type: _type, destination_type: destinationType, ...rest } = item;
  return { ...(rest as unknown as Destination), type: destinationType as Destination['type'] };
}

export class DestinationRepository {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string) {}

  /**
   * Stores the destination: a new one, or (with `replacing`) a change of the version read, refused (false)
   * when another change was stored since.
   */
  put(destination: Destination, replacing?: Pick<Destination, 'updated_at'>): Promise<boolean> {
    const { type, ...rest } = destination;
    const item = { ...itemKeys.observabilityDestination(destination.org_id, destination.id), type: 'observability_destination', destination_type: type, ...rest };
    return putVersioned(this.db, this.tableName, item, replacing);
  }

  async get(orgId: string, id: string): Promise<Destination | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.observabilityDestination(orgId, id), ConsistentRead: true }));
    return Item ? fromItem(Item) : undefined;
  }

  async list(orgId: string, consistent = false): Promise<Destination[]> {
    const { pk, skPrefix } = itemKeys.observabilityDestinationsOf(orgId);
    return (await queryAll(this.db, partition(this.tableName, pk, { skPrefix, consistent }))).map(fromItem);
  }

  async delete(orgId: string, id: string): Promise<void> {
    await this.db.send(new DeleteCommand({ TableName: this.tableName, Key: itemKeys.observabilityDestination(orgId, id) }));
  }
}
