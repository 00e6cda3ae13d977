// What the OpenAI Responses API returns: response objects, stream events and errors (HTTP errors share the
// Chat Completions error shape, see describeOpenAIError). Unknown item, content and event types are accepted and
// read as `other`; a known type with a malformed body fails validation.
import * as z from 'zod';
import { otherThan } from '../api-types.js';

const usage = z.object({
  /** Includes cached tokens. */
  input_tokens: z.number().nullish(),
  input_tokens_details: z.object({ cached_tokens: z.number().nullish() }).nullish(),
  /** Includes reasoning tokens. */
  output_tokens: z.number().nullish(),
  output_tokens_details: z.object({ reasoning_tokens: z.number().nullish() }).nullish(),
  total_tokens: z.number().nullish(),
});

export type ResponsesUsage = z.infer<typeof usage>;

const messageContent = z.union([
  z.discriminatedUnion('type', [
    z.object({ type: z.literal('output_text'), text: z.string() }),
    z.object({ type: z.literal('refusal'), refusal: z.string() }),
  ]),
  otherThan(['output_text', 'refusal']),
]);

const textPart = z.object({ type: z.string(), text: z.string() });

const outputItem = z.union([
  z.discriminatedUnion('type', [
    z.object({ type: z.literal('message'), id: z.string().nullish(), role: z.string().nullish(), content: z.array(messageContent) }),
    z.object({ type: z.literal('function_call'), id: z.string().nullish(), call_id: z.string(), name: z.string(), arguments: z.string() }),
    z.object({
      type: z.literal('reasoning'),
      id: z.string().nullish(),
      /** summary_text parts. */
      summary: z.array(textPart).nullish(),
      /** reasoning_text parts (raw reasoning, where a model exposes it). */
      content: z.array(textPart).nullish(),
    }),
  ]),
  otherThan(['message', 'function_call', 'reasoning']),
]);

export type ResponsesOutputItem = z.output<typeof outputItem>;

const responseError = z.object({ code: z.string().nullish(), message: z.string().nullish() });

const responseFields = {
  id: z.string().nullish(),
  status: z.string().nullish(),
  error: responseError.nullish(),
  incomplete_details: z.object({ reason: z.string().nullish() }).nullish(),
  usage: usage.nullish(),
  service_tier: z.string().nullish(),
};

export const openAIResponseSchema = z.object({ ...responseFields, output: z.array(outputItem) });

export type OpenAIResponse = z.output<typeof openAIResponseSchema>;

/** The response object inside stream events: its output may be left out there. */
const streamedResponse = z.object({ ...responseFields, output: z.array(outputItem).nullish() });

export type StreamedOpenAIResponse = z.output<typeof streamedResponse>;

const KNOWN_EVENTS = [
  'response.created',
  'response.in_progress',
  'response.queued',
  'response.completed',
  'response.incomplete',
  'response.failed',
  'response.output_item.added',
  'response.output_item.done',
  'response.output_text.delta',
  'response.refusal.delta',
  'response.reasoning_summary_part.added',
  'response.reasoning_summary_text.delta',
  'response.reasoning_text.delta',
  'response.function_call_arguments.delta',
  'error',
] as const;

export const openAIResponsesStreamEventSchema = z.union([
  z.discriminatedUnion('type', [
    z.object({ type: z.literal('response.created'), response: streamedResponse }),
    z.object({ type: z.literal('response.in_progress'), response: streamedResponse }),
    z.object({ type: z.literal('response.queued'), response: streamedResponse }),
    z.object({ type: z.literal('response.completed'), response: streamedResponse }),
    z.object({ type: z.literal('response.incomplete'), response: streamedResponse }),
    z.object({ type: z.literal('response.failed'), response: streamedResponse }),
    z.object({ type: z.literal('response.output_item.added'), output_index: z.number().int(), item: outputItem }),
    z.object({ type: z.literal('response.output_item.done'), output_index: z.number().int(), item: outputItem }),
    z.object({ type: z.literal('response.output_text.delta'), delta: z.string() }),
    z.object({ type: z.literal('response.refusal.delta'), delta: z.string() }),
    z.object({ type: z.literal('response.reasoning_summary_part.added'), output_index: z.number().int().nullish(), summary_index: z.number().int().nullish() }),
    z.object({ type: z.literal('response.reasoning_summary_text.delta'), delta: z.string() }),
    z.object({ type: z.literal('response.reasoning_text.delta'), delta: z.string() }),
    z.object({ type: z.literal('response.function_call_arguments.delta'), output_index: z.number().int(), item_id: z.string().nullish(), delta: z.string() }),
    z.object({ type: z.literal('error'), code: z.string().nullish(), message: z.string().nullish(), param: z.string().nullish() }),
  ]),
  otherThan(KNOWN_EVENTS),
]);

/** The HTTP status that matches an error code the Responses API reports in a body or mid-stream. */
export function responsesErrorStatus(code: string | null | undefined): number {
  if (!code) return 502;
  if (code === 'rate_limit_exceeded' || code === 'insufficient_quota') return 429;
  if (code === 'server_error') return 500;
  if (code === 'vector_store_timeout') return 504;
  if (code === 'context_length_exceeded' || code.startsWith('invalid_') || code.includes('image')) return 400;
  return 502;
}
