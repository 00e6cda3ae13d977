// One generation's stats and cost ledger, and feedback on it: both wait for a settlement in flight and
// show a generation only to whom it belongs.
import type { z } from 'zod';
import { NotFoundError } from '../platform/errors.js';
import { echo } from '../platform/echo.js';
import type { Principal } from '../platform/http/auth.js';
import { nanosToUsd } from '../platform/money.js';
import type { Ledger } from '../billing/ledger.js';
import { attoToUsd, nanosToAtto } from '../billing/infrastructure.js';
import type { GenerationRepository } from './generation-repository.js';
import type { GenerationRecord } from '../billing/generation-record.js';
import type { generationReply } from './schemas.js';
import type { GenerationOperations } from './routes.js';

export interface GenerationPorts {
  generations: Pick<GenerationRepository, 'get' | 'addFeedback'>;
  /** Whether a generation still holds credits (its settlement is pending). */
  ledger: Pick<Ledger, 'isPending'>;
  /** Provider display names by slug. */
  providerNames: ReadonlyMap<string, string>;
  clock: () => Date;
}

function generationView(record: GenerationRecord, providerNames: ReadonlyMap<string, string>): z.infer<typeof generationReply>['data'] {
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

/** How long a route that reads a generation waits for one that was replied to but is still settling. */
export const SETTLING_WAIT_MS = 5_000;

/**
 * The record of a generation. A reply goes out before its record is written (its page follows within a
 * few milliseconds, before the invocation ends), so a client asking at once may be early: while the
 * generation still holds credits (an exact hold), or its id is from the last 15 minutes (a request that
 * reserved from a lease holds nothing of its own), this waits for the record.
 * Every route that reads a generation goes through `visibleGeneration`, which goes through here.
 */
async function settledGeneration(deps: GenerationPorts, id: string): Promise<GenerationRecord | undefined> {
  const deadline = Date.now() + SETTLING_WAIT_MS;
  for (let pause = 10; ; pause = Math.min(pause * 2, 200)) {
    // The hold first, then the record: the aggregator deletes the hold only after the record is in its page.
    const pending = await deps.ledger.isPending(id);
    const record = await deps.generations.get(id);
    if (record) return record;
    if (!pending && !recent(id, deps.clock().getTime())) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      return deps.generations.get(id);
    }
    if (Date.now() >= deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/**
 * An id handed out in the last RECENT_S seconds (ids start with their second: gen-<unix seconds>-…). One
 * from later than now (beyond clock skew between instances) was never handed out: nothing to wait for.
 */
function recent(id: string, nowMs: number): boolean {
  const seconds = Number(/^gen-(\d+)-/.exec(id)?.[1]);
  const age = nowMs / 1000 - seconds;
  return Number.isFinite(seconds) && age <= RECENT_S && age >= -CLOCK_SKEW_S;
}

/** How far ahead of this instance's clock another's may run. */
const CLOCK_SKEW_S = 60;

/** How long after its start a generation without a hold may still be writing its record: the longest a request runs. */
const RECENT_S = 900;

/**
 * The one rule for routes that read a generation (GET /generation, POST /generation/feedback): wait for a
 * settlement in flight, then show it only to whom it belongs. Management keys see the organization's
 * generations, regular keys their workspace's, an intern's key its own; anyone else gets the same 404.
 */
async function visibleGeneration(deps: GenerationPorts, id: string, caller: Principal): Promise<GenerationRecord> {
  const record = await settledGeneration(deps, id);
  const visible = record !== undefined && record.org_id === caller.key.org_id
    && (caller.isManagement || record.workspace_id === caller.key.workspace_id)
    && (caller.key.intern_id === null || record.key_hash === caller.key.hash);
  if (!visible) throw new NotFoundError(`Generation not found: ${echo(id)}`);
  return record;
}

export function createGenerationOperations(deps: GenerationPorts): GenerationOperations {
  return {
    async getGeneration({ principal, query }) {
      const record = await visibleGeneration(deps, query.id, principal);
      return { body: { data: generationView(record, deps.providerNames) } };
    },

    async submitGenerationFeedback({ principal, body }) {
      const caller = principal.key;
      await visibleGeneration(deps, body.generation_id, principal);
      const stored = await deps.generations.addFeedback(body.generation_id, caller.org_id, {
        category: body.category, comment: body.comment ?? null, key_hash: caller.hash, created_at: deps.clock().toISOString(),
      });
      if (!stored) throw new NotFoundError(`Generation not found: ${echo(body.generation_id)}`);
      return { body: { data: { success: true as const } } };
    },
  };
}
