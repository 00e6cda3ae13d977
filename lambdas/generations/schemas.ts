// Wire shapes of the generation routes (docs/API.md "Generations"; shaped as the public OpenRouter API's
// GenerationResponse).
import * as z from 'zod';

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
