// Inference as `npm start` serves it, driven by unmodified third-party clients: the `openai` package
// (chat, chat streaming, responses, responses streaming) and `@openrouter/sdk` (chat.send, models).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import OpenAI from 'openai';
import { OpenRouter } from '@openrouter/sdk';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';
import { drain, objectOf, streamOf, unknownPaths } from '../support/sdk-shapes.js';
import { generateKeyText } from '../../lambdas/keys/key-format.js';

const ADMIN_KEY = generateKeyText();
let gateway: GatewayProcess;
let userKey: string;
let openai: OpenAI;

beforeAll(async () => {
  gateway = await startGatewayProcess({ GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_UPSTREAM_TIMEOUT_MS: '1500' });
  const admin = new OpenRouter({ apiKey: ADMIN_KEY, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
  userKey = (await admin.apiKeys.create({ requestBody: { name: 'e2e inference' } })).key;
  openai = new OpenAI({ apiKey: userKey, baseURL: gateway.baseUrl, maxRetries: 0 });
}, 90_000);

afterAll(async () => {
  await gateway?.stop();
});

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
});

describe('@openrouter/sdk', () => {
  it('chat.send against simulator/echo', async () => {
    const client = new OpenRouter({ apiKey: userKey, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
    const result = await client.chat.send({ chatRequest: { model: 'simulator/echo', stream: false, messages: [{ role: 'user', content: 'From the OpenRouter SDK' }] } });
    expect('choices' in result && result.choices[0]!.message.content).toBe('From the OpenRouter SDK');
  });

  it('responses.send: the reply parses, with the Responses names of the cost details', async () => {
    const client = new OpenRouter({ apiKey: userKey, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
    const reply = objectOf(await client.responses.send({ responsesRequest: { model: 'simulator/echo', input: 'From responses.send' } }));
    expect(unknownPaths(reply)).toEqual([]);
    expect(reply.outputText).toBe('From responses.send');
    expect(reply.status).toBe('completed');
    expect(reply.usage!.cost).toBeGreaterThan(0);
    expect(reply.usage!.costDetails).toEqual({
      upstreamInferenceCost: null, upstreamInferenceInputCost: expect.any(Number), upstreamInferenceOutputCost: expect.any(Number),
    });
    expect(reply.usage!.costDetails!.upstreamInferenceInputCost + reply.usage!.costDetails!.upstreamInferenceOutputCost).toBeCloseTo(reply.usage!.cost!, 12);
  });

  it('chat.send streaming on a cut stream ends with a typed error chunk', async () => {
    const client = new OpenRouter({ apiKey: userKey, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
    const stream = await client.chat.send({ chatRequest: { model: 'simulator/cut-stream', stream: true, messages: [{ role: 'user', content: 'this reply will be cut off somewhere in the middle' }] } });
    const chunks = await drain(streamOf(stream));
    expect(unknownPaths(chunks)).toEqual([]);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('').length).toBeGreaterThan(0);
    const last = chunks.at(-1)!;
    expect(last.choices[0]!.finishReason).toBe('error');
    expect(last.error).toEqual({ code: 502, message: expect.stringContaining('simulator'), metadata: { errorType: 'provider_unavailable' } });
  });

  it('lists the catalog publicly and per key', async () => {
    const client = new OpenRouter({ apiKey: userKey, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
    const models = await client.models.list();
    const ids = models.result.data.map((model) => model.id);
    expect(ids).toEqual(expect.arrayContaining(['simulator/echo', 'simulator/error-429', 'simulator/error-500', 'simulator/timeout', 'simulator/cut-stream']));
    const echo = models.result.data.find((model) => model.id === 'simulator/echo')!;
    expect(Number(echo.pricing.prompt)).toBeGreaterThan(0);
    const anonymous = await fetch(`${gateway.baseUrl}/models`);
    expect(anonymous.status).toBe(200);
    const mine = await fetch(`${gateway.baseUrl}/models/user`, { headers: { authorization: `Bearer ${userKey}` } });
    expect(((await mine.json()) as { data: unknown[] }).data.length).toBe(ids.length);
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
