// Every item of one partition (optionally under a sort-key prefix), following LastEvaluatedKey.
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export interface QueryAllOptions {
  skPrefix?: string;
  consistent?: boolean;
  projection?: string;
}

export async function queryAll(db: DynamoDBDocumentClient, tableName: string, pk: string, options: QueryAllOptions = {}): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db.send(new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: options.skPrefix ? 'pk = :pk AND begins_with(sk, :prefix)' : 'pk = :pk',
      ExpressionAttributeValues: { ':pk': pk, ...(options.skPrefix ? { ':prefix': options.skPrefix } : {}) },
      ...(options.consistent ? { ConsistentRead: true } : {}),
      ...(options.projection ? { ProjectionExpression: options.projection } : {}),
      ExclusiveStartKey: startKey,
    }));
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}
