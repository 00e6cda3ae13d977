// Reads the hourly rollup rows of an organization (written by settlements, see billing/rollups.ts).
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { endpointRollupsOf, HEALTH_COUNTERS, ROLLUP_COUNTERS, SHUTDOWN_ERRORS, type HealthCounter, type RollupCounter } from './rollups.js';
import { nanosFromStore } from '../platform/money.js';
import { queryUpTo } from '../platform/dynamo/query.js';

export interface RollupRow {
  hour: string;
  workspace_id: string;
  key_hash: string;
  model: string;
  provider: string;
  counters: Record<RollupCounter, bigint> & { infra_atto: bigint };
}

/** What endpoint health reads of a rollup row (any organization's). */
export interface EndpointRollupRow {
  hour: string;
  /** Generations that say something about the endpoint: the row's requests less the cancelled ones (a client
   * that went away, or an abandoned request charged an estimate), which are neither served nor failed. */
  requests: bigint;
  /** Generations that failed at the endpoint (the row's errors less those the gateway's shutdown caused). */
  errors: bigint;
  histogram: Record<HealthCounter, bigint>;
}

export class RollupRepository {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string) {}

  /** Rows of hours from `fromHour` to `toHour` inclusive (YYYY-MM-DDTHH), at most `limit` rows. */
  async range(orgId: string, fromHour: string, toHour: string, limit = 100_000): Promise<{ rows: RollupRow[]; truncated: boolean }> {
    const { items, truncated } = await queryUpTo(this.db, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': itemKeys.rollupsOf(orgId).pk, ':from': fromHour, ':to': `${toHour}~` },
    }, limit);
    return { rows: items.map(rollupRowFromItem), truncated };
  }

  /**
   * Rows of one endpoint (model@provider) of every organization, hours `fromHour` to `toHour` inclusive,
   * through GSI1 (eventually consistent: a settlement shows up within about a second). At most `limit`
   * rows, newest hour first: when there are more (`truncated`), what is missing is of the oldest hour read
   * and before, never of the recent windows.
   */
  async endpointRange(model: string, provider: string, fromHour: string, toHour: string, limit = 10_000): Promise<{ rows: EndpointRollupRow[]; truncated: boolean }> {
    const { items, truncated } = await queryUpTo(this.db, {
      TableName: this.tableName,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': endpointRollupsOf(model, provider).gsi1pk, ':from': fromHour, ':to': `${toHour}~` },
      ProjectionExpression: ['#hour', 'requests', 'cancelled', 'errors', SHUTDOWN_ERRORS, ...HEALTH_COUNTERS].join(', '),
      ExpressionAttributeNames: { '#hour': 'hour' },
      ScanIndexForward: false,
    // One row more than the limit tells a truncated read from one that just fits.
    }, limit, { atMost: limit + 1 });
    return { rows: items.map(endpointRowFromItem), truncated };
  }
}

function rollupRowFromItem(item: Record<string, unknown>): RollupRow {
  const counters = Object.fromEntries(ROLLUP_COUNTERS.map((name) => [name, nanosFromStore(item[name])])) as Record<RollupCounter, bigint>;
  return {
    hour: item.hour as string,
    workspace_id: item.workspace_id as string,
    key_hash: item.key_hash as string,
    model: item.model as string,
    provider: item.provider as string,
    counters: { ...counters, infra_atto: nanosFromStore(item.infra_atto) },
  };
}

function endpointRowFromItem(item: Record<string, unknown>): EndpointRollupRow {
  return {
    hour: item.hour as string,
    requests: nanosFromStore(item.requests) - nanosFromStore(item.cancelled),
    errors: nanosFromStore(item.errors) - nanosFromStore(item[SHUTDOWN_ERRORS]),
    histogram: Object.fromEntries(HEALTH_COUNTERS.map((name) => [name, nanosFromStore(item[name])])) as Record<HealthCounter, bigint>,
  };
}
