// BYOK credentials: one item per credential under its organization (the key itself only sealed).
import { DeleteCommand, GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ByokCredential } from './types.js';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { partition, queryAll } from '../platform/dynamo/query.js';

function fromItem(item: Record<string, unknown>): ByokCredential {
  const { pk: _pk, sk: _sk, type: _type, ...rest } = item;
  return rest as unknown as ByokCredential;
}

export class ByokRepository {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string) {}

  async put(credential: ByokCredential): Promise<void> {
    await this.db.send(new PutCommand({ TableName: this.tableName, Item: { ...itemKeys.byok(credential.org_id, credential.id), type: 'byok_credential', ...credential } }));
  }

  async get(orgId: string, id: string): Promise<ByokCredential | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.byok(orgId, id), ConsistentRead: true }));
    return Item ? fromItem(Item) : undefined;
  }

  async list(orgId: string): Promise<ByokCredential[]> {
    const { pk, skPrefix } = itemKeys.byoksOf(orgId);
    return (await queryAll(this.db, partition(this.tableName, pk, { skPrefix }))).map(fromItem);
  }

  /** Deletes the credential, sealed key material included. */
  async delete(orgId: string, id: string): Promise<void> {
    await this.db.send(new DeleteCommand({ TableName: this.tableName, Key: itemKeys.byok(orgId, id) }));
  }
}
