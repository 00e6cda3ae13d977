// The request limits of POST /chat/completions and POST /responses (docs/API.md "Inference"), through the real inference
// handler with real deps over DynamoDB Local and the upstream simulator: every limit is rejected with a
// 400 envelope naming the field, and the boundary value next to it is accepted.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { installAwsLambdaShim } from '../../bin/local/awslambda-shim.js';
import { NO_INFERENCE_FOR_MANAGEMENT_MESSAGE } from '../../lambdas/keys/index.js';
import { startSimulator, type Simulator } from '../../bin/simulator/server.js';
import { createTestStore, type TestStore } from '../support/store.js';
import { createTenant } from '../support/tenants.js';
import { httpEvent, type EventInput } from '../support/events.js';

// The handler module wraps itself with middy's streamifyResponse, which needs the Lambda runtime's global.
installAwsLambdaShim();
const { handleInference } = await import('../../lambdas/handlers/inference.js');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

let sim: Simulator;
let store: TestStore;
let key: string;
let managementKey: string;

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
  store = await createTestStore({ SIMULATOR_URL: sim.url, GATEWAY_UPSTREAM_TIMEOUT_MS: '1000', GATEWAY_KEEPALIVE_MS: '200' });
  const tenant = await createTenant(store.deps);
  key = (await tenant.addKey('standard')).text;
  managementKey = (await tenant.addKey('management')).text;
});
afterAll(async () => {
  await store.drop();
  await sim.close();
});

async function send(input: Omit<EventInput, 'method'> & { method?: string }) {
  const reply = await handleInference(httpEvent({ method: 'POST', key, ...input }), store.deps);
  expect(typeof reply.body).toBe('string');
  return { status: reply.statusCode, headers: reply.headers, json: JSON.parse(reply.body as string) as Json };
}

const RESPONSES = '/api/v1/responses';
const CHAT = '/api/v1/chat/completions';
const responsesBody = (extra: Json = {}): Json => ({ model: 'simulator/echo', input: 'ping', ...extra });
const chatBody = (extra: Json = {}): Json => ({ model: 'simulator/echo', messages: [{ role: 'user', content: 'ping' }], ...extra });

/** A 400 with the error envelope whose message names `field` (e.g. "body.temperature"). */
async function expectRejected(path: string, body: Json, field: string, headers?: Record<string, string>): Promise<Json> {
  const reply = await send({ path, body, ...(headers ? { headers } : {}) });
  expect({ status: reply.status, code: reply.json.error?.code }).toEqual({ status: 400, code: 400 });
  expect(typeof reply.json.error.message).toBe('string');
  expect(reply.json.error.message).toContain(field);
  return reply.json;
}

/** A 200 whose reply carries the echoed text: the request went through validation, routing and the simulator. */
async function expectAcceptedResponses(body: Json, headers?: Record<string, string>): Promise<Json> {
  const reply = await send({ path: RESPONSES, body, ...(headers ? { headers } : {}) });
  if (reply.status !== 200) throw new Error(`expected 200, got ${reply.status}: ${JSON.stringify(reply.json)}`);
  expect(reply.json.object).toBe('response');
  expect(reply.json.output_text).toBe(body.input);
  return reply.json;
}

async function expectAcceptedChat(body: Json, headers?: Record<string, string>): Promise<Json> {
  const reply = await send({ path: CHAT, body, ...(headers ? { headers } : {}) });
  if (reply.status !== 200) throw new Error(`expected 200, got ${reply.status}: ${JSON.stringify(reply.json)}`);
  expect(reply.json.object).toBe('chat.completion');
  expect(reply.json.choices[0].message.content).toBe('ping');
  return reply.json;
}

const pairs = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, index) => [`key${index}`, `value${index}`]));
const alignment = (rules: string[]) => ({ plugins: [{ id: 'alignment', rules }] });

describe('POST /responses limits', () => {
  it('rejects a non-null previous_response_id and accepts null', async () => {
    const json = await expectRejected(RESPONSES, responsesBody({ previous_response_id: 'resp_123' }), 'body.previous_response_id');
    expect(json.error.message).toMatch(/not supported/);
    await expectRejected(RESPONSES, responsesBody({ previous_response_id: 0 }), 'body.previous_response_id');
    await expectAcceptedResponses(responsesBody({ previous_response_id: null }));
  });

  it('rejects background true (nothing is stored to poll) and accepts false', async () => {
    const json = await expectRejected(RESPONSES, responsesBody({ background: true }), 'body.background');
    expect(json.error.message).toMatch(/not supported/);
    expect((await expectAcceptedResponses(responsesBody({ background: false }))).background).toBe(false);
  });

  it('rejects store true and accepts store false, and null (as the OpenAI SDK types it) for store and stream', async () => {
    await expectRejected(RESPONSES, responsesBody({ store: true }), 'body.store');
    const accepted = await expectAcceptedResponses(responsesBody({ store: false }));
    expect(accepted.store).toBe(false);
    expect((await expectAcceptedResponses(responsesBody({ store: null, stream: null }))).store).toBe(false);
  });

  it('rejects an empty input list itself, before any provider is asked', async () => {
    const json = await expectRejected(RESPONSES, responsesBody({ input: [] }), 'body.input');
    expect(json.error.message).toMatch(/at least one item/);
    expect(json.error.metadata?.provider_name).toBeUndefined();
  });

  it('limits metadata to 16 pairs, 64-character keys without brackets and 512-character values', async () => {
    await expectRejected(RESPONSES, responsesBody({ metadata: pairs(17) }), 'body.metadata');
    await expectRejected(RESPONSES, responsesBody({ metadata: { ['k'.repeat(65)]: 'v' } }), 'body.metadata');
    await expectRejected(RESPONSES, responsesBody({ metadata: { 'tag[0]': 'v' } }), 'body.metadata');
    await expectRejected(RESPONSES, responsesBody({ metadata: { 'tag]': 'v' } }), 'body.metadata');
    await expectRejected(RESPONSES, responsesBody({ metadata: { note: 'v'.repeat(513) } }), 'body.metadata.note');

    const sixteen = pairs(16);
    expect((await expectAcceptedResponses(responsesBody({ metadata: sixteen }))).metadata).toEqual(sixteen);
    const longKey = { ['k'.repeat(64)]: 'v' };
    expect((await expectAcceptedResponses(responsesBody({ metadata: longKey }))).metadata).toEqual(longKey);
    const longValue = { note: 'v'.repeat(512) };
    expect((await expectAcceptedResponses(responsesBody({ metadata: longValue }))).metadata).toEqual(longValue);
  });

  it('caps max_tool_calls at 30', async () => {
    await expectRejected(RESPONSES, responsesBody({ max_tool_calls: 31 }), 'body.max_tool_calls');
    expect((await expectAcceptedResponses(responsesBody({ max_tool_calls: 30 }))).max_tool_calls).toBe(30);
  });

  it('bounds temperature, top_p, penalties and top_logprobs', async () => {
    await expectRejected(RESPONSES, responsesBody({ temperature: 2.1 }), 'body.temperature');
    await expectRejected(RESPONSES, responsesBody({ temperature: -0.1 }), 'body.temperature');
    await expectRejected(RESPONSES, responsesBody({ top_p: 1.1 }), 'body.top_p');
    for (const field of ['frequency_penalty', 'presence_penalty']) {
      await expectRejected(RESPONSES, responsesBody({ [field]: 2.5 }), `body.${field}`);
      await expectRejected(RESPONSES, responsesBody({ [field]: -2.5 }), `body.${field}`);
    }
    await expectRejected(RESPONSES, responsesBody({ top_logprobs: 21 }), 'body.top_logprobs');
    const accepted = await expectAcceptedResponses(responsesBody({ temperature: 2, top_p: 1, frequency_penalty: -2, presence_penalty: 2, top_logprobs: 20 }));
    expect(accepted).toMatchObject({ temperature: 2, top_p: 1, frequency_penalty: -2, presence_penalty: 2, top_logprobs: 20 });
  });

  it('limits session_id and user to 256 characters', async () => {
    await expectRejected(RESPONSES, responsesBody({ session_id: 's'.repeat(257) }), 'body.session_id');
    await expectRejected(RESPONSES, responsesBody({ user: 'u'.repeat(257) }), 'body.user');
    await expectAcceptedResponses(responsesBody({ session_id: 's'.repeat(256), user: 'u'.repeat(256) }));
  });

  it('accepts only the documented service tiers', async () => {
    const json = await expectRejected(RESPONSES, responsesBody({ service_tier: 'turbo' }), 'body.service_tier');
    expect(json.error.message).toContain('ultrafast');
    // fast is priority; ultrafast falls back to priority on an endpoint without an ultrafast tier.
    expect((await expectAcceptedResponses(responsesBody({ service_tier: 'fast' }))).service_tier).toBe('priority');
    expect((await expectAcceptedResponses(responsesBody({ service_tier: 'ultrafast' }))).service_tier).toBe('priority');
  });

  it('names an unsupported input item type', async () => {
    const json = await expectRejected(RESPONSES, responsesBody({ input: [{ type: 'message', role: 'user', content: 'hi' }, { type: 'web_search_call', id: 'ws_1', status: 'completed' }] }), 'body.input.1');
    expect(json.error.message).toContain('web_search_call');
  });

  it('requires model or models', async () => {
    const json = await expectRejected(RESPONSES, { input: 'ping' }, 'body.model');
    expect(json.error.message).toMatch(/model or models is required/);
  });

  it('rejects an unknown plugin id', async () => {
    const json = await expectRejected(RESPONSES, responsesBody({ plugins: [{ id: 'mind-reader' }] }), 'body.plugins.0.id');
    expect(json.error.message).toContain('alignment');
  });

  it('checks the alignment plugin rules: 1 to 128, each 1 to 200 characters without line breaks', async () => {
    await expectRejected(RESPONSES, responsesBody(alignment([])), 'body.plugins.0.rules');
    await expectRejected(RESPONSES, responsesBody(alignment(Array.from({ length: 129 }, (_, i) => `rule ${i}`))), 'body.plugins.0.rules');
    await expectRejected(RESPONSES, responsesBody(alignment(['r'.repeat(201)])), 'body.plugins.0.rules.0');
    const json = await expectRejected(RESPONSES, responsesBody(alignment(['be kind', 'no\nline breaks'])), 'body.plugins.0.rules.1');
    expect(json.error.message).toMatch(/line breaks/);
    await expectRejected(RESPONSES, responsesBody({ plugins: [{ id: 'alignment', rules: ['be kind'], extra: true }] }), 'body.plugins.0');
    // At the limits the plugin passes validation; the gateway then says it cannot run it (still a 400, but about the plugin).
    const boundary = await expectRejected(RESPONSES, responsesBody(alignment(Array.from({ length: 128 }, () => 'r'.repeat(200)))), 'body.plugins');
    expect(boundary.error.message).toMatch(/"alignment" is not available/);
    expect(boundary.error.message).not.toContain('body.plugins.0');
  });
});

describe('malformed function tools', () => {
  it('are refused naming the field that is wrong, not the tool\'s type', async () => {
    await expectRejected(CHAT, chatBody({ tools: [{ type: 'function', function: {} }] }), 'body.tools.0.function.name');
    await expectRejected(CHAT, chatBody({ tools: [{ type: 'function', function: { name: 'f', parameters: 'x' } }] }), 'body.tools.0.function.parameters');
    await expectRejected(RESPONSES, responsesBody({ tools: [{ type: 'function' }] }), 'body.tools.0.name');
    await expectRejected(RESPONSES, responsesBody({ tools: [{ type: 'function', name: 'f', parameters: 'x' }] }), 'body.tools.0.parameters');
  });
});

describe('POST /chat/completions limits', () => {
  it('bounds temperature, top_p, penalties and top_logprobs', async () => {
    await expectRejected(CHAT, chatBody({ temperature: 2.01 }), 'body.temperature');
    await expectRejected(CHAT, chatBody({ temperature: -0.01 }), 'body.temperature');
    await expectRejected(CHAT, chatBody({ top_p: 1.01 }), 'body.top_p');
    await expectRejected(CHAT, chatBody({ top_p: -0.01 }), 'body.top_p');
    for (const field of ['frequency_penalty', 'presence_penalty']) {
      await expectRejected(CHAT, chatBody({ [field]: 2.5 }), `body.${field}`);
      await expectRejected(CHAT, chatBody({ [field]: -2.5 }), `body.${field}`);
    }
    await expectRejected(CHAT, chatBody({ top_logprobs: 21 }), 'body.top_logprobs');
    await expectAcceptedChat(chatBody({ temperature: 2, top_p: 1, frequency_penalty: 2, presence_penalty: -2, top_logprobs: 20, logprobs: true }));
    await expectAcceptedChat(chatBody({ temperature: 0, top_p: 0, top_logprobs: 0 }));
  });

  it('allows up to 4 stop sequences', async () => {
    await expectRejected(CHAT, chatBody({ stop: ['a1', 'b2', 'c3', 'd4', 'e5'] }), 'body.stop');
    await expectAcceptedChat(chatBody({ stop: ['a1', 'b2', 'c3', 'd4'] }));
  });

  it('limits metadata like /responses', async () => {
    await expectRejected(CHAT, chatBody({ metadata: pairs(17) }), 'body.metadata');
    await expectRejected(CHAT, chatBody({ metadata: { ['k'.repeat(65)]: 'v' } }), 'body.metadata');
    await expectRejected(CHAT, chatBody({ metadata: { 'a[b]': 'v' } }), 'body.metadata');
    await expectRejected(CHAT, chatBody({ metadata: { note: 'v'.repeat(513) } }), 'body.metadata.note');
    await expectAcceptedChat(chatBody({ metadata: { ...pairs(15), ['k'.repeat(64)]: 'v'.repeat(512) } }));
  });

  it('limits session_id and user to 256 characters', async () => {
    await expectRejected(CHAT, chatBody({ session_id: 's'.repeat(257) }), 'body.session_id');
    await expectRejected(CHAT, chatBody({ user: 'u'.repeat(257) }), 'body.user');
    await expectAcceptedChat(chatBody({ session_id: 's'.repeat(256), user: 'u'.repeat(256) }));
  });

  it('rejects reasoning_effort that differs from reasoning.effort and accepts equal values', async () => {
    const json = await expectRejected(CHAT, chatBody({ reasoning_effort: 'high', reasoning: { effort: 'low' } }), 'body.reasoning_effort');
    expect(json.error.message).toContain('low');
    await expectAcceptedChat(chatBody({ reasoning_effort: 'high', reasoning: { effort: 'high' } }));
  });

  it('rejects max_tokens that differs from max_completion_tokens', async () => {
    await expectRejected(CHAT, chatBody({ max_tokens: 10, max_completion_tokens: 20 }), 'body.max_tokens');
    await expectAcceptedChat(chatBody({ max_tokens: 20, max_completion_tokens: 20 }));
  });

  it('sends max_tokens alone upstream as the output limit', async () => {
    const long = 'The quick brown fox jumps over the lazy dog. '.repeat(4);
    const reply = await send({ path: CHAT, body: { model: 'simulator/echo', max_tokens: 1, messages: [{ role: 'user', content: long }] } });
    expect(reply.status).toBe(200);
    expect(reply.json.choices[0].finish_reason).toBe('length');
    expect(reply.json.choices[0].message.content).toBe(long.slice(0, 4));
    expect(reply.json.usage.completion_tokens).toBe(1);

    const unlimited = await send({ path: CHAT, body: { model: 'simulator/echo', messages: [{ role: 'user', content: long }] } });
    expect(unlimited.json.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: long } });
  });

  it('accepts route fallback and rejects anything else', async () => {
    const json = await expectRejected(CHAT, chatBody({ route: 'bogus' }), 'body.route');
    expect(json.error.message).toContain('fallback');
    await expectAcceptedChat(chatBody({ route: 'fallback' }));
  });

  it('requires at least one message, each with a known role', async () => {
    await expectRejected(CHAT, chatBody({ messages: [] }), 'body.messages');
    await expectRejected(CHAT, { model: 'simulator/echo' }, 'body.messages');
    const json = await expectRejected(CHAT, chatBody({ messages: [{ role: 'user', content: 'hi' }, { role: 'wizard', content: 'abracadabra' }] }), 'body.messages.1.role');
    expect(json.error.message).toContain('assistant');
  });

  it('rejects malformed JSON with 400', async () => {
    const reply = await handleInference(httpEvent({ method: 'POST', path: CHAT, key, rawBody: '{"model": "simulator/echo", "messages": [' }), store.deps);
    expect(reply.statusCode).toBe(400);
    const json = JSON.parse(reply.body as string) as Json;
    expect(json.error.code).toBe(400);
    expect(json.error.message).toMatch(/^Malformed JSON body/);
  });

  it('refuses JSON nested deeper than 128 levels with 400, wherever it is (tool schemas, response formats), and takes 128', async () => {
    const nested = (depth: number) => `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
    // The body's own object, the tools list, the tool and its function: 4 levels around the schema.
    const body = (depth: number) => `{"model":"simulator/echo","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"t","parameters":${nested(depth)}}}]}`;
    const deep = await handleInference(httpEvent({ method: 'POST', path: CHAT, key, rawBody: body(5000) }), store.deps);
    expect(deep.statusCode).toBe(400);
    expect((JSON.parse(deep.body as string) as Json).error.message).toBe('JSON body nests objects and arrays more than 128 levels deep');
    const deepFormat = `{"model":"simulator/echo","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":${nested(300)}}}}`;
    expect((await handleInference(httpEvent({ method: 'POST', path: CHAT, key, rawBody: deepFormat }), store.deps)).statusCode).toBe(400);
    // Brackets inside strings are text, not nesting.
    const bracketText = JSON.stringify({ model: 'simulator/echo', messages: [{ role: 'user', content: '['.repeat(5000) }] });
    expect((await handleInference(httpEvent({ method: 'POST', path: CHAT, key, rawBody: bracketText }), store.deps)).statusCode).toBe(200);
    expect((await handleInference(httpEvent({ method: 'POST', path: CHAT, key, rawBody: body(128 - 4) }), store.deps)).statusCode).toBe(200);
    expect((await handleInference(httpEvent({ method: 'POST', path: CHAT, key, rawBody: body(128 - 3) }), store.deps)).statusCode).toBe(400);
  });

  it('rejects a body over 6 MiB with 413', async () => {
    const padding = 'x'.repeat(6 * 1024 * 1024);
    const reply = await handleInference(httpEvent({ method: 'POST', path: CHAT, key, body: chatBody({ messages: [{ role: 'user', content: padding }] }) }), store.deps);
    expect(reply.statusCode).toBe(413);
    const json = JSON.parse(reply.body as string) as Json;
    expect(json.error).toMatchObject({ code: 413, metadata: { limit_bytes: 6 * 1024 * 1024 } });
  });

  it('accepts a body just under 6 MiB', async () => {
    // Far over the default 1 MiB of other routes: the inference routes allow large prompts.
    const text = 'y'.repeat(6 * 1024 * 1024 - 200);
    const reply = await send({ path: CHAT, body: { model: 'simulator/echo', max_tokens: 1, messages: [{ role: 'user', content: text }] } });
    // Not a 413: the whole body was read and parsed. About 1.57 M tokens do not fit the model's 131,072-token
    // context, which is the next check (and the one that names the prompt's size).
    expect(reply.status).toBe(400);
    expect(reply.json.error.metadata).toEqual({ context_length: 131072, requested_tokens: text.length / 4 + 4 + 1, prompt_tokens: text.length / 4 + 4, max_tokens: 1 });
  });
});

describe('x-session-id header', () => {
  it('rejects a header of 257 characters', async () => {
    const json = await expectRejected(CHAT, chatBody(), 'x-session-id', { 'x-session-id': 'h'.repeat(257) });
    expect(json.error.message).toMatch(/256/);
    await expectRejected(RESPONSES, responsesBody(), 'x-session-id', { 'x-session-id': 'h'.repeat(257) });
    await expectAcceptedChat(chatBody(), { 'x-session-id': 'h'.repeat(256) });
  });

  it('lets the body session_id win over the header', async () => {
    await expectAcceptedChat(chatBody({ session_id: 'from-body' }), { 'x-session-id': 'h'.repeat(257) });
    const reply = await send({ path: RESPONSES, body: responsesBody({ session_id: 'from-body' }), headers: { 'x-session-id': 'h'.repeat(300) } });
    expect(reply.status).toBe(200);
    const record = await store.deps.engine.generations.get(reply.json.id as string);
    expect(record?.session_id).toBe('from-body');
  });

  it('uses the header when the body has no session_id', async () => {
    const reply = await send({ path: CHAT, body: chatBody(), headers: { 'x-session-id': 'from-header' } });
    expect(reply.status).toBe(200);
    const record = await store.deps.engine.generations.get(reply.json.id as string);
    expect(record?.session_id).toBe('from-header');
  });
});

describe('authentication on inference routes', () => {
  it('answers 403 to a management key', async () => {
    const reply = await send({ path: CHAT, key: managementKey, body: chatBody() });
    expect(reply).toMatchObject({ status: 403, json: { error: { code: 403, message: NO_INFERENCE_FOR_MANAGEMENT_MESSAGE } } });
    const responses = await send({ path: RESPONSES, key: managementKey, body: responsesBody() });
    expect(responses.status).toBe(403);
  });

  it('answers 401 without a key', async () => {
    const reply = await handleInference(httpEvent({ method: 'POST', path: CHAT, body: chatBody() }), store.deps);
    expect(reply.statusCode).toBe(401);
    expect(JSON.parse(reply.body as string)).toEqual({ error: { code: 401, message: 'Missing Authentication header' } });
  });

  it('authenticates before validating the body', async () => {
    const reply = await handleInference(httpEvent({ method: 'POST', path: CHAT, body: chatBody({ temperature: 9 }) }), store.deps);
    expect(reply.statusCode).toBe(401);
  });
});
