// Daily activity and analytics. Reports read the hourly rollup rows maintained at settlement, never the
// generation records.
import type { z } from 'zod';
import { InvalidInputError } from '../platform/errors.js';
import { nanosToUsd } from '../platform/money.js';
import type { RollupRepository, RollupRow } from '../billing/rollup-repository.js';
import { hourOf } from '../billing/rollups.js';
import type { ApiKeyRepository } from '../keys/index.js';
import type { activityReply } from './schemas.js';
import { runAnalyticsQuery, ANALYTICS_META } from './analytics.js';
import type { AnalyticsOperations } from './routes.js';

export interface AnalyticsPorts {
  rollups: Pick<RollupRepository, 'range'>;
  /** For the activity filter by the user who created the keys. */
  keys: Pick<ApiKeyRepository, 'list'>;
  /** Provider display names by slug. */
  providerNames: ReadonlyMap<string, string>;
  clock: () => Date;
}

const DAY_MS = 86_400_000;
export const ACTIVITY_DAYS = 30;

/** Keys whose creator is `userId`, for the activity filter of that name. */
async function keysOfUser(deps: AnalyticsPorts, orgId: string, userId: string): Promise<Set<string>> {
  const keys = await deps.keys.list(orgId, { offset: 0, pageSize: Number.MAX_SAFE_INTEGER, includeDisabled: true });
  return new Set(keys.filter((key) => key.creator_user_id === userId).map((key) => key.hash));
}

type ActivityItem = z.infer<typeof activityReply>['data'][number];

function activityRows(rows: RollupRow[], groupByWorkspace: boolean, providerNames: ReadonlyMap<string, string>): ActivityItem[] {
  const groups = new Map<string, { item: ActivityItem; usage: bigint; byok: bigint }>();
  for (const row of rows) {
    const date = row.hour.slice(0, 10);
    const id = [date, row.model, row.provider, groupByWorkspace ? row.workspace_id : ''].join('\u0000');
    let group = groups.get(id);
    if (!group) {
      group = {
        item: {
          date,
          model: row.model,
          model_permaslug: row.model,
          endpoint_id: `${row.model}@${row.provider}`,
          provider_name: providerNames.get(row.provider) ?? row.provider,
          usage: 0,
          byok_usage_inference: 0,
          requests: 0,
          prompt_tokens: 0,
          completion_tokens: 0,
          reasoning_tokens: 0,
          ...(groupByWorkspace ? { workspace_id: row.workspace_id } : {}),
        },
        usage: 0n,
        byok: 0n,
      };
      groups.set(id, group);
    }
    const counters = row.counters;
    group.usage += counters.cost;
    group.byok += counters.byok_cost;
    group.item.requests += Number(counters.requests);
    group.item.prompt_tokens += Number(counters.prompt_tokens);
    group.item.completion_tokens += Number(counters.completion_tokens);
    group.item.reasoning_tokens += Number(counters.reasoning_tokens);
  }
  return [...groups.values()]
    .map(({ item, usage, byok }) => ({ ...item, usage: nanosToUsd(usage), byok_usage_inference: nanosToUsd(byok) }))
    .sort((a, b) => b.date.localeCompare(a.date) || a.model.localeCompare(b.model) || a.provider_name.localeCompare(b.provider_name));
}

export function createAnalyticsOperations(deps: AnalyticsPorts): AnalyticsOperations {
  return {
    async getActivity({ principal, query }) {
      const orgId = principal.key.org_id;
      const today = deps.clock().toISOString().slice(0, 10);
      const first = new Date(Date.parse(`${today}T00:00:00Z`) - (ACTIVITY_DAYS - 1) * DAY_MS).toISOString().slice(0, 10);
      if (query.date !== undefined && (query.date < first || query.date > today)) {
        throw new InvalidInputError(`Invalid date: must be within the last ${ACTIVITY_DAYS} UTC days (${first} to ${today})`);
      }
      const from = query.date ?? first;
      const to = query.date ?? today;
      const { rows } = await deps.rollups.range(orgId, `${from}T00`, `${to}T23`);
      const userKeys = query.user_id === undefined ? undefined : await keysOfUser(deps, orgId, query.user_id);
      const selected = rows.filter((row) => (query.api_key_hash === undefined || row.key_hash === query.api_key_hash)
        && (query.workspace_id === undefined || row.workspace_id === query.workspace_id)
        && (userKeys === undefined || userKeys.has(row.key_hash)));
      return { body: { data: activityRows(selected, query.group_by === 'workspace', deps.providerNames) } };
    },

    async getAnalyticsMeta() {
      return { body: { data: ANALYTICS_META } };
    },

    async queryAnalytics({ principal, body }) {
      const started = performance.now();
      const orgId = principal.key.org_id;
      const now = deps.clock();
      const end = body.time_range ? new Date(body.time_range.end) : now;
      const start = body.time_range ? new Date(body.time_range.start) : new Date(now.getTime() - 7 * DAY_MS);
      if (start.getTime() >= end.getTime()) throw new InvalidInputError('Invalid time_range: start must be before end');
      if (end.getTime() - start.getTime() > 366 * DAY_MS) throw new InvalidInputError('Invalid time_range: at most 366 days');
      const { rows, truncated } = await deps.rollups.range(orgId, hourOf(start.toISOString()), hourOf(end.toISOString()));
      const inRange = rows.filter((row) => row.hour >= hourOf(start.toISOString()) && row.hour <= hourOf(end.toISOString()));
      const result = runAnalyticsQuery(inRange, body, deps.providerNames);
      return {
        body: {
          data: {
            data: result.rows,
            metadata: { query_time_ms: Math.round((performance.now() - started) * 100) / 100, row_count: result.rows.length, truncated: truncated || result.truncated },
            ...(result.warnings.length ? { warnings: result.warnings } : {}),
          },
        },
      };
    },
  };
}
