// Pages in DynamoDB: one item per page (GENS#<block>, P#<seq>), its records with the money each moves in
// one compressed attribute (page-codec.ts). A page is written once and never changed; the aggregator reads
// it from the stream.
import { PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { isConditionFailed } from '../platform/dynamo/write-failures.js';
import type { GenerationRecord } from './generation-record.js';
import { decodeEntries, encodeEntries } from './page-codec.js';
import { blockOf, type Page, type PageStore } from './pages.js';

export function pageToItem(page: Page): Record<string, unknown> {
  return {
    ...itemKeys.page(page.block, page.seq),
    type: 'page',
    written_at: page.writtenAt ?? Date.now(),
    data: encodeEntries(page.entries),
  };
}

/** A page from its item (as the stream's NEW_IMAGE or a read gives it). */
export function pageFromItem(item: Record<string, unknown>): Page {
  const block = String(item.pk).slice(itemKeys.pagesOf('').pk.length);
  const seq = Number(String(item.sk).slice(itemKeys.pageSortPrefix.length));
  return { block, seq, entries: decodeEntries(item), ...(typeof item.written_at === 'number' ? { writtenAt: item.written_at } : {}) };
}

export class PageRepository implements PageStore {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string) {}

  async put(page: Page): Promise<{ writeUnits: number }> {
    try {
      const result = await this.db.send(new PutCommand({
        TableName: this.tableName,
        Item: pageToItem(page),
        // A retry of a write that did land (its reply was lost) finds the page there: stored all the same.
        ConditionExpression: 'attribute_not_exists(pk)',
        ReturnConsumedCapacity: 'TOTAL',
      }));
      return { writeUnits: result.ConsumedCapacity?.WriteCapacityUnits ?? result.ConsumedCapacity?.CapacityUnits ?? 0 };
    } catch (err) {
      if (isConditionFailed(err)) return { writeUnits: 0 };
      throw err;
    }
  }

  /** The record of a generation, from its block's pages: one Query of at most BLOCK_SIZE records. */
  async find(generationId: string): Promise<GenerationRecord | undefined> {
    const block = blockOf(generationId);
    if (block === undefined) return undefined;
    let start: Record<string, unknown> | undefined;
    do {
      const result = await this.db.send(new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :pages)',
        ExpressionAttributeValues: { ':pk': itemKeys.pagesOf(block).pk, ':pages': itemKeys.pageSortPrefix },
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }));
      for (const item of result.Items ?? []) {
        const found = decodeEntries(item).find((entry) => entry.record.id === generationId);
        if (found) return found.record;
      }
      start = result.LastEvaluatedKey;
    } while (start);
    return undefined;
  }
}
