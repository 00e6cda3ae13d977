// What the Anthropic Messages API returns: messages, stream events and errors.
// Unknown block, delta and event types are accepted (Anthropic adds them over time) and read as `other`;
// a known type with a malformed body fails validation.
import * as z from 'zod';
import { otherThan } from '../api-types.js';

const usage = z.object({
  /** Input tokens neither read from nor written to the cache. */
  input_tokens: z.number().nullish(),
  output_tokens: z.number().nullish(),
  cache_creation_input_tokens: z.number().nullish(),
  cache_read_input_tokens: z.number().nullish(),
  service_tier: z.string().nullish(),
});

export type AnthropicUsage = z.infer<typeof usage>;

const knownBlock = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('thinking'), thinking: z.string(), signature: z.string().nullish() }),
  z.object({ type: z.literal('redacted_thinking'), data: z.string() }),
  z.object({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.unknown().optional() }),
]);

const contentBlock = z.union([knownBlock, otherThan(['text', 'thinking', 'redacted_thinking', 'tool_use'])]);

export type AnthropicContentBlock = z.output<typeof contentBlock>;

export const anthropicMessageSchema = z.object({
  id: z.string().nullish(),
  type: z.string().nullish(),
  role: z.string().nullish(),
  model: z.string().nullish(),
  content: z.array(contentBlock),
  stop_reason: z.string().nullish(),
  stop_sequence: z.string().nullish(),
  usage: usage.nullish(),
});

const knownDelta = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text_delta'), text: z.string() }),
  z.object({ type: z.literal('input_json_delta'), partial_json: z.string() }),
  z.object({ type: z.literal('thinking_delta'), thinking: z.string() }),
  z.object({ type: z.literal('signature_delta'), signature: z.string() }),
]);

const delta = z.union([knownDelta, otherThan(['text_delta', 'input_json_delta', 'thinking_delta', 'signature_delta'])]);

const errorBody = z.object({ type: z.string(), message: z.string() });

const knownEvent = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('message_start'),
    message: z.object({ id: z.string().nullish(), model: z.string().nullish(), usage: usage.nullish() }),
  }),
  z.object({ type: z.literal('content_block_start'), index: z.number().int(), content_block: contentBlock }),
  z.object({ type: z.literal('content_block_delta'), index: z.number().int(), delta }),
  z.object({ type: z.literal('content_block_stop'), index: z.number().int() }),
  z.object({
    type: z.literal('message_delta'),
    delta: z.object({ stop_reason: z.string().nullish(), stop_sequence: z.string().nullish() }),
    usage: usage.nullish(),
  }),
  z.object({ type: z.literal('message_stop') }),
  z.object({ type: z.literal('ping') }),
  z.object({ type: z.literal('error'), error: errorBody }),
]);

const KNOWN_EVENTS = ['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop', 'ping', 'error'];

export const anthropicStreamEventSchema = z.union([knownEvent, otherThan(KNOWN_EVENTS)]);

export const anthropicErrorSchema = z.object({ type: z.literal('error').optional(), error: errorBody });

export function describeAnthropicError(body: unknown): { message?: string; code?: string } | undefined {
  const parsed = anthropicErrorSchema.safeParse(body);
  if (!parsed.success) return undefined;
  return { message: parsed.data.error.message, code: parsed.data.error.type };
}

/** The HTTP status Anthropic pairs with each error type (used for errors sent mid-stream, after a 200). */
export function anthropicErrorStatus(type: string): number {
  switch (type) {
    case 'invalid_request_error': return 400;
    case 'authentication_error': return 401;
    case 'billing_error': return 402;
    case 'permission_error': return 403;
    case 'not_found_error': return 404;
    case 'request_too_large': return 413;
    case 'rate_limit_error': return 429;
    case 'api_error': return 500;
    case 'timeout_error': return 504;
    case 'overloaded_error': return 529;
    default: return 502;
  }
}
