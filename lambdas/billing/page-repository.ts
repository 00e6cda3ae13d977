// Pages in DynamoDB: one item per page (GENS#<block>, P#<seq>), its records with the money each moves in
// one compressed attribute (page-codec.ts). A page is written once and never changed; the aggregator reads
// it from the stream.
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { isConditionFailed } from '../platform/dynamo/write-failures.js';
import { DynamoJsonClient, jsonClientConfigOf } from '../platform/dynamo/json-client.js';
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

/** The PutItem request of a page, in DynamoDB's JSON (the item as pageToItem makes it, typed by hand). */
export function pagePutRequest(tableName: string, page: Page): string {
  const item = pageToItem(page);
  return JSON.stringify({
    TableName: tableName,
    Item: {
      pk: { S: item.pk }, sk: { S: item.sk }, type: { S: item.type }, written_at: { N: String(item.written_at) },
      data: { B: (item.data as Buffer).toString('base64') },
    },
    // A retry of a write that did land (its reply was lost) finds the page there: stored all the same.
    ConditionExpression: 'attribute_not_exists(pk)',
    ReturnConsumedCapacity: 'TOTAL',
  });
}

export class PageRepository implements PageStore {
  /**
   * `direct`: pages are written on every request's path, so directly in DynamoDB's JSON protocol
   * (json-client.ts), not through the SDK; made at the first write when not given (readers never need it).
   */
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string, private direct?: DynamoJsonClient) {}

  async put(page: Page): Promise<{ writeUnits: number }> {
    this.direct ??= new DynamoJsonClient(jsonClientConfigOf(this.db));
    try {
      const reply = await this.direct.send('PutItem', pagePutRequest(this.tableName, page));
      const consumed = reply.ConsumedCapacity as { CapacityUnits?: number; WriteCapacityUnits?: number } | undefined;
      return { writeUnits: consumed?.WriteCapacityUnits ?? consumed?.CapacityUnits ?? 0 };
    } catch (err) {
      if (isConditionFailed(err)) return { writeUnits: 0 };
      throw err;
    }
  }

  /** A block's stored pages: the highest seq and the ids of the records in them. */
  async blockContents(block: string): Promise<{ maxSeq: number; ids: Set<string> }> {
    const ids = new Set<string>();
    let maxSeq = 0;
    for await (const item of this.pagesOf(block)) {
      const page = pageFromItem(item);
      maxSeq = Math.max(maxSeq, page.seq);
      for (const entry of page.entries) ids.add(entry.record.id);
    }
    return { maxSeq, ids };
  }

  /** The record of a generation, from its block's pages: one Query of at most BLOCK_SIZE records. */
  async find(generationId: string): Promise<GenerationRecord | undefined> {
    const block = blockOf(generationId);
    if (block === undefined) return undefined;
    for await (const item of this.pagesOf(block)) {
      const found = decodeEntries(item).find((entry) => entry.record.id === generationId);
      if (found) return found.record;
    }
    return undefined;
  }

  /** The items of a block's pages, read consistently, a Query page at a time. */
  private async *pagesOf(block: string): AsyncGenerator<Record<string, unknown>> {
    let start: Record<string, unknown> | undefined;
    do {
      const result = await this.db.send(new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :pages)',
        ExpressionAttributeValues: { ':pk': itemKeys.pagesOf(block).pk, ':pages': itemKeys.pageSortPrefix },
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }));
      yield* result.Items ?? [];
      start = result.LastEvaluatedKey;
    } while (start);
  }
}
