// Inference as `npm start` serves it, driven by unmodified third-party clients: the `openai` package and
// `@openrouter/sdk`, one test per client method the gateway serves (streaming and not), and the typed
// errors each client raises. Every @openrouter/sdk reply is also checked for parts the SDK could not
// read (its unions fall back to "unknown" silently; see test/support/sdk-shapes.ts).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import OpenAI, { APIError, AuthenticationError, BadRequestError, InternalServerError, PermissionDeniedError, RateLimitError } from 'openai';
import { zodResponseFormat, zodTextFormat } from 'openai/helpers/zod';
import * as z from 'zod';
import { OpenRouter } from '@openrouter/sdk';
import {
  BadGatewayResponseError, BadRequestResponseError, ForbiddenResponseError, OpenRouterError, PaymentRequiredResponseError, RequestTimeoutResponseError,
  TooManyRequestsResponseError, UnauthorizedResponseError,
} from '@openrouter/sdk/models/errors';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';
import { drain, objectOf, streamOf, unknownPaths } from '../support/sdk-shapes.js';
import { generateKeyText } from '../../lambdas/keys/key-format.js';

const ADMIN_KEY = generateKeyText();
let gateway: GatewayProcess;
let userKey: string;
/** A key whose limit cannot pay for any request: 402. */
let brokeKey: string;
let openai: OpenAI;
let sdk: OpenRouter;

const tools = [{ type: 'function' as const, function: { name: 'lookup', description: 'Looks things up', parameters: { type: 'object', properties: { echo: { type: 'string' } } } } }];

beforeAll(async () => {
  // A keep-alive interval below the upstream timeout: a stream of simulator/timeout commits to 200 first.
  gateway = await startGatewayProcess({ GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_UPSTREAM_TIMEOUT_MS: '1500', GATEWAY_KEEPALIVE_MS: '1000' });
  const admin = new OpenRouter({ apiKey: ADMIN_KEY, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
  userKey = (await admin.apiKeys.create({ requestBody: { name: 'e2e inference' } })).key;
  brokeKey = (await admin.apiKeys.create({ requestBody: { name: 'e2e broke', limit: 0.000001 } })).key;
  openai = new OpenAI({ apiKey: userKey, baseURL: gateway.baseUrl, maxRetries: 0 });
  sdk = new OpenRouter({ apiKey: userKey, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
}, 150_000);

afterAll(async () => {
  await gateway?.stop();
});

/** What a call rejected with: its class name and HTTP status (undefined when it did not reject). */
async function failure(call: () => Promise<unknown>): Promise<[string | undefined, number | undefined]> {
  const error = await call().then(() => undefined, (err: unknown) => err as { statusCode?: number; status?: number } | undefined);
  return [error?.constructor.name, error?.statusCode ?? error?.status];
}

describe('openai client against simulator/echo', () => {
  it('chat completion', async () => {
    const completion = await openai.chat.completions.create({ model: 'simulator/echo', messages: [{ role: 'user', content: 'Hello, gateway! ✨' }] });
    expect(completion.choices[0]!.message.content).toBe('Hello, gateway! ✨');
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    expect(completion.id).toMatch(/^gen-/);
    expect(completion.usage!.prompt_tokens).toBeGreaterThan(0);
    expect((completion.usage as unknown as { cost: number }).cost).toBeGreaterThan(0);
  });

  it('chat completion streaming, with usage in the last chunk', async () => {
    const stream = await openai.chat.completions.create({ model: 'simulator/echo', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Stream this text back to me, please.' }] });
    let text = '';
    let usage: unknown;
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Stream this text back to me, please.');
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number), cost: expect.any(Number) });
  });

  it('responses', async () => {
    const response = await openai.responses.create({ model: 'simulator/echo', input: 'Reply with exactly this.' });
    expect(response.output_text).toBe('Reply with exactly this.');
    expect(response.status).toBe('completed');
    expect(response.usage?.input_tokens).toBeGreaterThan(0);
  });

  it('responses streaming: the event sequence with increasing sequence numbers', async () => {
    const stream = await openai.responses.create({ model: 'simulator/echo', input: [{ role: 'user', content: 'Stream the responses events.' }], stream: true });
    const types: string[] = [];
    const sequence: number[] = [];
    let text = '';
    let completed: { output_text?: string; usage?: { total_tokens: number } } | undefined;
    for await (const event of stream) {
      types.push(event.type);
      sequence.push(event.sequence_number);
      if (event.type === 'response.output_text.delta') {
        text += event.delta;
        expect(event).toMatchObject({ content_index: 0, output_index: 0, item_id: expect.any(String), logprobs: [] });
      }
      if (event.type === 'response.completed') completed = event.response;
    }
    expect(text).toBe('Stream the responses events.');
    expect(types[0]).toBe('response.created');
    expect(types[1]).toBe('response.in_progress');
    expect(types).toEqual(expect.arrayContaining(['response.output_item.added', 'response.content_part.added', 'response.output_text.done', 'response.content_part.done', 'response.output_item.done']));
    expect(types.at(-1)).toBe('response.completed');
    expect(sequence).toEqual([...sequence].sort((a, b) => a - b));
    expect(new Set(sequence).size).toBe(sequence.length);
    expect(completed?.usage?.total_tokens).toBeGreaterThan(0);
  });

  it('tool calls round-trip through chat', async () => {
    const tools = [{ type: 'function' as const, function: { name: 'lookup', description: 'Looks things up', parameters: { type: 'object', properties: { echo: { type: 'string' } } } } }];
    const first = await openai.chat.completions.create({ model: 'simulator/tool-call', tools, messages: [{ role: 'user', content: 'find cats' }] });
    const call = first.choices[0]!.message.tool_calls![0]!;
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    expect(call).toMatchObject({ type: 'function', function: { name: 'lookup' } });
    expect(JSON.parse((call as { function: { arguments: string } }).function.arguments)).toEqual({ echo: 'find cats' });
  });

  it('structured output through an Anthropic endpoint (a forced tool): chat.completions.parse, streamed too, and responses.parse', async () => {
    const Echo = z.object({ echo: z.string() });
    const parsed = await openai.chat.completions.parse({ model: 'simulator/echo-anthropic', messages: [{ role: 'user', content: 'structured please' }], response_format: zodResponseFormat(Echo, 'echo') });
    expect(parsed.choices[0]!.message.parsed).toEqual({ echo: 'structured please' });
    expect(parsed.choices[0]!.message.tool_calls ?? []).toEqual([]);
    expect(parsed.choices[0]!.finish_reason).toBe('stop');
    const json = await openai.chat.completions.create({ model: 'simulator/echo-anthropic', messages: [{ role: 'user', content: 'any object' }], response_format: { type: 'json_object' } });
    expect(JSON.parse(json.choices[0]!.message.content!)).toEqual({ echo: 'any object' });
    const stream = openai.chat.completions.stream({ model: 'simulator/echo-anthropic', messages: [{ role: 'user', content: 'streamed structure' }], response_format: zodResponseFormat(Echo, 'echo') });
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]!.message.parsed).toEqual({ echo: 'streamed structure' });
    const response = await openai.responses.parse({ model: 'simulator/echo-anthropic', input: 'responses structure', text: { format: zodTextFormat(Echo, 'echo') } });
    expect(response.output_parsed).toEqual({ echo: 'responses structure' });
  });

  it('chat.completions.stream: the helper accumulates the final completion, tool calls included', async () => {
    const stream = openai.chat.completions.stream({ model: 'simulator/tool-call', tools, messages: [{ role: 'user', content: 'stream cats' }] });
    const completion = await stream.finalChatCompletion();
    expect(completion.choices[0]!.finish_reason).toBe('tool_calls');
    expect(completion.choices[0]!.message.tool_calls![0]).toMatchObject({ type: 'function', function: { name: 'lookup', arguments: '{"echo":"stream cats"}' } });
    const text = await openai.chat.completions.stream({ model: 'simulator/echo', messages: [{ role: 'user', content: 'helper text' }] }).finalContent();
    expect(text).toBe('helper text');
  });

  it('responses.stream: the helper accumulates the final response', async () => {
    const response = await openai.responses.stream({ model: 'simulator/echo', input: 'helper response' }).finalResponse();
    expect(response.output_text).toBe('helper response');
    expect(response.status).toBe('completed');
  });

  it('responses with a function tool', async () => {
    const response = await openai.responses.create({ model: 'simulator/tool-call', input: 'find dogs', tools: [{ type: 'function', name: 'lookup', parameters: tools[0]!.function.parameters, strict: false }] });
    const call = response.output.find((item) => item.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'lookup', arguments: '{"echo":"find dogs"}', call_id: expect.any(String) });
  });

  it('models.list pages through the catalog', async () => {
    const ids: string[] = [];
    for await (const model of openai.models.list()) ids.push(model.id);
    expect(ids).toEqual(expect.arrayContaining(['simulator/echo', 'simulator/tool-call', 'simulator/cut-stream']));
  });

  it('raises its typed errors: 400, 401, 402, 403, 429 and 502', async () => {
    const broke = new OpenAI({ apiKey: brokeKey, baseURL: gateway.baseUrl, maxRetries: 0 });
    const stranger = new OpenAI({ apiKey: generateKeyText(), baseURL: gateway.baseUrl, maxRetries: 0 });
    const admin = new OpenAI({ apiKey: ADMIN_KEY, baseURL: gateway.baseUrl, maxRetries: 0 });
    const hello = [{ role: 'user' as const, content: 'Hello' }];
    const outcomes = await Promise.all([
      failure(() => openai.chat.completions.create({ model: 'simulator/echo', messages: [] })),
      failure(() => openai.responses.create({ model: 'simulator/echo', input: 'x', temperature: 7 })),
      failure(() => stranger.chat.completions.create({ model: 'simulator/echo', messages: hello })),
      failure(() => broke.chat.completions.create({ model: 'simulator/echo', max_tokens: 1000, messages: hello })),
      failure(() => broke.responses.create({ model: 'simulator/echo', max_output_tokens: 1000, input: 'Hello' })),
      failure(() => admin.responses.create({ model: 'simulator/echo', input: 'Hello' })),
      failure(() => openai.chat.completions.create({ model: 'simulator/error-429', messages: hello })),
      failure(() => openai.responses.create({ model: 'simulator/error-500', input: 'Hello' })),
    ]);
    expect(outcomes).toEqual([
      [BadRequestError.name, 400], [BadRequestError.name, 400], [AuthenticationError.name, 401], [APIError.name, 402], [APIError.name, 402],
      [PermissionDeniedError.name, 403], [RateLimitError.name, 429], [InternalServerError.name, 502],
    ]);
  });

  it('responses streaming on a cut stream: an error event, then response.failed', async () => {
    const stream = await openai.responses.create({ model: 'simulator/cut-stream', input: 'this reply will be cut off somewhere in the middle', stream: true });
    const events = await drain(stream);
    expect(events.map((event) => event.type).slice(-2)).toEqual(['error', 'response.failed']);
    const failed = events.at(-1) as Extract<(typeof events)[number], { type: 'response.failed' }>;
    expect(failed.response).toMatchObject({ status: 'failed', error: { code: 'server_error', message: expect.stringContaining('simulator') } });
  });
});

describe('@openrouter/sdk', () => {
  it('chat.send', async () => {
    const result = objectOf(await sdk.chat.send({ chatRequest: { model: 'simulator/echo', stream: false, messages: [{ role: 'user', content: 'From the OpenRouter SDK' }] } }));
    expect(unknownPaths(result)).toEqual([]);
    expect(result.choices[0]!.message.content).toBe('From the OpenRouter SDK');
    expect(result.usage!.costDetails).toEqual({ upstreamInferenceCost: null, upstreamInferencePromptCost: expect.any(Number), upstreamInferenceCompletionsCost: expect.any(Number) });
  });

  it('chat.send with a tool', async () => {
    const result = objectOf(await sdk.chat.send({ chatRequest: { model: 'simulator/tool-call', tools, messages: [{ role: 'user', content: 'find cats' }] } }));
    expect(unknownPaths(result)).toEqual([]);
    expect(result.choices[0]!.finishReason).toBe('tool_calls');
    expect(result.choices[0]!.message.toolCalls![0]).toMatchObject({ type: 'function', function: { name: 'lookup', arguments: '{"echo":"find cats"}' } });
  });

  it('chat.send streaming: every chunk parses, usage last', async () => {
    const chunks = await drain(streamOf(await sdk.chat.send({ chatRequest: { model: 'simulator/echo', stream: true, messages: [{ role: 'user', content: 'Stream through the SDK.' }] } })));
    expect(unknownPaths(chunks)).toEqual([]);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('Stream through the SDK.');
    expect(chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.finishReason)).filter(Boolean)).toEqual(['stop']);
    expect(chunks.at(-1)!.usage).toMatchObject({ promptTokens: expect.any(Number), completionTokens: expect.any(Number), cost: expect.any(Number), isByok: false });
  });

  it('debug.echo_upstream_body: a chat stream opens with a chunk without choices that shows the body sent upstream', async () => {
    const reply = await fetch(`${gateway.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${userKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'simulator/echo', stream: true, debug: { echo_upstream_body: true }, messages: [{ role: 'user', content: 'Show the upstream body.' }] }),
    });
    const chunks = (await reply.text()).split('\n').filter((line) => line.startsWith('data: {')).map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
    expect(chunks[0]).toMatchObject({ object: 'chat.completion.chunk', choices: [], debug: { echo_upstream_body: { model: 'echo', stream: true, messages: [{ role: 'user', content: 'Show the upstream body.' }] } } });
    expect(chunks.slice(1).some((chunk) => 'debug' in chunk)).toBe(false);
    // It parses with the SDK too, and without the flag (or without streaming) there is none.
    const viaSdk = await drain(streamOf(await sdk.chat.send({ chatRequest: { model: 'simulator/echo', stream: true, debug: { echoUpstreamBody: true }, messages: [{ role: 'user', content: 'x' }] } })));
    expect(viaSdk[0]!.choices).toEqual([]);
    const plain = await fetch(`${gateway.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${userKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'simulator/echo', stream: true, messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(await plain.text()).not.toContain('echo_upstream_body');
  });

  it('chat.send streaming on a cut stream ends with a typed error chunk', async () => {
    const stream = await sdk.chat.send({ chatRequest: { model: 'simulator/cut-stream', stream: true, messages: [{ role: 'user', content: 'this reply will be cut off somewhere in the middle' }] } });
    const chunks = await drain(streamOf(stream));
    expect(unknownPaths(chunks)).toEqual([]);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('').length).toBeGreaterThan(0);
    const last = chunks.at(-1)!;
    expect(last.choices[0]!.finishReason).toBe('error');
    expect(last.error).toEqual({ code: 502, message: expect.stringContaining('simulator'), metadata: { errorType: 'provider_unavailable' } });
  });

  it('responses.send: the reply parses, with the Responses names of the cost details', async () => {
    const reply = objectOf(await sdk.responses.send({ responsesRequest: { model: 'simulator/echo', input: 'From responses.send' } }));
    expect(unknownPaths(reply)).toEqual([]);
    expect(reply.outputText).toBe('From responses.send');
    expect(reply.status).toBe('completed');
    expect(reply.usage!.cost).toBeGreaterThan(0);
    expect(reply.usage!.costDetails).toEqual({
      upstreamInferenceCost: null, upstreamInferenceInputCost: expect.any(Number), upstreamInferenceOutputCost: expect.any(Number),
    });
    expect(reply.usage!.costDetails!.upstreamInferenceInputCost + reply.usage!.costDetails!.upstreamInferenceOutputCost).toBeCloseTo(reply.usage!.cost!, 12);
  });

  it('responses.send with a tool, and beta.responses.send (its deprecated alias)', async () => {
    const reply = objectOf(await sdk.responses.send({ responsesRequest: { model: 'simulator/tool-call', input: 'find dogs', tools: [{ type: 'function', name: 'lookup', parameters: null }] } }));
    expect(unknownPaths(reply)).toEqual([]);
    expect(reply.output).toEqual([expect.objectContaining({ type: 'function_call', name: 'lookup', arguments: '{"echo":"find dogs"}' })]);
    const beta = objectOf(await sdk.beta.responses.send({ responsesRequest: { model: 'simulator/echo', input: 'beta' } }));
    expect(unknownPaths(beta)).toEqual([]);
    expect(beta.outputText).toBe('beta');
  });

  it('responses.send streaming: every event parses, response.completed last with its usage', async () => {
    const events = await drain(streamOf(await sdk.responses.send({ responsesRequest: { model: 'simulator/echo', input: 'Stream the events.', stream: true } })));
    expect(unknownPaths(events)).toEqual([]);
    expect(events.map((event) => event.type)).toEqual([
      'response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added',
      ...events.filter((event) => event.type === 'response.output_text.delta').map(() => 'response.output_text.delta'),
      'response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed',
    ]);
    const completed = events.at(-1) as Extract<(typeof events)[number], { type: 'response.completed' }>;
    expect(completed.response.outputText).toBe('Stream the events.');
    expect(completed.response.usage!.costDetails).toMatchObject({ upstreamInferenceInputCost: expect.any(Number), upstreamInferenceOutputCost: expect.any(Number) });
  });

  it('debug.echo_upstream_body: a Responses stream opens with response.debug, the body sent upstream (it parses)', async () => {
    const events = await drain(streamOf(await sdk.responses.send({ responsesRequest: { model: 'simulator/echo', input: 'Show the upstream body.', stream: true, debug: { echoUpstreamBody: true } } as never })));
    expect(unknownPaths(events)).toEqual([]);
    expect(events.map((event) => event.type).slice(0, 2)).toEqual(['response.debug', 'response.created']);
    const debug = events[0] as Extract<(typeof events)[number], { type: 'response.debug' }>;
    // The simulator's endpoint speaks OpenAI chat: the body is the translated request, with the upstream model.
    expect(debug.debug.echoUpstreamBody).toMatchObject({ model: 'echo', stream: true, messages: [{ role: 'user', content: 'Show the upstream body.' }] });
    expect(events.map((event) => (event as { sequenceNumber?: number }).sequenceNumber)).toEqual(events.map((_event, index) => index));
  });

  it('responses.send streaming on a cut stream: error and response.failed parse', async () => {
    const events = await drain(streamOf(await sdk.responses.send({ responsesRequest: { model: 'simulator/cut-stream', input: 'this reply will be cut off somewhere in the middle', stream: true } })));
    expect(unknownPaths(events)).toEqual([]);
    expect(events.map((event) => event.type).slice(-2)).toEqual(['error', 'response.failed']);
    const failed = events.at(-1) as Extract<(typeof events)[number], { type: 'response.failed' }>;
    expect(failed.response).toMatchObject({ status: 'failed', errorType: 'provider_unavailable', error: { code: 'server_error', message: expect.stringContaining('simulator') } });
  });

  it('a stream committed by a keep-alive reports the provider\'s timeout as a typed error event', async () => {
    const hello = [{ role: 'user' as const, content: 'Hello' }];
    const [chunks, events] = await Promise.all([
      sdk.chat.send({ chatRequest: { model: 'simulator/timeout', stream: true, messages: hello } }).then((reply) => drain(streamOf(reply))),
      sdk.responses.send({ responsesRequest: { model: 'simulator/timeout', stream: true, input: 'Hello' } }).then((reply) => drain(streamOf(reply))),
    ]);
    expect(unknownPaths([chunks, events])).toEqual([]);
    expect(chunks.at(-1)).toMatchObject({ choices: [{ finishReason: 'error' }], error: { code: 408, message: expect.stringContaining('timed out'), metadata: { errorType: 'timeout' } } });
    expect(events.map((event) => event.type)).toEqual(['response.created', 'response.in_progress', 'error', 'response.failed']);
    expect(events.at(-1)).toMatchObject({ response: { status: 'failed', errorType: 'timeout' } });
  });

  it('callModel: text, and a failed stream surfaces as an error', async () => {
    expect(await sdk.callModel({ model: 'simulator/echo', input: 'called through callModel' }).getText()).toBe('called through callModel');
    await expect(sdk.callModel({ model: 'simulator/cut-stream', input: 'this reply will be cut off somewhere in the middle' }).getText()).rejects.toThrow(/Response failed/);
  });

  it('models.list and models.listForUser', async () => {
    const models = await sdk.models.list();
    expect(unknownPaths(models)).toEqual([]);
    const ids = models.result.data.map((model) => model.id);
    expect(ids).toEqual(expect.arrayContaining(['simulator/echo', 'simulator/error-429', 'simulator/error-500', 'simulator/timeout', 'simulator/cut-stream']));
    const echo = models.result.data.find((model) => model.id === 'simulator/echo')!;
    expect(Number(echo.pricing.prompt)).toBeGreaterThan(0);
    const anonymous = await new OpenRouter({ serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } }).models.list();
    expect(anonymous.result.data.map((model) => model.id)).toEqual(ids);
    const mine = await sdk.models.listForUser({ bearer: userKey });
    expect(unknownPaths(mine)).toEqual([]);
    expect(mine.result.data.map((model) => model.id).sort()).toEqual([...ids].sort());
    // The SDK pages by offset and limit, asking for the next page while a page is full.
    const paged: string[][] = [];
    for await (const page of await sdk.models.list({ limit: 4 })) paged.push(page.result.data.map((model) => model.id));
    expect(paged.flat()).toEqual(ids);
  });

  it('raises its typed errors: 400, 401, 402, 403, 408, 429 and 502', async () => {
    const broke = new OpenRouter({ apiKey: brokeKey, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
    const stranger = new OpenRouter({ apiKey: generateKeyText(), serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
    const admin = new OpenRouter({ apiKey: ADMIN_KEY, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
    const hello = [{ role: 'user' as const, content: 'Hello' }];
    const cases: Array<[() => Promise<unknown>, new (...args: never[]) => OpenRouterError, number]> = [
      [() => sdk.chat.send({ chatRequest: { model: 'simulator/echo', messages: [] } }), BadRequestResponseError, 400],
      [() => sdk.chat.send({ chatRequest: { model: 'no-such/model', messages: hello } }), BadRequestResponseError, 400],
      [() => sdk.responses.send({ responsesRequest: { model: 'simulator/echo', input: 'x', temperature: 7 } }), BadRequestResponseError, 400],
      [() => stranger.chat.send({ chatRequest: { model: 'simulator/echo', messages: hello } }), UnauthorizedResponseError, 401],
      [() => stranger.responses.send({ responsesRequest: { model: 'simulator/echo', input: 'Hello', stream: true } }), UnauthorizedResponseError, 401],
      [() => broke.chat.send({ chatRequest: { model: 'simulator/echo', maxTokens: 1000, messages: hello } }), PaymentRequiredResponseError, 402],
      [() => broke.chat.send({ chatRequest: { model: 'simulator/echo', maxTokens: 1000, messages: hello, stream: true } }), PaymentRequiredResponseError, 402],
      [() => broke.responses.send({ responsesRequest: { model: 'simulator/echo', maxOutputTokens: 1000, input: 'Hello' } }), PaymentRequiredResponseError, 402],
      [() => admin.chat.send({ chatRequest: { model: 'simulator/echo', messages: hello } }), ForbiddenResponseError, 403],
      [() => sdk.chat.send({ chatRequest: { model: 'simulator/timeout', messages: hello } }), RequestTimeoutResponseError, 408],
      [() => sdk.chat.send({ chatRequest: { model: 'simulator/error-429', messages: hello } }), TooManyRequestsResponseError, 429],
      [() => sdk.responses.send({ responsesRequest: { model: 'simulator/error-429', input: 'Hello' } }), TooManyRequestsResponseError, 429],
      [() => sdk.chat.send({ chatRequest: { model: 'simulator/error-500', messages: hello, stream: true } }), BadGatewayResponseError, 502],
      [() => sdk.responses.send({ responsesRequest: { model: 'simulator/error-500', input: 'Hello' } }), BadGatewayResponseError, 502],
    ];
    const outcomes = await Promise.all(cases.map(([call]) => failure(call)));
    expect(outcomes).toEqual(cases.map(([, type, status]) => [type.name, status]));
  });
});

describe('routing and failures', () => {
  it('a fallback list [error-500, echo] answers from echo', async () => {
    const completion = await openai.chat.completions.create({
      model: 'simulator/error-500', messages: [{ role: 'user', content: 'fall back please' }],
      // @ts-expect-error: gateway extension
      models: ['simulator/error-500', 'simulator/echo'],
    });
    expect(completion.choices[0]!.message.content).toBe('fall back please');
    expect(completion.model).toBe('simulator/echo');
  });

  it('simulator/error-429 alone returns a 429 envelope', async () => {
    const reply = await fetch(`${gateway.baseUrl}/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${userKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'simulator/error-429', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(reply.status).toBe(429);
    expect(reply.headers.get('retry-after')).toBe('1');
    expect(await reply.json()).toMatchObject({ error: { code: 429, message: expect.stringContaining('429') } });
  });

  it('a cut stream ends with an error event, not a clean end', async () => {
    const stream = await openai.chat.completions.create({ model: 'simulator/cut-stream', stream: true, messages: [{ role: 'user', content: 'this reply will be cut off somewhere in the middle' }] });
    const seen: string[] = [];
    await expect((async () => {
      for await (const chunk of stream) seen.push(chunk.choices[0]?.delta.content ?? '');
    })()).rejects.toThrow(/simulator/);
    expect(seen.join('').length).toBeGreaterThan(0);

    const raw = await fetch(`${gateway.baseUrl}/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${userKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'simulator/cut-stream', stream: true, messages: [{ role: 'user', content: 'this reply will be cut off somewhere in the middle' }] }),
    });
    const text = await raw.text();
    expect(text).toContain('"finish_reason":"error"');
    expect(text).not.toContain('[DONE]');
  });

  it('a management key cannot call inference', async () => {
    const admin = new OpenAI({ apiKey: ADMIN_KEY, baseURL: gateway.baseUrl, maxRetries: 0 });
    await expect(admin.chat.completions.create({ model: 'simulator/echo', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ status: 403 });
  });

  it('simulator/timeout times out with 408 and the gateway keeps serving', async () => {
    const started = Date.now();
    await expect(openai.chat.completions.create({ model: 'simulator/timeout', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ status: 408 });
    expect(Date.now() - started).toBeLessThan(10_000);
    const completion = await openai.chat.completions.create({ model: 'simulator/echo', messages: [{ role: 'user', content: 'still here' }] });
    expect(completion.choices[0]!.message.content).toBe('still here');
  });
});
