// The most a request can cost on an endpoint, reserved before the provider is called. It must not be
// below the actual cost, or a key could end up over its limit:
// - prompt tokens: byte-level BPE tokenizers (OpenAI, Anthropic, Llama, Gemini's SentencePiece with byte
//   fallback) never produce more tokens than UTF-8 bytes, so the bytes of every text the model reads, plus
//   a per-message allowance for the chat template, bound the text part. Images and files are priced by
//   providers per tile or page, not by bytes: each gets a fixed allowance (IMAGE_TOKENS) instead.
// - output tokens: the request's max_output_tokens, capped by the endpoint's maximum output (else what is
//   left of the context window), priced at the dearer of completion and reasoning.
import type { CatalogEndpoint } from '../catalog/index.js';
import type { ContentPart, GenerationRequest, Message, Usage } from '../providers/types.js';
import type { Nanos } from '../platform/money.js';
import { speechUsage } from '../providers/speech/audio-stream.js';

/** Upper allowance per image or file part: above the largest per-image charge of the supported providers. */
export const IMAGE_TOKENS = 8_000;
/** Chat template tokens around each message (role markers, separators). */
export const MESSAGE_OVERHEAD_TOKENS = 16;

// Buffer.byteLength counts UTF-8 bytes without encoding the text into a new buffer.
const bytes = (text: string | undefined) => (text ? Buffer.byteLength(text, 'utf8') : 0);

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

/** An upper bound on the prompt tokens of a request; a speech request's exact count, its characters (speechUsage). */
export function promptTokenBound(params: Omit<GenerationRequest, 'model'>): number {
  if (params.speech) return speechUsage(params.speech).input_tokens;
  let total = 0;
  for (const message of params.messages) total += messageTokens(message);
  if (params.tools?.length) total += bytes(JSON.stringify(params.tools)) + MESSAGE_OVERHEAD_TOKENS;
  if (params.response_format?.type === 'json_schema') total += bytes(JSON.stringify(params.response_format.schema)) + MESSAGE_OVERHEAD_TOKENS;
  return total;
}

/**
 * An upper bound on the output tokens: max_tokens, capped by the endpoint's maximum completion, else by its
 * context length. The context is not reduced by the prompt: the prompt's bound is an over-estimate (a byte a
 * token), and subtracting it would under-estimate what the output may use (ctx − real prompt), letting a
 * request whose prompt nearly fills the context cost far more than it held.
 */
export function outputTokenBound(params: Omit<GenerationRequest, 'model'>, endpoint: CatalogEndpoint): number {
  const ceiling = endpoint.max_completion_tokens ?? endpoint.context_length;
  return params.max_output_tokens === undefined ? ceiling : Math.min(params.max_output_tokens, ceiling);
}

const dearer = (a: Nanos, b: Nanos) => (a > b ? a : b);

/** The most this request can cost on this endpoint. */
export function maxCost(params: Omit<GenerationRequest, 'model'>, endpoint: CatalogEndpoint): Nanos {
  const prompt = promptTokenBound(params);
  const output = outputTokenBound(params, endpoint);
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

/** The output tokens a reservation for these endpoints allows for: the most any of them may produce. */
export function reservedOutputTokens(params: Omit<GenerationRequest, 'model'>, endpoints: CatalogEndpoint[]): number {
  let most = 0;
  for (const endpoint of endpoints) most = Math.max(most, outputTokenBound(params, endpoint));
  return most;
}

/**
 * The most output tokens (max_tokens) whose reservation fits in `budget` on every one of these endpoints,
 * given the prompt's bound: the exact inverse of maxCost for the output part (0 when not even the prompt
 * fits; Number.MAX_SAFE_INTEGER when output costs nothing).
 */
export function affordableOutputTokens(params: Omit<GenerationRequest, 'model'>, endpoints: CatalogEndpoint[], budget: Nanos): number {
  const prompt = BigInt(promptTokenBound(params));
  let most = BigInt(Number.MAX_SAFE_INTEGER);
  for (const { pricing } of endpoints) {
    const fixed = prompt * dearer(dearer(pricing.prompt, pricing.input_cache_write), pricing.input_cache_read) + pricing.request;
    if (fixed > budget) return 0;
    const perToken = dearer(pricing.completion, pricing.internal_reasoning);
    if (perToken === 0n) continue;
    const tokens = (budget - fixed) / perToken;
    if (tokens < most) most = tokens;
  }
  return Number(most);
}

/** Average UTF-8 bytes per token of English text with the common BPE tokenizers (for estimates, not bounds). */
const BYTES_PER_TOKEN = 4;
/** What a typical image costs in input tokens, for estimates. */
const IMAGE_TOKENS_TYPICAL = 1_000;
const MESSAGE_TOKENS_TYPICAL = 4;

/** A realistic estimate of a prompt's tokens (not a bound): text and the chat template, and images. */
export interface PromptEstimate {
  /** Text, tool definitions and per-message template tokens. */
  text: number;
  /** Images and files, at a typical per-image charge. */
  images: number;
}

/**
 * The prompt tokens a request will probably count: about BYTES_PER_TOKEN UTF-8 bytes per token of text
 * (English prose with the common BPE tokenizers; denser scripts and code count more tokens per byte, so
 * this errs towards fewer tokens), IMAGE_TOKENS_TYPICAL per image or file, and a few template tokens per
 * message. Used where a bound would be too pessimistic: the usage of a stream cut before its provider
 * reported it, and the context-length check in routing, which must not refuse prompts that really fit.
 */
export function estimatePromptTokens(params: Omit<GenerationRequest, 'model'>): PromptEstimate {
  let promptBytes = 0;
  let images = 0;
  for (const message of params.messages) {
    for (const part of message.content) {
      if (part.type === 'text') promptBytes += bytes(part.text);
      else images += 1;
    }
    if (message.role === 'assistant') {
      promptBytes += bytes(message.reasoning);
      for (const call of message.tool_calls ?? []) promptBytes += bytes(call.name) + bytes(call.arguments);
    }
  }
  if (params.tools?.length) promptBytes += bytes(JSON.stringify(params.tools));
  return { text: Math.ceil(promptBytes / BYTES_PER_TOKEN) + params.messages.length * MESSAGE_TOKENS_TYPICAL, images: images * IMAGE_TOKENS_TYPICAL };
}

/**
 * An estimate of the usage of a stream that ended before the provider reported it (the client went away,
 * the connection dropped, the gateway shut down): the provider bills the prompt it read and the tokens it
 * sent, so the gateway charges an estimate of them rather than nothing. Records carry `usage_estimated`
 * when this is used.
 */
export function estimateUsage(params: Omit<GenerationRequest, 'model'>, output: string): Usage {
  const prompt = estimatePromptTokens(params);
  return { input_tokens: prompt.text + prompt.images, output_tokens: Math.ceil(bytes(output) / BYTES_PER_TOKEN), cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 };
}
