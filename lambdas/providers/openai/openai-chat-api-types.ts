// What OpenAI-style Chat Completions endpoints return (OpenAI, Groq, Together, Mistral, DeepSeek, Ollama, vLLM …).
import * as z from 'zod';

const toolCall = z.object({
  index: z.number().int().optional(),
  id: z.string().nullish(),
  type: z.string().nullish(),
  function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
});

const usage = z.object({
  prompt_tokens: z.number().nullish(),
  completion_tokens: z.number().nullish(),
  total_tokens: z.number().nullish(),
  prompt_tokens_details: z.object({ cached_tokens: z.number().nullish(), cache_write_tokens: z.number().nullish() }).nullish(),
  completion_tokens_details: z.object({ reasoning_tokens: z.number().nullish() }).nullish(),
  // DeepSeek reports cache hits this way.
  prompt_cache_hit_tokens: z.number().nullish(),
}).nullish();

/** What a reply's message and a stream chunk's delta both carry (every field optional in a delta). */
const assistantFields = z.object({
  role: z.string().nullish(),
  content: z.string().nullish(),
  refusal: z.string().nullish(),
  reasoning: z.string().nullish(),
  reasoning_content: z.string().nullish(),
  tool_calls: z.array(toolCall).nullish(),
});

export const openAIChatResponseSchema = z.object({
  id: z.string().nullish(),
  model: z.string().nullish(),
  service_tier: z.string().nullish(),
  choices: z.array(z.object({
    index: z.number().int().nullish(),
    message: assistantFields,
    finish_reason: z.string().nullish(),
  })).min(1),
  usage,
});

export const openAIChatChunkSchema = z.object({
  id: z.string().nullish(),
  model: z.string().nullish(),
  service_tier: z.string().nullish(),
  choices: z.array(z.object({
    index: z.number().int().nullish(),
    delta: assistantFields.nullish(),
    finish_reason: z.string().nullish(),
  })).nullish(),
  usage,
  error: z.object({ message: z.string().nullish(), code: z.union([z.string(), z.number()]).nullish() }).nullish(),
});

export type OpenAIChatUsage = z.infer<typeof usage>;

export const openAIErrorSchema = z.object({
  error: z.object({
    message: z.string().nullish(),
    type: z.string().nullish(),
    code: z.union([z.string(), z.number()]).nullish(),
  }),
});

export function describeOpenAIError(body: unknown): { message?: string; code?: string } | undefined {
  const parsed = openAIErrorSchema.safeParse(body);
  if (!parsed.success) return undefined;
  const { message, code, type } = parsed.data.error;
  return { message: message ?? undefined, code: code !== null && code !== undefined ? String(code) : type ?? undefined };
}

/** POST /embeddings reply (encoding_format "float"). */
export const openAIEmbeddingsResponseSchema = z.object({
  data: z.array(z.object({ index: z.number().int().nonnegative(), embedding: z.array(z.number()) })),
  model: z.string().nullish(),
  usage: z.object({ prompt_tokens: z.number().int().nonnegative().nullish() }).nullish(),
});
