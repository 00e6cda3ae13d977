// Generation records, read back: written in pages by the inference pipeline (billing/pages.ts); records from
// before pages are items of their own (GEN#<id>). Feedback on a generation is stored beside it.
import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { recordFromAttributes, type GenerationRecord } from '../billing/generation-record.js';
import { blockOf } from '../billing/pages.js';
import { PageRepository } from '../billing/page-repository.js';

export interface GenerationFeedback {
  category: string;
  comment: string | null;
  key_hash: string;
  created_at: string;
}

export class GenerationRepository {
  private readonly pages: PageRepository;

  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string) {
    this.pages = new PageRepository(db, tableName);
  }

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

  /** A generation's record: from its page (ids name their page's block), or stored alone (ids from before pages). */
  async get(id: string): Promise<GenerationRecord | undefined> {
    if (blockOf(id) !== undefined) {
      const paged = await this.pages.find(id);
      if (paged) return paged;
    }
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.generation(id), ConsistentRead: true }));
    return Item ? recordFromAttributes(Item) : undefined;
  }
}
