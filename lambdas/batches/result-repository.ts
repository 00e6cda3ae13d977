// A batch's item results, one item each, keyed by the item's line in the input, so they page in input
// order. They are written by item-commits.ts (with the item's record and the batch's counts, once); here
// they are read and deleted.
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { queryItems, queryUpTo } from '../platform/dynamo/query.js';
import type { BatchResult } from './schemas.js';

/** One item's outcome: its input line, and the result as SPEC shows it. */
export interface StoredResult {
  line: number;
  result: BatchResult;
}

/** The largest line number a result key holds (9 digits). */
const MAX_LINE = 999_999_999;

export class BatchResultRepository {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string) {}

  /** Deletes every result of a batch. */
  deleteAll(batchId: string): Promise<number> {
    return deleteResults(this.db, this.tableName, batchId);
  }

  /** Results in input order, from the line after `afterLine` (0: from the start), at most `limit`. */
  async page(batchId: string, afterLine: number, limit: number): Promise<{ results: StoredResult[]; more: boolean }> {
    const { items, truncated } = await queryUpTo(this.db, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: {
        ':pk': itemKeys.batchResultsOf(batchId).pk,
        ':from': itemKeys.batchResult(batchId, afterLine + 1).sk,
        ':to': itemKeys.batchResult(batchId, MAX_LINE).sk,
      },
      ConsistentRead: true,
    }, limit, { atMost: limit + 1 });
    return { results: items.map(resultFromItem), more: truncated };
  }

  /** The lines from `first` to `last` that have a result (their keys only, not the results). */
  async linesDone(batchId: string, first: number, last: number): Promise<Set<number>> {
    const done = new Set<number>();
    for await (const item of queryItems(this.db, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': itemKeys.batchResultsOf(batchId).pk, ':from': itemKeys.batchResult(batchId, first).sk, ':to': itemKeys.batchResult(batchId, last).sk },
      ProjectionExpression: 'line',
      ConsistentRead: true,
    })) done.add(Number(item.line));
    return done;
  }
}

/** Deletes every result of a batch (25 at a time); unprocessed deletes are sent again. */
export async function deleteResults(db: DynamoDBDocumentClient, tableName: string, batchId: string): Promise<number> {
  let deleted = 0;
  let keys: Array<{ pk: string; sk: string }> = [];
  const send = async () => {
    let requests = keys.map((key) => ({ DeleteRequest: { Key: key } }));
    keys = [];
    for (let attempt = 1; requests.length > 0; attempt += 1) {
      const reply = await db.send(new BatchWriteCommand({ RequestItems: { [tableName]: requests } }));
      requests = (reply.UnprocessedItems?.[tableName] ?? []) as typeof requests;
      if (requests.length > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 20 * 2 ** attempt)));
    }
  };
  for await (const item of queryItems(db, {
    TableName: tableName,
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': itemKeys.batchResultsOf(batchId).pk, ':prefix': itemKeys.batchResultsOf(batchId).skPrefix },
    ProjectionExpression: 'pk, sk',
  })) {
    keys.push({ pk: item.pk as string, sk: item.sk as string });
    deleted += 1;
    if (keys.length === 25) await send();
  }
  if (keys.length > 0) await send();
  return deleted;
}

function resultFromItem(item: Record<string, unknown>): StoredResult {
  return {
    line: Number(item.line),
    result: {
      custom_id: item.custom_id as string,
      id: (item.id as string | null | undefined) ?? null,
      error: (item.error as BatchResult['error'] | undefined) ?? null,
      response: (item.response as BatchResult['response'] | undefined) ?? null,
    },
  };
}

/** Every result of a batch so far as JSON Lines text, in input order, a page (`pageSize` results) per chunk. */
export async function* resultLines(results: Pick<BatchResultRepository, 'page'>, batchId: string, pageSize = 500): AsyncGenerator<string> {
  let after = 0;
  for (;;) {
    const page = await results.page(batchId, after, pageSize);
    if (page.results.length > 0) yield page.results.map((stored) => JSON.stringify(stored.result)).join('\n') + '\n';
    if (!page.more || page.results.length === 0) return;
    after = page.results[page.results.length - 1]!.line;
  }
}
