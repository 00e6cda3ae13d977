// Generation records: one item per reply under its generation id, listed per organization through gsi1.
import { BatchWriteCommand, GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { itemKeys } from './item-keys.js';
import type { CostBreakdown } from '../inference/cost.js';
import type { Usage, FinishReason } from '../providers/types.js';
import { nanosFromStore, nanosToStore, type Nanos } from '../shared/money.js';

export interface GenerationRecord {
  id: string;
  org_id: string;
  workspace_id: string;
  key_hash: string;
  model: string;
  provider: string;
  upstream_model: string;
  provider_id: string | null;
  api: 'chat' | 'responses';
  streamed: boolean;
  status: 'completed' | 'incomplete' | 'error' | 'cancelled';
  finish_reason: FinishReason | null;
  native_finish_reason: string | null;
  usage: Usage;
  cost: CostBreakdown;
  is_byok: boolean;
  service_tier: string | null;
  attempts: number;
  created_at: string;
  latency_ms: number;
  first_token_ms: number | null;
  generation_time_ms: number;
  session_id: string | null;
  /** Hash of the end-user id; the raw id is never stored. */
  user_hash: string | null;
  error: { status: number; message: string } | null;
  /** What was held for the request before the provider call. */
  reserved: Nanos;
}

const COST_FIELDS = ['prompt', 'completion', 'cache_read', 'cache_write', 'reasoning', 'request', 'total'] as const;

export function generationToItem(record: GenerationRecord): Record<string, unknown> {
  return {
    ...itemKeys.generation(record.id),
    ...itemKeys.generationListing(record.org_id, record.created_at, record.id),
    type: 'generation',
    ...record,
    cost: Object.fromEntries(COST_FIELDS.map((field) => [field, nanosToStore(record.cost[field])])),
    reserved: nanosToStore(record.reserved),
  };
}

export class GenerationRepository {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string) {}

  async put(record: GenerationRecord): Promise<void> {
    await this.db.send(new PutCommand({ TableName: this.tableName, Item: generationToItem(record), ConditionExpression: 'attribute_not_exists(pk)' }));
  }

  /** Up to 25 records in one BatchWriteItem; unprocessed items are retried with backoff. Ids are unique, so no condition is needed. */
  async putBatch(records: GenerationRecord[], attempts = 6): Promise<void> {
    if (records.length === 0) return;
    if (records.length > 25) throw new Error('BatchWriteItem takes at most 25 items');
    let requests = records.map((record) => ({ PutRequest: { Item: generationToItem(record) } }));
    for (let attempt = 1; requests.length > 0; attempt += 1) {
      const { UnprocessedItems } = await this.db.send(new BatchWriteCommand({ RequestItems: { [this.tableName]: requests } }));
      requests = (UnprocessedItems?.[this.tableName] ?? []) as typeof requests;
      if (requests.length === 0) return;
      if (attempt >= attempts) throw new Error(`${requests.length} generation record(s) left unprocessed after ${attempts} attempts`);
      await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 25 * 2 ** attempt)));
    }
  }

  async get(id: string): Promise<GenerationRecord | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.generation(id) }));
    if (!Item) return undefined;
    const cost = Item.cost as Record<string, unknown>;
    const { pk: _pk, sk: _sk, gsi1pk: _g1, gsi1sk: _g2, type: _type, ...rest } = Item;
    return {
      ...(rest as unknown as GenerationRecord),
      cost: Object.fromEntries(COST_FIELDS.map((field) => [field, nanosFromStore(cost[field])])) as unknown as CostBreakdown,
      reserved: nanosFromStore(Item.reserved),
    };
  }
}
