// Every branch of the reply writers (chat and Responses, JSON and SSE, success and failure) against the
// models @openrouter/sdk parses replies with. The end-to-end suites drive the same shapes through the SDK,
// but only for what the simulator can produce; reasoning, signatures, several tool calls and every error
// status are covered here.
import { describe, expect, it } from '@jest/globals';
import {
  ChatResult$inboundSchema, ChatStreamChunk$inboundSchema, OpenResponsesResult$inboundSchema, StreamEvents$inboundSchema,
} from '@openrouter/sdk/models';
import type { z } from 'zod/v4';
import type { GenerationResult, StreamEvent, Usage } from '../../lambdas/providers/types.js';
import { ChatStreamWriter, chatCompletion, chatUsage, type ReplyIdentity } from '../../lambdas/inference/formats/to-chat.js';
import { ResponsesStreamWriter, responseResult, responsesUsage } from '../../lambdas/inference/formats/to-responses.js';
import { fromResponses } from '../../lambdas/inference/formats/from-responses.js';
import { responsesRequestSchema } from '../../lambdas/inference/formats/responses-schema.js';
import type { CostBreakdown } from '../../lambdas/billing/cost.js';
import { unknownPaths } from '../support/sdk-shapes.js';

const identity: ReplyIdentity = { id: 'gen-1-abc', model: 'simulator/echo', provider: 'simulator', created: 1_700_000_000, serviceTier: null, reasoningFormat: 'anthropic-claude-v1' };
const usage: Usage = { input_tokens: 12, output_tokens: 30, cached_input_tokens: 4, cache_write_tokens: 2, reasoning_tokens: 10 };
const cost: CostBreakdown = { prompt: 6000n, completion: 40000n, cache_read: 400n, cache_write: 500n, reasoning: 20000n, request: 0n, total: 66900n };
const toolCall = { id: 'call_1', name: 'lookup', arguments: '{"q":"cats"}' };

const results: Record<string, GenerationResult> = {
  text: { text: 'Hello', tool_calls: [], finish_reason: 'stop', usage },
  'reasoning with a signature': { text: 'Hello', reasoning: 'Because.', reasoning_signature: 'sig==', tool_calls: [], finish_reason: 'stop', usage },
  'a signature alone': { text: 'Hello', reasoning_signature: 'sig==', tool_calls: [], finish_reason: 'stop', usage },
  'tool calls without text': { text: '', tool_calls: [toolCall, { id: 'call_2', name: 'other', arguments: '{}' }], finish_reason: 'tool_calls', usage },
  'cut at the length limit': { text: 'Hel', tool_calls: [], finish_reason: 'length', native_finish_reason: 'max_tokens', usage },
  'content filter': { text: '', tool_calls: [], finish_reason: 'content_filter', usage },
};

const events: Record<string, StreamEvent[]> = {
  text: [{ type: 'text-delta', delta: 'Hel' }, { type: 'text-delta', delta: 'lo' }, { type: 'finish', finish_reason: 'stop', usage }],
  'reasoning, then text': [
    { type: 'reasoning-delta', delta: 'Because' }, { type: 'reasoning-signature', signature: 'sig==' },
    { type: 'text-delta', delta: 'Hello' }, { type: 'finish', finish_reason: 'stop', usage },
  ],
  'interleaved tool calls': [
    { type: 'tool-call-delta', index: 0, id: 'call_1', name: 'lookup', arguments_delta: '' },
    { type: 'tool-call-delta', index: 0, arguments_delta: '{"q":' },
    { type: 'tool-call-delta', index: 1, id: 'call_2', name: 'other', arguments_delta: '{}' },
    { type: 'tool-call-delta', index: 0, arguments_delta: '"cats"}' },
    { type: 'finish', finish_reason: 'tool_calls', usage },
  ],
  'nothing at all': [{ type: 'finish', finish_reason: 'stop', usage }],
  'cut at the length limit': [{ type: 'text-delta', delta: 'Hel' }, { type: 'finish', finish_reason: 'length', usage }],
};

/** Statuses a stream can fail with after its first byte (provider errors, timeouts, limits). */
const FAILURES = [400, 402, 408, 413, 422, 429, 500, 502, 503, 529];

function parse<T>(schema: z.ZodType<T, unknown>, value: unknown): T {
  const parsed = schema.safeParse(JSON.parse(JSON.stringify(value)));
  if (!parsed.success) throw new Error(`${JSON.stringify(value).slice(0, 400)}\n${parsed.error.message}`);
  expect(unknownPaths(parsed.data)).toEqual([]);
  return parsed.data;
}

/** The JSON payloads of an SSE text, with their `event:` names. */
function frames(sse: string): Array<{ event: string | undefined; data: unknown }> {
  return sse.split('\n\n').filter((frame) => frame.includes('data: ') && !frame.includes('[DONE]')).map((frame) => ({
    event: /^event: (.+)$/m.exec(frame)?.[1],
    data: JSON.parse(/^data: (.+)$/m.exec(frame)![1]!) as unknown,
  }));
}

const echoOf = (body: Record<string, unknown>) => fromResponses(responsesRequestSchema.parse({ model: 'simulator/echo', input: 'hi', ...body })).echo;

describe('chat replies parse with @openrouter/sdk', () => {
  it.each(Object.entries(results))('chat completion: %s', (_name, result) => {
    const reply = parse(ChatResult$inboundSchema, chatCompletion(identity, result, chatUsage(usage, cost, false), { service_metadata: { attempt: 1 } }));
    expect(reply.usage?.costDetails).toMatchObject({ upstreamInferencePromptCost: expect.any(Number), upstreamInferenceCompletionsCost: expect.any(Number) });
  });

  it.each(Object.entries(events))('chat stream: %s', (_name, stream) => {
    const writer = new ChatStreamWriter(identity);
    const sse = writer.start() + stream.map((event) => writer.event(event)).join('') + writer.usage(chatUsage(usage, cost, true));
    const chunks = frames(sse).map((frame) => parse(ChatStreamChunk$inboundSchema, frame.data));
    expect(chunks.at(-1)!.usage?.costDetails?.upstreamInferenceCost).toBeCloseTo(0.0000669, 12);
  });

  it.each(FAILURES)('chat stream error chunk with status %i carries a typed error', (status) => {
    const writer = new ChatStreamWriter(identity);
    const sse = writer.event({ type: 'text-delta', delta: 'Hel' }) + writer.error(status, 'Provider simulator failed', { provider_name: 'simulator', provider_code: 'overloaded', raw: 'x' });
    const last = frames(sse).map((frame) => parse(ChatStreamChunk$inboundSchema, frame.data)).at(-1)!;
    expect(last.choices[0]!.finishReason).toBe('error');
    expect(last.error).toMatchObject({ code: status, message: 'Provider simulator failed', metadata: { errorType: expect.any(String), providerCode: 'overloaded' } });
  });

  it('writes each text delta of a chat stream as the whole chunk it stands for, whatever the text', () => {
    const writer = new ChatStreamWriter(identity);
    writer.start();
    for (const text of ['Hel', '', 'say "hi" \\ then\nnew line\ttab', 'é 🚫 “quoted” \u2028 \u0000 \u001f', '\u0000text\u0000', 'x'.repeat(5000)]) {
      expect(writer.event({ type: 'text-delta', delta: text })).toBe(`data: ${JSON.stringify({
        id: identity.id, object: 'chat.completion.chunk', created: identity.created, model: identity.model, provider: identity.provider,
        system_fingerprint: 'model-gateway', choices: [{ index: 0, delta: { content: text }, finish_reason: null, native_finish_reason: null, logprobs: null }],
      })}\n\n`);
    }
    // An identity that spells the frame's marker itself is written whole, chunk by chunk.
    const odd = new ChatStreamWriter({ ...identity, model: '\u0000text\u0000' });
    expect(JSON.parse(odd.event({ type: 'text-delta', delta: 'a' }).split('data: ')[2]!)).toMatchObject({ model: '\u0000text\u0000', choices: [{ delta: { content: 'a' } }] });
  });

  it('keeps an error_type the failure already names', () => {
    const last = frames(new ChatStreamWriter(identity).error(400, 'too long', { error_type: 'context_length_exceeded' })).at(-1)!;
    expect(parse(ChatStreamChunk$inboundSchema, last.data).error?.metadata?.errorType).toBe('context_length_exceeded');
  });

  it('names each failure with an error_type the SDK knows', () => {
    const typeOf = (status: number) => (frames(new ChatStreamWriter(identity).error(status, 'x')).at(-1)!.data as { error: { metadata: { error_type: string } } }).error.metadata.error_type;
    expect(Object.fromEntries([400, 401, 402, 403, 404, 408, 413, 422, 429, 500, 502, 503, 529].map((status) => [status, typeOf(status)]))).toEqual({
      400: 'invalid_request', 401: 'authentication', 402: 'payment_required', 403: 'permission_denied', 404: 'not_found', 408: 'timeout',
      413: 'payload_too_large', 422: 'unprocessable', 429: 'rate_limit_exceeded', 500: 'server', 502: 'provider_unavailable',
      503: 'provider_unavailable', 529: 'provider_overloaded',
    });
  });
});

describe('Responses replies parse with @openrouter/sdk', () => {
  const tools = [
    { type: 'function', name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } },
    { type: 'function', name: 'bare' },
  ];
  const echoes: Record<string, Record<string, unknown>> = {
    'a plain request': {},
    'tools, settings and instructions': { tools, tool_choice: { type: 'function', name: 'lookup' }, instructions: 'Be brief.', temperature: 0.5, top_p: 0.9, max_output_tokens: 100, metadata: { a: 'b' }, reasoning: { effort: 'low' } },
    'a JSON schema format': { text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } } },
  };

  it.each(Object.entries(echoes))('response of %s', (_name, body) => {
    for (const result of Object.values(results)) {
      const reply = parse(OpenResponsesResult$inboundSchema, responseResult(identity, echoOf(body), result, responsesUsage(usage, cost, false), 1_700_000_001, { service_metadata: { attempt: 1 } }));
      expect(reply.usage!.costDetails).toEqual({ upstreamInferenceCost: null, upstreamInferenceInputCost: 0.0000069, upstreamInferenceOutputCost: 0.00006 });
    }
  });

  it.each(Object.entries(events))('Responses stream: %s', (_name, stream) => {
    const writer = new ResponsesStreamWriter(identity, echoOf({ tools }));
    const sse = writer.start() + stream.map((event) => writer.event(event)).join('') + writer.finish(stream.at(-1)!.type === 'finish' ? (stream.at(-1) as { finish_reason: 'stop' }).finish_reason : 'stop', responsesUsage(usage, cost, false), 1_700_000_001);
    for (const frame of frames(sse)) {
      const event = parse(StreamEvents$inboundSchema, frame.data);
      expect(event.type).toBe(frame.event);
    }
  });

  it.each([['stop', 'completed', 'response.completed'], ['length', 'incomplete', 'response.incomplete'], ['content_filter', 'incomplete', 'response.incomplete']] as const)(
    'Responses stream finishing with %s: the message item is %s, in its done event and in the final response, as without streaming',
    (finish, itemStatus, last) => {
      for (const text of ['Hel', '']) {
        const writer = new ResponsesStreamWriter(identity, echoOf({}));
        const sse = writer.start() + (text ? writer.event({ type: 'text-delta', delta: text }) : '') + writer.finish(finish, responsesUsage(usage, cost, false), 1_700_000_001);
        const parsed = frames(sse).map((frame) => frame.data as { type: string; item?: { status: string }; response?: { output: Array<{ status: string }> } });
        expect(parsed.filter((event) => event.type === 'response.output_item.done').map((event) => event.item!.status)).toEqual([itemStatus]);
        expect(parsed.at(-1)!.type).toBe(last);
        expect(parsed.at(-1)!.response!.output.map((item) => item.status)).toEqual([itemStatus]);
        const whole = responseResult(identity, {}, { text, tool_calls: [], finish_reason: finish, usage }, responsesUsage(usage, cost, false), 1_700_000_001);
        expect(whole.output.map((item) => (item as { status?: string }).status)).toEqual([itemStatus]);
      }
      // A message closed by a tool call that opened after it: the final response says of it what the buffered reply does.
      const writer = new ResponsesStreamWriter(identity, echoOf({}));
      const sse = writer.start() + writer.event({ type: 'text-delta', delta: 'Let me look.' }) + writer.event({ type: 'tool-call-delta', index: 0, id: 'call_1', name: 'lookup', arguments_delta: '{}' })
        + writer.finish(finish, responsesUsage(usage, cost, false), 1_700_000_001);
      const final = frames(sse).at(-1)!.data as { response: { output: Array<{ type: string; status: string }> } };
      const whole = responseResult(identity, {}, { text: 'Let me look.', tool_calls: [{ id: 'call_1', name: 'lookup', arguments: '{}' }], finish_reason: finish, usage }, responsesUsage(usage, cost, false), 1_700_000_001);
      expect(final.response.output.map((item) => [item.type, item.status])).toEqual(whole.output.map((item) => [item.type, (item as { status?: string }).status]));
    },
  );

  it.each(FAILURES)('Responses stream failing with status %i: error and response.failed parse', (status) => {
    const writer = new ResponsesStreamWriter(identity, echoOf({}));
    const sse = writer.start() + writer.event({ type: 'text-delta', delta: 'Hel' }) + writer.error(status, 'Provider simulator failed');
    const parsed = frames(sse).map((frame) => parse(StreamEvents$inboundSchema, frame.data));
    expect(parsed.map((event) => event.type).slice(-2)).toEqual(['error', 'response.failed']);
    const failed = parsed.at(-1) as Extract<(typeof parsed)[number], { type: 'response.failed' }>;
    expect(failed.response).toMatchObject({ status: 'failed', error: { code: expect.any(String), message: 'Provider simulator failed' }, errorType: expect.any(String) });
    // The message the failure cut off is incomplete, not in progress.
    expect(failed.response.output.map((item) => (item as { status?: string }).status)).toEqual(['incomplete']);
  });
});
