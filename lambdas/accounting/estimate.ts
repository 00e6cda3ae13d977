// The most a request can cost on an endpoint, reserved before the provider is called. It must not be
// below the actual cost, or a key could end up over its limit:
// - prompt tokens: byte-level BPE tokenizers (OpenAI, Anthropic, Llama, Gemini's SentencePiece with byte
//   fallback) never produce more tokens than UTF-8 bytes, so the bytes of every text the model reads, plus
//   a per-message allowance for the chat template, bound the text part. Images and files are priced by
//   providers per tile or page, not by bytes: each gets a fixed allowance (IMAGE_TOKENS) instead.
// - output tokens: the request's max_output_tokens, capped by the endpoint's maximum output (else what is
//   left of the context window), priced at the dearer of completion and reasoning.
import type { CatalogEndpoint } from '../catalog/types.js';
import type { ContentPart, GenerationRequest, Message } from '../providers/types.js';
import type { Nanos } from '../shared/money.js';

/** Upper allowance per image or file part: above the largest per-image charge of the supported providers. */
export const IMAGE_TOKENS = 8_000;
/** Chat template tokens around each message (role markers, separators). */
export const MESSAGE_OVERHEAD_TOKENS = 16;

const encoder = new TextEncoder();
const bytes = (text: string | undefined) => (text ? encoder.encode(text).length : 0);

function partTokens(part: ContentPart): number {
  if (part.type === 'text') return bytes(part.text);
  if (part.type === 'audio') return part.data.length;
  return IMAGE_TOKENS;
}

function messageTokens(message: Message): number {
  let total = MESSAGE_OVERHEAD_TOKENS;
  for (const part of message.content) total += partTokens(part);
  if (message.role === 'assistant') {
    total += bytes(message.reasoning);
    for (const call of message.tool_calls ?? []) total += bytes(call.id) + bytes(call.name) + bytes(call.arguments) + MESSAGE_OVERHEAD_TOKENS;
  }
  if (message.role === 'tool') total += bytes(message.tool_call_id);
  return total;
}

/** An upper bound on the prompt tokens of a request. */
export function promptTokenBound(params: Omit<GenerationRequest, 'model'>): number {
  let total = 0;
  for (const message of params.messages) total += messageTokens(message);
  if (params.tools?.length) total += bytes(JSON.stringify(params.tools)) + MESSAGE_OVERHEAD_TOKENS;
  if (params.response_format?.type === 'json_schema') total += bytes(JSON.stringify(params.response_format.schema)) + MESSAGE_OVERHEAD_TOKENS;
  return total;
}

export function outputTokenBound(params: Omit<GenerationRequest, 'model'>, endpoint: CatalogEndpoint, promptTokens: number): number {
  const ceiling = endpoint.max_completion_tokens ?? Math.max(1, endpoint.context_length - Math.min(promptTokens, endpoint.context_length));
  return params.max_output_tokens === undefined ? ceiling : Math.min(params.max_output_tokens, ceiling);
}

const dearer = (a: Nanos, b: Nanos) => (a > b ? a : b);

/** The most this request can cost on this endpoint. */
export function maxCost(params: Omit<GenerationRequest, 'model'>, endpoint: CatalogEndpoint): Nanos {
  const prompt = promptTokenBound(params);
  const output = outputTokenBound(params, endpoint, prompt);
  const { pricing } = endpoint;
  return BigInt(prompt) * dearer(dearer(pricing.prompt, pricing.input_cache_write), pricing.input_cache_read)
    + BigInt(output) * dearer(pricing.completion, pricing.internal_reasoning)
    + pricing.request;
}

/** What to hold for a request that may be served by any of these endpoints: the dearest of them. */
export function reservationFor(params: Omit<GenerationRequest, 'model'>, endpoints: CatalogEndpoint[]): Nanos {
  let most = 0n;
  for (const endpoint of endpoints) most = dearer(most, maxCost(params, endpoint));
  return most;
}
