// What every adapter's embeddings call shares: the result in the internal shape, and the estimate for
// providers that report no token count (Gemini's batchEmbedContents, Cohere on Bedrock).
import { ProviderError } from './provider-error.js';
import { emptyUsage, type GenerationResult } from './types.js';

/**
 * The estimate where a provider counts no tokens: about four ASCII characters a token, and a token for every
 * other character (Chinese, Japanese and Korean text, and most other scripts, take about one a character),
 * at least one token an input.
 */
export function estimatedEmbeddingTokens(input: readonly string[]): number {
  let total = 0;
  for (const text of input) {
    let ascii = 0;
    let other = 0;
    for (let i = 0; i < text.length; i += 1) {
      const code = text.charCodeAt(i);
      if (code < 0x80) ascii += 1;
      // A surrogate pair is one character: counted at its high half.
      else if (code < 0xdc00 || code > 0xdfff) other += 1;
    }
    total += Math.max(1, Math.ceil(ascii / 4) + other);
  }
  return total;
}

/** The vectors as a generation's result; refused as an invalid response unless there is one per input. */
export function embeddingResult(provider: string, input: readonly string[], embeddings: number[][], inputTokens: number | undefined, providerId?: string): GenerationResult {
  if (embeddings.length !== input.length) {
    throw new ProviderError({ provider, kind: 'invalid-response', status: 502, message: `Upstream returned ${embeddings.length} embeddings for ${input.length} inputs` });
  }
  return {
    text: '',
    ...(providerId ? { provider_id: providerId } : {}),
    tool_calls: [],
    finish_reason: 'stop',
    usage: Object.assign(emptyUsage(), { input_tokens: inputTokens ?? estimatedEmbeddingTokens(input) }),
    embeddings,
    ...(inputTokens === undefined ? { usage_estimated: true } : {}),
  };
}
