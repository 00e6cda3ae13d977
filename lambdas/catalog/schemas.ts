// Wire shapes of GET /models and GET /models/user (the public OpenRouter model object).
import * as z from 'zod';
import { queryInt } from '../platform/http/query-int.js';

export const listModelsQuery = z.object({
  offset: queryInt(0).optional(),
  limit: queryInt(1, 1000).optional(),
  category: z.string().max(64).optional().describe('Only the models the catalog lists under this use case (a model\'s `categories` in GATEWAY_CATALOG_FILE, e.g. programming); the built-in models are listed under none'),
  supported_parameters: z.string().optional(),
  output_modalities: z.string().max(200).optional().describe('Comma-separated output modalities a model must offer (text, image, embeddings, audio; "speech" is text to speech); "all" or none: every model'),
});

const price = z.string().describe('USD per token (or per request), decimal text');

export const modelSchema = z.object({
  id: z.string(),
  canonical_slug: z.string(),
  hugging_face_id: z.string().nullable(),
  name: z.string(),
  created: z.number().int(),
  description: z.string(),
  context_length: z.number().int().nullable(),
  architecture: z.object({
    modality: z.string().nullable(),
    input_modalities: z.array(z.string()),
    output_modalities: z.array(z.string()),
    tokenizer: z.string(),
    instruct_type: z.string().nullable(),
  }),
  pricing: z.object({
    prompt: price, completion: price, request: price, image: price, web_search: price,
    internal_reasoning: price, input_cache_read: price, input_cache_write: price,
  }),
  top_provider: z.object({ context_length: z.number().int().nullable(), max_completion_tokens: z.number().int().nullable(), is_moderated: z.boolean() }),
  per_request_limits: z.null(),
  supported_parameters: z.array(z.string()),
  default_parameters: z.record(z.string(), z.number().nullable()).nullable(),
  supported_voices: z.array(z.string()).nullable(),
  links: z.object({ details: z.string() }),
  endpoints_count: z.number().int(),
});

export const listModelsReply = z.object({
  data: z.array(modelSchema),
  total_count: z.number().int(),
  links: z.object({ next: z.string().nullable() }),
});

/** GET /models/{author}/{slug}: one item of GET /models (what `openai.models.retrieve` reads). */
export const modelReply = modelSchema;

/** GET /model/{author}/{slug}: the same model under `data` (the @openrouter/sdk `models.get` shape). */
export const modelDataReply = z.object({ data: modelSchema });

export const countModelsQuery = z.object({
  output_modalities: z.string().max(200).optional().describe('Comma-separated output modalities a model must offer (e.g. text,image); "all" counts every model'),
});

export const modelCountReply = z.object({ data: z.object({ count: z.number().int().describe('How many models GET /models lists for the caller') }) });

export const providersReply = z.object({
  data: z.array(z.object({
    name: z.string(),
    slug: z.string(),
    privacy_policy_url: z.string().nullable(),
    terms_of_service_url: z.string().nullable(),
    status_page_url: z.string().nullable(),
  })),
});

const percentiles = z.object({ p50: z.number(), p75: z.number(), p90: z.number(), p99: z.number() });

export const endpointSchema = z.object({
  name: z.string(),
  model_id: z.string(),
  model_name: z.string(),
  context_length: z.number().int(),
  pricing: z.object({
    prompt: price, completion: price, request: price, image: price, web_search: price,
    internal_reasoning: price, input_cache_read: price, input_cache_write: price, discount: z.number(),
  }),
  provider_name: z.string(),
  tag: z.string(),
  quantization: z.string().nullable(),
  max_completion_tokens: z.number().int().nullable(),
  max_prompt_tokens: z.number().int().nullable(),
  supported_parameters: z.array(z.string()),
  supports_implicit_caching: z.boolean(),
  supports_tool_choice: z.object({ auto: z.boolean(), function: z.boolean(), none: z.boolean(), required: z.boolean() }),
  supports_voice_cloning: z.boolean(),
  status: z.number().int().describe('0: listed and routable'),
  uptime_last_5m: z.number().nullable().describe('Percent of settled generations that did not fail, over the rollup hours overlapping the window; null without traffic'),
  uptime_last_30m: z.number().nullable(),
  uptime_last_1d: z.number().nullable(),
  latency_last_30m: percentiles.nullable().describe('Time to first token (ms), percentiles from the hourly rollup histogram'),
  throughput_last_30m: percentiles.nullable().describe('Output tokens per second after the first token, percentiles from the hourly rollup histogram'),
});

export const modelEndpointsReply = z.object({
  data: z.object({
    id: z.string(),
    name: z.string(),
    created: z.number().int(),
    description: z.string(),
    architecture: modelSchema.shape.architecture,
    endpoints: z.array(endpointSchema),
  }),
});
