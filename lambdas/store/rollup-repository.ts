// Reads the hourly rollup rows of an organization (written by settlements, see accounting/rollups.ts).
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { itemKeys } from './item-keys.js';
import { ROLLUP_COUNTERS, type RollupCounter } from '../accounting/rollups.js';
import { nanosFromStore } from '../shared/money.js';

export interface RollupRow {
  hour: string;
  workspace_id: string;
  key_hash: string;
  model: string;
  provider: string;
  counters: Record<RollupCounter, bigint> & { infra_atto: bigint };
}

export class RollupRepository {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string) {}

  /** Rows of hours from `fromHour` to `toHour` inclusive (YYYY-MM-DDTHH), at most `limit` rows. */
  async range(orgId: string, fromHour: string, toHour: string, limit = 100_000): Promise<{ rows: RollupRow[]; truncated: boolean }> {
    const rows: RollupRow[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.db.send(new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': itemKeys.rollupsOf(orgId).pk, ':from': fromHour, ':to': `${toHour}~` },
        ExclusiveStartKey: startKey,
      }));
      for (const item of page.Items ?? []) {
        if (rows.length >= limit) return { rows, truncated: true };
        const counters = Object.fromEntries(ROLLUP_COUNTERS.map((name) => [name, nanosFromStore(item[name])])) as Record<RollupCounter, bigint>;
        rows.push({
          hour: item.hour as string,
          workspace_id: item.workspace_id as string,
          key_hash: item.key_hash as string,
          model: item.model as string,
          provider: item.provider as string,
          counters: { ...counters, infra_atto: nanosFromStore(item.infra_atto) },
        });
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return { rows, truncated: false };
  }
}
