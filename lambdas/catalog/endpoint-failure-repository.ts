// Attempts that failed before a first byte (upstream 5xx, 429, timeouts, refused or dropped connections),
// counted per endpoint (model@provider) and hour, across organizations. Such an attempt settles no
// generation, so the rollup rows never see it; endpoint uptime reads both. Written after the reply, one
// plain UpdateItem per failing endpoint and request; the count is spread over FAILURE_SHARDS items per
// hour so that a popular endpoint failing every request does not make one hot item. No GSI attributes:
// no index copy is written.
import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { nanosFromStore } from '../platform/money.js';
import { queryItems } from '../platform/dynamo/query.js';

export const FAILURE_SHARDS = 8;
/** Endpoint status reads the last day only; the items go (DynamoDB TTL) two days after their hour. */
export const FAILURE_RETENTION_S = 2 * 86_400;

export class EndpointFailureRepository {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string) {}

  /** Adds `failures` to the endpoint's count of the hour (YYYY-MM-DDTHH), on shard `shard` (0..FAILURE_SHARDS-1). */
  async add(model: string, provider: string, hour: string, failures: number, shard: number): Promise<void> {
    await this.db.send(new UpdateCommand({
      TableName: this.tableName,
      Key: itemKeys.endpointFailures(model, provider, hour, shard),
      UpdateExpression: 'ADD failures :n SET #ttl = if_not_exists(#ttl, :ttl)',
      ExpressionAttributeNames: { '#ttl': 'ttl' },
      ExpressionAttributeValues: { ':n': failures, ':ttl': Math.floor(Date.parse(`${hour}:00:00Z`) / 1000) + FAILURE_RETENTION_S },
    }));
  }

  /** Failed attempts per hour of the endpoint, hours `fromHour` to `toHour` inclusive (shards summed). */
  async range(model: string, provider: string, fromHour: string, toHour: string): Promise<Map<string, bigint>> {
    const byHour = new Map<string, bigint>();
    for await (const item of queryItems(this.db, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': itemKeys.endpointFailuresOf(model, provider).pk, ':from': fromHour, ':to': `${toHour}~` },
      ProjectionExpression: 'sk, failures',
    })) {
      const hour = (item.sk as string).slice(0, 13);
      byHour.set(hour, (byHour.get(hour) ?? 0n) + nanosFromStore(item.failures));
    }
    return byHour;
  }
}
