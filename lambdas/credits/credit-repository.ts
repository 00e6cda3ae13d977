// Credit grants: each grant raises (or, negative, corrects) its organization's credits and balance and is
// recorded under the organization's partition, in one transaction.
import { GetCommand, TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { orgFromItem, type Organization } from '../organizations/index.js';
import { nanosFromStore, nanosToStore, type Nanos } from '../platform/money.js';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { cancellationOf, unlessConditionFails } from '../platform/dynamo/write-failures.js';

export interface CreditGrant {
  id: string;
  amount: Nanos;
  note: string | null;
  /** Who added them: 'operator' (command line or operator key) or a key hash. */
  by: string;
  created_at: string;
}

export class CreditRepository {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string) {}

  /**
   * Adds credits to an organization (a negative amount corrects an earlier grant) and records the grant.
   * Undefined when there is no such organization.
   */
  async addCredits(orgId: string, grant: CreditGrant): Promise<Organization | undefined> {
    // An organization from before balances existed gets its balance first, or ADD would start it at the grant.
    const existing = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.organization(orgId), ConsistentRead: true }));
    if (existing.Item && existing.Item.balance === undefined) {
      const item = existing.Item;
      await unlessConditionFails(this.db.send(new UpdateCommand({
        TableName: this.tableName,
        Key: itemKeys.organization(orgId),
        UpdateExpression: 'SET balance = :balance',
        ConditionExpression: 'attribute_not_exists(balance)',
        ExpressionAttributeValues: { ':balance': nanosToStore(nanosFromStore(item.total_credits) - nanosFromStore(item.total_usage) - nanosFromStore(item.held)) },
      })), undefined);
    }
    try {
      await this.db.send(new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: this.tableName,
              Key: itemKeys.organization(orgId),
              UpdateExpression: 'ADD total_credits :amount, balance :amount SET updated_at = :at',
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeValues: { ':amount': nanosToStore(grant.amount), ':at': grant.created_at },
            },
          },
          {
            Put: {
              TableName: this.tableName,
              Item: { ...itemKeys.creditGrant(orgId, grant.created_at, grant.id), type: 'credit_grant', ...grant, amount: nanosToStore(grant.amount) },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
        ],
      }));
    } catch (err) {
      if (cancellationOf(err)?.failedAt(0)) return undefined;
      throw err;
    }
    // The organization as it is now (the same read as OrganizationRepository.get).
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.organization(orgId) }));
    return Item ? orgFromItem(Item) : undefined;
  }
}
