// Credits, one generation's ledger, feedback, daily activity and analytics. Reports read the hourly rollup
// rows maintained at settlement, never the generation records.
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { ManagementOperations } from '../app/routes.js';
import { BadRequestError, echo, ForbiddenError, NotFoundError } from '../platform/http/errors.js';
import { principalOf, type Principal } from '../platform/http/auth.js';
import type { GatewayDeps } from '../app/deps.js';
import { nanosToUsd, usdToNanos } from '../platform/money.js';
import type { GenerationRecord } from '../generations/generation-repository.js';
import type { RollupRow } from '../billing/rollup-repository.js';
import { attoToUsd, nanosToAtto } from '../billing/infrastructure.js';
import { hourOf } from '../billing/rollups.js';
import type { activityReply, generationReply } from './schemas.js';
import { runAnalyticsQuery, ANALYTICS_META } from './analytics.js';

type AccountingOperations = Pick<ManagementOperations,
  'getCredits' | 'addCredits' | 'getGeneration' | 'submitGenerationFeedback' | 'getActivity' | 'getAnalyticsMeta' | 'queryAnalytics'>;

const DAY_MS = 86_400_000;
export const ACTIVITY_DAYS = 30;

function generationView(record: GenerationRecord, providerNames: Map<string, string>): z.infer<typeof generationReply>['data'] {
  const cost = record.cost;
  const infra = record.infra ?? null;
  const upstreamAtto = nanosToAtto(cost.total);
  return {
    id: record.id,
    api_type: 'completions',
    app_id: null,
    cache_discount: null,
    cancelled: record.status === 'cancelled',
    created_at: record.created_at,
    data_region: 'global',
    external_user: record.user_hash,
    finish_reason: record.finish_reason,
    generation_time: record.generation_time_ms,
    http_referer: null,
    is_byok: record.is_byok,
    latency: record.first_token_ms,
    model: record.model,
    moderation_latency: null,
    native_finish_reason: record.native_finish_reason,
    native_tokens_cached: record.usage.cached_input_tokens,
    native_tokens_completion: record.usage.output_tokens,
    native_tokens_completion_images: null,
    native_tokens_prompt: record.usage.input_tokens,
    native_tokens_reasoning: record.usage.reasoning_tokens,
    num_fetches: null,
    num_input_audio_prompt: null,
    num_media_completion: null,
    num_media_prompt: null,
    num_search_results: null,
    origin: '',
    preset_id: null,
    provider_name: providerNames.get(record.provider) ?? record.provider,
    provider_responses: record.provider_responses.map((attempt) => ({ provider_name: providerNames.get(attempt.provider) ?? attempt.provider, model_permaslug: attempt.model, status: attempt.status })),
    request_id: null,
    router: null,
    service_tier: record.service_tier,
    session_id: record.session_id,
    streamed: record.streamed,
    tokens_completion: record.usage.output_tokens,
    tokens_prompt: record.usage.input_tokens,
    total_cost: nanosToUsd(cost.total),
    upstream_id: record.provider_id,
    upstream_inference_cost: record.is_byok ? nanosToUsd(cost.total) : null,
    usage: nanosToUsd(record.is_byok ? 0n : cost.total),
    user_agent: null,
    web_search_engine: null,
    workspace_id: record.workspace_id,
    status: record.status,
    usage_estimated: record.usage_estimated,
    api_key_hash: record.key_hash,
    reserved: nanosToUsd(record.reserved),
    upstream_cost: {
      prompt: nanosToUsd(cost.prompt),
      completion: nanosToUsd(cost.completion),
      cache_read: nanosToUsd(cost.cache_read),
      cache_write: nanosToUsd(cost.cache_write),
      reasoning: nanosToUsd(cost.reasoning),
      request: nanosToUsd(cost.request),
      web_search: 0,
      total: nanosToUsd(cost.total),
    },
    infrastructure: infra && {
      total_usd: attoToUsd(infra.total),
      lambda_compute_usd: attoToUsd(infra.lambda_compute),
      lambda_request_usd: attoToUsd(infra.lambda_request),
      lambda_streaming_usd: attoToUsd(infra.lambda_streaming),
      dynamodb_usd: attoToUsd(infra.dynamodb),
      kms_usd: attoToUsd(infra.kms),
      memory_mb: infra.memory_mb,
      architecture: infra.architecture,
      billed_duration_ms: infra.billed_duration_ms,
      init_duration_ms: infra.init_duration_ms,
      cold_start: infra.cold_start,
      response_bytes: infra.response_bytes,
      dynamodb_write_units: infra.dynamodb_write_units,
      dynamodb_read_units: infra.dynamodb_read_units,
      kms_requests: infra.kms_requests,
      region: infra.region,
      price_version: infra.price_version,
    },
    total_cost_with_infrastructure: attoToUsd(upstreamAtto + (infra?.total ?? 0n)),
  };
}

function providerNamesOf(deps: GatewayDeps): Map<string, string> {
  const names = new Map<string, string>();
  for (const model of deps.engine.catalog.models) for (const endpoint of model.endpoints) names.set(endpoint.provider, endpoint.provider_name);
  return names;
}

/** Keys whose creator is `userId`, for the activity filter of that name. */
async function keysOfUser(deps: GatewayDeps, orgId: string, userId: string): Promise<Set<string>> {
  const keys = await deps.keys.list(orgId, { offset: 0, pageSize: Number.MAX_SAFE_INTEGER, includeDisabled: true });
  return new Set(keys.filter((key) => key.creator_user_id === userId).map((key) => key.hash));
}

/** How long a route that reads a generation waits for one that was replied to but is still settling. */
export const SETTLING_WAIT_MS = 5_000;

/**
 * The record of a generation. A reply goes out before its settlement is written, so a client asking at once
 * may be early: while the generation still holds credits (settlement pending) this waits for the record.
 * Every route that reads a generation goes through `visibleGeneration`, which goes through here.
 */
async function settledGeneration(deps: GatewayDeps, id: string): Promise<GenerationRecord | undefined> {
  const deadline = Date.now() + SETTLING_WAIT_MS;
  for (let pause = 10; ; pause = Math.min(pause * 2, 200)) {
    // The hold first, then the record: the settlement deletes one and writes the other in one transaction,
    // so once the hold is gone the record is there (after a moment on DynamoDB Local, which applies a
    // transaction's items one by one).
    const pending = await deps.engine.ledger.isPending(id);
    const record = await deps.engine.generations.get(id);
    if (record) return record;
    if (!pending) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      return deps.engine.generations.get(id);
    }
    if (Date.now() >= deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/**
 * The one rule for routes that read a generation (GET /generation, POST /generation/feedback): wait for a
 * settlement in flight, then show it only to whom it belongs. Management keys see the organization's
 * generations, regular keys their workspace's, an intern's key its own; anyone else gets the same 404.
 */
async function visibleGeneration(deps: GatewayDeps, id: string, caller: Principal): Promise<GenerationRecord> {
  const record = await settledGeneration(deps, id);
  const visible = record !== undefined && record.org_id === caller.key.org_id
    && (caller.isManagement || record.workspace_id === caller.key.workspace_id)
    && (caller.key.intern_id === null || record.key_hash === caller.key.hash);
  if (!visible) throw new NotFoundError(`Generation not found: ${echo(id)}`);
  return record;
}

type ActivityItem = z.infer<typeof activityReply>['data'][number];

function activityRows(rows: RollupRow[], groupByWorkspace: boolean, providerNames: Map<string, string>): ActivityItem[] {
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

export const accountingOperations: AccountingOperations = {
  async getCredits({ principal, deps }) {
    const org = await deps.organizations.get(principalOf(principal).key.org_id);
    if (!org) throw new NotFoundError('Organization not found');
    return { body: { data: { total_credits: nanosToUsd(org.total_credits), total_usage: nanosToUsd(org.total_usage) } } };
  },

  async addCredits({ principal, body, deps }) {
    const caller = principalOf(principal).key;
    const operator = await deps.organizations.getDefaultOrganization();
    if (!operator || operator.org_id !== caller.org_id) {
      throw new ForbiddenError('Only management keys of the gateway operator\'s organization can add credits');
    }
    const orgId = body.organization_id ?? caller.org_id;
    const grant = { id: randomUUID(), amount: usdToNanos(body.amount), note: body.note ?? null, by: caller.hash, created_at: deps.clock().toISOString() };
    const org = await deps.organizations.addCredits(orgId, grant);
    if (!org) throw new NotFoundError(`Organization not found: ${orgId}`);
    return {
      body: {
        data: {
          organization_id: org.id,
          total_credits: nanosToUsd(org.total_credits),
          total_usage: nanosToUsd(org.total_usage),
          grant: { id: grant.id, amount: nanosToUsd(grant.amount), note: grant.note, created_at: grant.created_at },
        },
      },
    };
  },

  async getGeneration({ principal, query, deps }) {
    const record = await visibleGeneration(deps, query.id, principalOf(principal));
    return { body: { data: generationView(record, providerNamesOf(deps)) } };
  },

  async submitGenerationFeedback({ principal, body, deps }) {
    const caller = principalOf(principal).key;
    await visibleGeneration(deps, body.generation_id, principalOf(principal));
    const stored = await deps.engine.generations.addFeedback(body.generation_id, caller.org_id, {
      category: body.category, comment: body.comment ?? null, key_hash: caller.hash, created_at: deps.clock().toISOString(),
    });
    if (!stored) throw new NotFoundError(`Generation not found: ${echo(body.generation_id)}`);
    return { body: { data: { success: true as const } } };
  },

  async getActivity({ principal, query, deps }) {
    const orgId = principalOf(principal).key.org_id;
    const today = deps.clock().toISOString().slice(0, 10);
    const first = new Date(Date.parse(`${today}T00:00:00Z`) - (ACTIVITY_DAYS - 1) * DAY_MS).toISOString().slice(0, 10);
    if (query.date !== undefined && (query.date < first || query.date > today)) {
      throw new BadRequestError(`Invalid date: must be within the last ${ACTIVITY_DAYS} UTC days (${first} to ${today})`);
    }
    const from = query.date ?? first;
    const to = query.date ?? today;
    const { rows } = await deps.rollups.range(orgId, `${from}T00`, `${to}T23`);
    const userKeys = query.user_id === undefined ? undefined : await keysOfUser(deps, orgId, query.user_id);
    const selected = rows.filter((row) => (query.api_key_hash === undefined || row.key_hash === query.api_key_hash)
      && (query.workspace_id === undefined || row.workspace_id === query.workspace_id)
      && (userKeys === undefined || userKeys.has(row.key_hash)));
    return { body: { data: activityRows(selected, query.group_by === 'workspace', providerNamesOf(deps)) } };
  },

  async getAnalyticsMeta() {
    return { body: { data: ANALYTICS_META } };
  },

  async queryAnalytics({ principal, body, deps }) {
    const started = performance.now();
    const orgId = principalOf(principal).key.org_id;
    const now = deps.clock();
    const end = body.time_range ? new Date(body.time_range.end) : now;
    const start = body.time_range ? new Date(body.time_range.start) : new Date(now.getTime() - 7 * DAY_MS);
    if (start.getTime() >= end.getTime()) throw new BadRequestError('Invalid time_range: start must be before end');
    if (end.getTime() - start.getTime() > 366 * DAY_MS) throw new BadRequestError('Invalid time_range: at most 366 days');
    const { rows, truncated } = await deps.rollups.range(orgId, hourOf(start.toISOString()), hourOf(end.toISOString()));
    const inRange = rows.filter((row) => row.hour >= hourOf(start.toISOString()) && row.hour <= hourOf(end.toISOString()));
    const result = runAnalyticsQuery(inRange, body, providerNamesOf(deps));
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
