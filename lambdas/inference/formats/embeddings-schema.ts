// POST /embeddings request body: OpenAI's embeddings request (what the `openai` client's embeddings.create
// sends, and a `/v1/embeddings` batch item's body), with the gateway's routing fields beside it.
import * as z from 'zod';
import { modelIdSchema, modelsSchema, providerPreferencesSchema, sessionIdSchema, userSchema } from './common-schema.js';

/** OpenAI's limits: at most 2,048 inputs a request. */
export const MAX_EMBEDDING_INPUTS = 2048;

const text = z.string().min(1, 'an input must not be empty');

export const embeddingsRequestSchema = z.object({
  model: modelIdSchema.optional(),
  models: modelsSchema.optional(),
  // Token arrays (what tiktoken produced) parse here only to be refused below with a message that says so:
  // only OpenAI reads them, so the gateway takes text.
  input: z.union([text, z.array(z.union([text, z.number(), z.array(z.number())])).min(1).max(MAX_EMBEDDING_INPUTS)]),
  encoding_format: z.enum(['float', 'base64']).optional(),
  dimensions: z.number().int().min(1).max(65536).optional(),
  /** OpenRouter's: what the texts are for (some models embed queries and documents differently). */
  input_type: z.string().max(64).optional(),
  provider: providerPreferencesSchema.nullish(),
  session_id: sessionIdSchema.optional(),
  user: userSchema.optional(),
}).superRefine((body, ctx) => {
  if (Array.isArray(body.input) && body.input.some((item) => typeof item !== 'string')) {
    ctx.addIssue({ code: 'custom', path: ['input'], message: 'token arrays are not accepted; send the text (a string or an array of strings)' });
  }
  if (body.model === undefined && body.models === undefined) {
    ctx.addIssue({ code: 'custom', path: ['model'], message: 'model or models is required' });
  }
});
export type EmbeddingsRequest = z.infer<typeof embeddingsRequestSchema>;
