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

  /**
   * Results in input order, from the line after `afterLine` (0: from the start), at most `limit`. With the
   * batch's last line known, the lines are read in windows, from `limit` lines wide and doubling while they
   * come back short: a read never spans more of the partition than it needs (DynamoDB Local reads a whole
   * key range before it applies a query's limit, which made reading back 100,000 results quadratic).
   */
  async page(batchId: string, afterLine: number, limit: number, lastLine: number | null = null): Promise<{ results: StoredResult[]; more: boolean }> {
    const range = (from: number, to: number, atMost: number) => queryUpTo(this.db, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: {
        ':pk': itemKeys.batchResultsOf(batchId).pk,
        ':from': itemKeys.batchResult(batchId, from).sk,
        ':to': itemKeys.batchResult(batchId, to).sk,
      },
      ConsistentRead: true,
    }, atMost, { atMost: atMost + 1 });
    if (lastLine === null) {
      const { items, truncated } = await range(afterLine + 1, MAX_LINE, limit);
      return { results: items.map(resultFromItem), more: truncated };
    }
    const found: Record<string, unknown>[] = [];
    let from = afterLine + 1;
    let width = limit;
    while (from <= lastLine && found.length <= limit) {
      const to = Math.min(lastLine, from + width - 1);
      const { items } = await range(from, to, limit + 1 - found.length);
      found.push(...items);
      from = to + 1;
      width *= 2;
    }
    return { results: found.slice(0, limit).map(resultFromItem), more: found.length > limit };
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
export async function* resultLines(results: Pick<BatchResultRepository, 'page'>, batch: { id: string; last_line: number | null }, pageSize = 500): AsyncGenerator<string> {
  let after = 0;
  for (;;) {
    const page = await results.page(batch.id, after, pageSize, batch.last_line);
    if (page.results.length > 0) yield page.results.map((stored) => JSON.stringify(stored.result)).join('\n') + '\n';
    if (!page.more || page.results.length === 0) return;
    after = page.results[page.results.length - 1]!.line;
  }
}
