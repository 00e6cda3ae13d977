// Embeddings request → InferenceRequest, and a finished embeddings generation → OpenAI's reply (a list of
// `embedding` objects, floats or base64 of little-endian float32, as the `openai` client asks by default).
// The inputs ride in the request as user messages, one an input, so the reservation bounds their tokens the
// way it bounds any prompt's (with a message's allowance for the tokens a model adds around each input);
// `params.embedding` tells the adapter to call its embeddings API.
import type { GenerationResult, Usage } from '../../providers/types.js';
import { costFields, type CostBreakdown } from '../../billing/cost.js';
import type { InferenceRequest } from '../inference-request.js';
import { modelList } from './from-chat.js';
import type { EmbeddingsRequest } from './embeddings-schema.js';
import type { ReplyIdentity } from './to-chat.js';

export function fromEmbeddings(body: EmbeddingsRequest): InferenceRequest {
  const input = typeof body.input === 'string' ? [body.input] : body.input as string[];
  return {
    format: 'embeddings',
    models: modelList(body.model, body.models),
    provider: body.provider ?? undefined,
    routePartition: undefined,
    stream: false,
    serviceTier: null,
    sessionId: body.session_id,
    user: body.user,
    safetyIdentifier: undefined,
    metadata: undefined,
    plugins: [],
    params: {
      messages: input.map((text) => ({ role: 'user' as const, content: [{ type: 'text' as const, text }] })),
      embedding: { input, ...(body.dimensions !== undefined ? { dimensions: body.dimensions } : {}), ...(body.input_type ? { inputType: body.input_type } : {}) },
    },
    echo: { encoding_format: body.encoding_format ?? 'float' },
  };
}

/** OpenAI's usage (prompt and total tokens: there is no output) with the gateway's cost fields, named as chat names them. */
export function embeddingsUsage(usage: Usage, cost: CostBreakdown, isByok: boolean) {
  return { prompt_tokens: usage.input_tokens, total_tokens: usage.input_tokens, ...costFields(cost, isByok) };
}

/** A vector as base64 of its little-endian float32 values. */
function base64Of(vector: readonly number[]): string {
  const floats = new Float32Array(vector);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString('base64');
}

export function embeddingsReply(identity: ReplyIdentity, result: GenerationResult, usage: ReturnType<typeof embeddingsUsage>, encoding: unknown, extra: Record<string, unknown> = {}) {
  // Adapters answer an embeddings request with vectors or fail; the catalog admits embeddings endpoints only on those that can.
  if (!result.embeddings) throw new Error('an embeddings generation ended without embeddings');
  const base64 = encoding === 'base64';
  return {
    id: identity.id,
    object: 'list',
    data: result.embeddings.map((vector, index) => ({ object: 'embedding', index, embedding: base64 ? base64Of(vector) : vector })),
    model: identity.model,
    provider: identity.provider,
    usage,
    ...extra,
  };
}
