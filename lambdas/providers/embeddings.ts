// What every adapter's embeddings call shares: the result in the internal shape, and the estimate for
// providers that report no token count (Gemini's batchEmbedContents, Cohere on Bedrock).
import { ProviderError } from './provider-error.js';
import { emptyUsage, type GenerationResult } from './types.js';

/** About four characters a token, at least one token an input: the estimate where a provider counts none. */
export function estimatedEmbeddingTokens(input: readonly string[]): number {
  return input.reduce((sum, text) => sum + Math.max(1, Math.ceil(text.length / 4)), 0);
}

/** The vectors as a generation's result; refused as an invalid response unless there is one per input. */
export function embeddingResult(provider: string, input: readonly string[], embeddings: number[][], inputTokens: number | undefined, providerId?: string): GenerationResult {
  if (embeddings.length !== input.length) {
    throw new ProviderError({ provider, kind: 'invalid-response', status: 502, message: `Upstream returned ${embeddings.length} embeddings for ${input.length} inputs` });
  }
  return {
    ...(providerId ? { provider_id: providerId } : {}),
    text: '',
    tool_calls: [],
    finish_reason: 'stop',
    usage: { ...emptyUsage(), input_tokens: inputTokens ?? estimatedEmbeddingTokens(input) },
    embeddings,
    ...(inputTokens === undefined ? { usage_estimated: true } : {}),
  };
}
