// POST /messages as `npm start` serves it, driven by Anthropic's own SDK (x-api-key and Bearer auth,
// streaming and not, tools, typed errors), and a `/v1/messages` batch whose results are Anthropic messages.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Anthropic from '@anthropic-ai/sdk';
import { OpenRouter } from '@openrouter/sdk';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';
import { resultsById, runInlineBatch } from '../support/batches.js';
import { generateKeyText } from '../../lambdas/keys/key-format.js';

const ADMIN_KEY = generateKeyText();
let gateway: GatewayProcess;
let userKey: string;
let anthropic: Anthropic;

beforeAll(async () => {
  gateway = await startGatewayProcess({ GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_UPSTREAM_TIMEOUT_MS: '1500' });
  const admin = new OpenRouter({ apiKey: ADMIN_KEY, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
  userKey = (await admin.apiKeys.create({ requestBody: { name: 'e2e messages' } })).key;
  // The SDK appends /v1/messages to its base URL.
  anthropic = new Anthropic({ apiKey: userKey, baseURL: gateway.baseUrl.replace(/\/v1$/, ''), maxRetries: 0 });
}, 150_000);

afterAll(async () => {
  await gateway?.stop();
});

describe('Anthropic SDK against POST /messages', () => {
  it('messages.create: an Anthropic message with usage and the gateway\'s cost', async () => {
    const message = await anthropic.messages.create({
      model: 'simulator/echo', max_tokens: 64, system: 'Be brief.', messages: [{ role: 'user', content: 'Hello through Messages ✨' }],
    });
    expect(message.type).toBe('message');
    expect(message.role).toBe('assistant');
    expect(message.id).toMatch(/^gen-/);
    expect(message.content).toEqual([{ type: 'text', text: 'Hello through Messages ✨' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    expect((message.usage as unknown as { cost: number }).cost).toBeGreaterThan(0);
  });

  it('messages.stream: the events accumulate to the same message, stop reason and usage at the end', async () => {
    const stream = anthropic.messages.stream({ model: 'simulator/echo', max_tokens: 64, messages: [{ role: 'user', content: 'Stream this back, please.' }] });
    const types: string[] = [];
    let text = '';
    let startTokens: number | undefined;
    stream.on('streamEvent', (event) => {
      types.push(event.type);
      if (event.type === 'message_start') startTokens = event.message.usage.input_tokens;
    });
    stream.on('text', (delta) => { text += delta; });
    const message = await stream.finalMessage();
    expect(text).toBe('Stream this back, please.');
    expect(message.content).toEqual([{ type: 'text', text: 'Stream this back, please.' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    expect(types[0]).toBe('message_start');
    // message_start counts the prompt (an estimate there; message_delta carries the provider's count), as
    // clients that read input tokens only from it (LangChain) need.
    expect(startTokens).toBeGreaterThan(0);
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(types.at(-1)).toBe('message_stop');
    expect(types).toContain('content_block_delta');
  });

  it('a tool round trip: tool_use out, tool_result back', async () => {
    const tools = [{ name: 'lookup', description: 'Looks things up', input_schema: { type: 'object' as const, properties: { echo: { type: 'string' } } } }];
    const first = await anthropic.messages.create({
      model: 'simulator/tool-call', max_tokens: 64, tools, messages: [{ role: 'user', content: 'find it' }],
    });
    expect(first.stop_reason).toBe('tool_use');
    const call = first.content.find((block) => block.type === 'tool_use');
    expect(call).toMatchObject({ type: 'tool_use', name: 'lookup', input: expect.any(Object) });
    const second = await anthropic.messages.create({
      model: 'simulator/echo', max_tokens: 64, tools,
      messages: [
        { role: 'user', content: 'find it' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: (call as { id: string }).id, content: 'found it' }, { type: 'text', text: 'thanks' }] },
      ],
    });
    expect(second.content[0]).toMatchObject({ type: 'text' });
  });

  it('a Bearer token (the SDK\'s authToken) works as well as x-api-key', async () => {
    const bearer = new Anthropic({ authToken: userKey, apiKey: null, baseURL: gateway.baseUrl.replace(/\/v1$/, ''), maxRetries: 0 });
    const message = await bearer.messages.create({ model: 'simulator/echo', max_tokens: 16, messages: [{ role: 'user', content: 'ok' }] });
    expect(message.content).toEqual([{ type: 'text', text: 'ok' }]);
  });

  it('raises the SDK\'s typed errors: 400, 401 and 429', async () => {
    await expect(anthropic.messages.create({ model: 'simulator/echo', max_tokens: 16, messages: [] })).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    const stranger = new Anthropic({ apiKey: generateKeyText(), baseURL: gateway.baseUrl.replace(/\/v1$/, ''), maxRetries: 0 });
    await expect(stranger.messages.create({ model: 'simulator/echo', max_tokens: 16, messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    await expect(anthropic.messages.create({ model: 'simulator/error-429', max_tokens: 16, messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(Anthropic.RateLimitError);
  });

  it('answers errors in Anthropic\'s envelope (the SDK\'s error type and our message), with the code other clients read', async () => {
    const limited = await anthropic.messages.create({ model: 'simulator/error-429', max_tokens: 16, messages: [{ role: 'user', content: 'x' }] }).catch((err: unknown) => err);
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect((limited as InstanceType<typeof Anthropic.APIError>).type).toBe('rate_limit_error');
    expect((limited as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error', code: 429, message: expect.stringContaining('simulator') } });
    const invalid = await anthropic.messages.create({ model: 'simulator/echo', max_tokens: 16, messages: [] }).catch((err: unknown) => err);
    expect((invalid as InstanceType<typeof Anthropic.APIError>).type).toBe('invalid_request_error');
    expect((invalid as InstanceType<typeof Anthropic.APIError>).message).toContain('messages');
    // Before the first byte of a stream, the same envelope.
    const streamed = await anthropic.messages.create({ model: 'simulator/error-429', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'x' }] }).catch((err: unknown) => err);
    expect((streamed as InstanceType<typeof Anthropic.APIError>).type).toBe('rate_limit_error');
    // Other routes keep the OpenRouter envelope.
    const chat = await fetch(`${gateway.baseUrl}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${userKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'simulator/echo', messages: [] }) });
    const body = await chat.json() as Record<string, unknown>;
    expect(body.type).toBeUndefined();
    expect(body.error).toEqual(expect.not.objectContaining({ type: expect.anything() }));
  });
});

describe('a /v1/messages batch', () => {
  it('runs Anthropic Messages items and answers each with an Anthropic message', async () => {
    const batch = await runInlineBatch(gateway.baseUrl, userKey, {
      endpoint: '/v1/messages',
      model: 'simulator/echo',
      requests: [
        { custom_id: 'm-1', body: { max_tokens: 32, system: 'Echo.', messages: [{ role: 'user', content: 'first message' }] } },
        { custom_id: 'm-2', body: { max_tokens: 32, messages: [{ role: 'user', content: [{ type: 'text', text: 'second message' }] }] } },
        { custom_id: 'm-bad', body: { max_tokens: 32, messages: [{ role: 'system', content: 'not a Messages role' }] } },
      ],
    });
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });
    const byId = resultsById(batch);
    for (const [customId, text] of [['m-1', 'first message'], ['m-2', 'second message']] as const) {
      expect(byId[customId].response.status_code).toBe(200);
      expect(byId[customId].response.body).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'text', text }], stop_reason: 'end_turn' });
    }
    expect(byId['m-bad']).toMatchObject({ response: null, error: { error_type: 'invalid_body', param: 'body.messages.0.role' } });
  }, 40_000);
});
