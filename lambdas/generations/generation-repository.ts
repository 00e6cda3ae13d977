// Generation records: one item per reply under its generation id, listed per organization through gsi1.
// They are written by the settlement transaction (LedgerRepository.settle), never on their own.
import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import type { CostBreakdown } from '../billing/cost.js';
import { COST_FIELDS, infrastructureFromItem, type GenerationRecord } from '../billing/generation-record.js';
import { nanosFromStore } from '../platform/money.js';

export interface GenerationFeedback {
  category: string;
  comment: string | null;
  key_hash: string;
  created_at: string;
}

export class GenerationRepository {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string) {}

  /** Stores feedback on a generation of the organization; false when there is no such generation there. */
  async addFeedback(id: string, orgId: string, feedback: GenerationFeedback): Promise<boolean> {
    const record = await this.get(id);
    if (!record || record.org_id !== orgId) return false;
    await this.db.send(new PutCommand({
      TableName: this.tableName,
      Item: { ...itemKeys.feedback(id, feedback.created_at, randomUUID()), type: 'generation_feedback', generation_id: id, ...feedback },
    }));
    return true;
  }

  async get(id: string): Promise<GenerationRecord | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.generation(id), ConsistentRead: true }));
    if (!Item) return undefined;
    const cost = Item.cost as Record<string, unknown>;
    const { pk: _pk, sk: _sk, gsi1pk: _g1, gsi1sk: _g2, type: _type, ...rest } = Item;
    return {
      ...(rest as unknown as GenerationRecord),
      cost: Object.fromEntries(COST_FIELDS.map((field) => [field, nanosFromStore(cost[field])])) as unknown as CostBreakdown,
      reserved: nanosFromStore(Item.reserved),
      usage_estimated: Item.usage_estimated === true,
      provider_responses: (Item.provider_responses ?? []) as GenerationRecord['provider_responses'],
      infra: infrastructureFromItem(Item.infra),
    };
  }
}
