// Wire shapes of GET /models and GET /models/user (the public OpenRouter model object).
import * as z from 'zod';

export const listModelsQuery = z.object({
  offset: z.coerce.number().int().min(0).optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  category: z.string().optional(),
  supported_parameters: z.string().optional(),
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
