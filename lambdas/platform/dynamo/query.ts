// The one paging helper: a Query's items, page after page (following LastEvaluatedKey), read lazily so that
// a caller that stops early (an offset page, a row limit) reads no page it does not need.
import { QueryCommand, type DynamoDBDocumentClient, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';

export type QueryInput = Omit<QueryCommandInput, 'ExclusiveStartKey' | 'Limit'>;

export interface QueryItemsOptions {
  /** Never read more than this many items: each page asks only for what is still wanted (Query's Limit). */
  atMost?: number;
}

export async function* queryItems(db: DynamoDBDocumentClient, input: QueryInput, options: QueryItemsOptions = {}): AsyncGenerator<Record<string, unknown>> {
  let read = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    if (options.atMost !== undefined && read >= options.atMost) return;
    const page = await db.send(new QueryCommand({
      ...input,
      ...(options.atMost !== undefined ? { Limit: options.atMost - read } : {}),
      ExclusiveStartKey: startKey,
    }));
    for (const item of page.Items ?? []) {
      read += 1;
      yield item;
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
}

/** Up to `limit` items after skipping `offset` (both counted after any FilterExpression). */
export async function queryPage(db: DynamoDBDocumentClient, input: QueryInput, page: { offset: number; limit: number }): Promise<Record<string, unknown>[]> {
  const found: Record<string, unknown>[] = [];
  if (page.limit <= 0) return found;
  let skipped = 0;
  for await (const item of queryItems(db, input)) {
    if (skipped < page.offset) {
      skipped += 1;
      continue;
    }
    found.push(item);
    if (found.length === page.limit) break;
  }
  return found;
}

/** Up to `limit` items, and whether there were more (`truncated`). */
export async function queryUpTo(db: DynamoDBDocumentClient, input: QueryInput, limit: number, options: QueryItemsOptions = {}): Promise<{ items: Record<string, unknown>[]; truncated: boolean }> {
  const items: Record<string, unknown>[] = [];
  for await (const item of queryItems(db, input, options)) {
    if (items.length >= limit) return { items, truncated: true };
    items.push(item);
  }
  return { items, truncated: false };
}

export interface PartitionQuery {
  skPrefix?: string;
  consistent?: boolean;
  projection?: string;
}

/** The key condition and options of a read of one partition (optionally under a sort-key prefix). */
export function partition(tableName: string, pk: string, options: PartitionQuery = {}): QueryInput {
  return {
    TableName: tableName,
    KeyConditionExpression: options.skPrefix ? 'pk = :pk AND begins_with(sk, :prefix)' : 'pk = :pk',
    ExpressionAttributeValues: { ':pk': pk, ...(options.skPrefix ? { ':prefix': options.skPrefix } : {}) },
    ...(options.consistent ? { ConsistentRead: true } : {}),
    ...(options.projection ? { ProjectionExpression: options.projection } : {}),
  };
}

/** Every item of a query. */
export async function queryAll(db: DynamoDBDocumentClient, input: QueryInput): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  for await (const item of queryItems(db, input)) items.push(item);
  return items;
}
