// Wire shapes of the credits, generation, activity and analytics routes (docs/API.md "Credits",
// "Generations", "Analytics"; shaped as the public OpenRouter API's GetCreditsResponse, GenerationResponse,
// ActivityResponse, analytics meta and query).
import * as z from 'zod';
import { creditAmountSchema } from '../keys/schemas.js';

export const creditsReply = z.object({ data: z.object({ total_credits: z.number(), total_usage: z.number() }) });

export const addCreditsBody = z.strictObject({
  amount: creditAmountSchema.refine((value) => value > 0, 'must be greater than 0').describe('USD to add'),
  organization_id: z.string().min(1).max(128).optional().describe('Organization to credit; defaults to the caller\'s own'),
  note: z.string().max(1024).optional().describe('Why (invoice number, promotion …); kept with the grant'),
});

export const addCreditsReply = z.object({
  data: z.object({
    organization_id: z.string(),
    total_credits: z.number(),
    total_usage: z.number(),
    grant: z.object({ id: z.string(), amount: z.number(), note: z.string().nullable(), created_at: z.string() }),
  }),
});

export const generationQuery = z.object({ id: z.string().min(1).max(128) });

const costSplit = z.object({
  prompt: z.number(),
  completion: z.number(),
  cache_read: z.number(),
  cache_write: z.number(),
  reasoning: z.number(),
  request: z.number(),
  web_search: z.number(),
  total: z.number(),
});

export const generationReply = z.object({
  data: z.object({
    id: z.string(),
    api_type: z.string().nullable(),
    app_id: z.number().nullable(),
    cache_discount: z.number().nullable(),
    cancelled: z.boolean().nullable(),
    created_at: z.string(),
    data_region: z.string(),
    external_user: z.string().nullable(),
    finish_reason: z.string().nullable(),
    generation_time: z.number().nullable(),
    http_referer: z.string().nullable(),
    is_byok: z.boolean(),
    latency: z.number().nullable(),
    model: z.string(),
    moderation_latency: z.number().nullable(),
    native_finish_reason: z.string().nullable(),
    native_tokens_cached: z.number().nullable(),
    native_tokens_completion: z.number().nullable(),
    native_tokens_completion_images: z.number().nullable(),
    native_tokens_prompt: z.number().nullable(),
    native_tokens_reasoning: z.number().nullable(),
    num_fetches: z.number().nullable(),
    num_input_audio_prompt: z.number().nullable(),
    num_media_completion: z.number().nullable(),
    num_media_prompt: z.number().nullable(),
    num_search_results: z.number().nullable(),
    origin: z.string(),
    preset_id: z.string().nullable(),
    provider_name: z.string().nullable(),
    provider_responses: z.array(z.object({ provider_name: z.string(), model_permaslug: z.string(), status: z.number().nullable() })).nullable(),
    request_id: z.string().nullable(),
    router: z.string().nullable(),
    service_tier: z.string().nullable(),
    session_id: z.string().nullable(),
    streamed: z.boolean().nullable(),
    tokens_completion: z.number().nullable(),
    tokens_prompt: z.number().nullable(),
    total_cost: z.number(),
    upstream_id: z.string().nullable(),
    upstream_inference_cost: z.number().nullable(),
    usage: z.number(),
    user_agent: z.string().nullable(),
    web_search_engine: z.string().nullable(),
    workspace_id: z.string().nullable(),
    // Beyond the public record: the cost ledger (README "Cost and finance").
    status: z.string(),
    usage_estimated: z.boolean().describe('The provider reported no usage (a stream cut short): tokens and cost are estimates'),
    api_key_hash: z.string(),
    reserved: z.number().describe('USD held before the provider call'),
    upstream_cost: costSplit.describe('The provider\'s charge split the way it prices it'),
    infrastructure: z.object({
      total_usd: z.number(),
      lambda_compute_usd: z.number(),
      lambda_request_usd: z.number(),
      lambda_streaming_usd: z.number(),
      dynamodb_usd: z.number(),
      kms_usd: z.number(),
      memory_mb: z.number(),
      architecture: z.string(),
      billed_duration_ms: z.number(),
      init_duration_ms: z.number().nullable(),
      cold_start: z.boolean(),
      response_bytes: z.number(),
      dynamodb_write_units: z.number(),
      dynamodb_read_units: z.number(),
      kms_requests: z.number(),
      region: z.string(),
      price_version: z.string(),
    }).nullable().describe('What serving the request cost on AWS; null until recorded'),
    total_cost_with_infrastructure: z.number(),
  }),
});

export const feedbackBody = z.strictObject({
  generation_id: z.string().min(1).max(128),
  category: z.enum(['latency', 'incoherence', 'incorrect_response', 'formatting', 'billing', 'api_error', 'other']),
  comment: z.string().max(4000).optional(),
});

export const feedbackReply = z.object({ data: z.object({ success: z.literal(true) }) });

export const activityQuery = z.object({
  date: z.iso.date().optional().describe('One UTC day (YYYY-MM-DD) within the last 30; default: all of the last 30 days'),
  api_key_hash: z.string().regex(/^[0-9a-f]{64}$/, 'must be a key hash (64 hex characters)').optional(),
  user_id: z.string().min(1).max(256).optional(),
  workspace_id: z.string().min(1).max(128).optional(),
  group_by: z.enum(['workspace']).optional(),
});

export const activityReply = z.object({
  data: z.array(z.object({
    date: z.string(),
    model: z.string(),
    model_permaslug: z.string(),
    endpoint_id: z.string(),
    provider_name: z.string(),
    usage: z.number(),
    byok_usage_inference: z.number(),
    requests: z.number(),
    prompt_tokens: z.number(),
    completion_tokens: z.number(),
    reasoning_tokens: z.number(),
    workspace_id: z.string().optional(),
  })),
});

export const ANALYTICS_DIMENSIONS = ['model', 'provider', 'api_key', 'workspace'] as const;
export const ANALYTICS_GRANULARITIES = ['hour', 'day', 'week', 'month'] as const;
export const ANALYTICS_OPERATORS = ['eq', 'neq', 'in', 'not_in'] as const;

export const analyticsMetaReply = z.object({
  data: z.object({
    dimensions: z.array(z.object({ name: z.string(), display_label: z.string() })),
    granularities: z.array(z.object({ name: z.string(), display_label: z.string() })),
    metrics: z.array(z.object({ name: z.string(), display_label: z.string(), display_format: z.string(), is_rate: z.boolean() })),
    operators: z.array(z.object({ name: z.string(), value_type: z.string() })),
  }),
});

const filterValue = z.union([z.string().max(256), z.number(), z.array(z.union([z.string().max(256), z.number()])).max(100)]);

export const analyticsQueryBody = z.strictObject({
  metrics: z.array(z.string().min(1).max(64)).min(1).max(20),
  dimensions: z.array(z.string().min(1).max(64)).max(4).optional(),
  filters: z.array(z.strictObject({ field: z.string().min(1).max(64), operator: z.string().min(1).max(16), value: filterValue, include_unset: z.boolean().optional() })).max(20).optional(),
  granularity: z.string().min(1).max(16).optional(),
  time_range: z.strictObject({ start: z.iso.datetime({ offset: true }), end: z.iso.datetime({ offset: true }) }).optional(),
  order_by: z.strictObject({ field: z.string().min(1).max(64), direction: z.enum(['asc', 'desc']) }).optional(),
  limit: z.number().int().min(1).max(10_000).optional(),
  group_limit: z.number().int().min(1).max(1000).optional(),
  classifier_dimensions: z.unknown().optional(),
  classifier_filters: z.unknown().optional(),
});

export const analyticsQueryReply = z.object({
  data: z.object({
    data: z.array(z.record(z.string(), z.union([z.string(), z.number(), z.null()]))),
    metadata: z.object({ query_time_ms: z.number(), row_count: z.number().int(), truncated: z.boolean() }),
    warnings: z.array(z.string()).optional(),
  }),
});
