// Routing, retries, fallbacks, stickiness, generation records and stream failures, through the real
// inference handler with real deps over DynamoDB Local and the upstream simulator.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { installAwsLambdaShim } from '../../bin/local/awslambda-shim.js';
import { startSimulator, type Simulator } from '../../bin/simulator/server.js';
import type { CatalogFile } from '../../lambdas/catalog/catalog-config.js';
import { usdToNanos } from '../../lambdas/platform/money.js';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../lambdas/platform/dynamo/client.js';
import { itemKeys } from '../../lambdas/platform/dynamo/item-keys.js';
import { createTestStore, type TestStore } from '../support/store.js';
import { createTenant } from '../support/tenants.js';
import { httpEvent } from '../support/events.js';
import { seeded } from '../support/random.js';

// The handler module wraps itself with middy's streamifyResponse, which needs the Lambda runtime's global.
installAwsLambdaShim();
const { handleInference } = await import('../../lambdas/handlers/inference.js');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

const TIMEOUT_MS = 1_000;
const CHAT = '/api/v1/chat/completions';
const RESPONSES = '/api/v1/responses';

let sim: Simulator;
let store: TestStore;
let key: string;
let catalogDir: string;

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
  catalogDir = mkdtempSync(join(tmpdir(), 'gateway-catalog-'));
  // One model served by two providers that are both the simulator's echo: which one answered shows in `provider`.
  const twoProviders: CatalogFile = {
    models: [{
      id: 'sticky/echo',
      endpoints: ['sim-a', 'sim-b'].map((provider) => ({
        provider,
        adapter: 'openai-chat' as const,
        base_url: `${sim.url}/v1`,
        upstream_model: 'echo',
        pricing: { prompt: '0.000001', completion: '0.000002' },
        context_length: 8192,
      })),
    }, {
      // The cheaper endpoint has the shorter context: long prompts must go to the other one.
      id: 'context/echo',
      endpoints: [['sim-short', 1000, '0.0000001'], ['sim-long', 8192, '0.000001']].map(([provider, context, price]) => ({
        provider: provider as string,
        adapter: 'openai-chat' as const,
        base_url: `${sim.url}/v1`,
        upstream_model: 'echo',
        pricing: { prompt: price as string, completion: price as string },
        context_length: context as number,
      })),
    }],
  };
  const catalogFile = join(catalogDir, 'catalog.json');
  writeFileSync(catalogFile, JSON.stringify(twoProviders));
  store = await createTestStore({
    SIMULATOR_URL: sim.url, GATEWAY_CATALOG_FILE: catalogFile, GATEWAY_UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS), GATEWAY_KEEPALIVE_MS: '200',
  });
  store.deps.engine.random = seeded(2026);
  const tenant = await createTenant(store.deps);
  key = (await tenant.addKey('standard')).text;
});
afterAll(async () => {
  await store.drop();
  await sim.close();
  rmSync(catalogDir, { recursive: true, force: true });
});

async function send(path: string, body: Json, headers: Record<string, string> = {}) {
  const reply = await handleInference(httpEvent({ method: 'POST', path, key, body, headers }), store.deps);
  return reply;
}

async function sendJson(path: string, body: Json, headers: Record<string, string> = {}) {
  const reply = await send(path, body, headers);
  expect(typeof reply.body).toBe('string');
  return { status: reply.statusCode, headers: reply.headers, json: JSON.parse(reply.body as string) as Json };
}

async function readBody(body: string | Readable): Promise<string> {
  if (typeof body === 'string') return body;
  let text = '';
  for await (const chunk of body) text += String(chunk);
  return text;
}

/** The `data:` payloads of an SSE body, in order (comments such as keep-alives skipped). */
function dataFrames(text: string): string[] {
  return text.split('\n\n').flatMap((block) => block.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)));
}

const chat = (model: string | string[], extra: Json = {}): Json => ({
  ...(Array.isArray(model) ? { models: model } : { model }),
  messages: [{ role: 'user', content: 'ping' }],
  ...extra,
});
const METADATA = { 'X-Service-Metadata': 'enabled' };

describe('fallbacks and retries', () => {
  it('falls back from a failing model to the next one and reports it in service_metadata', async () => {
    const reply = await sendJson(CHAT, chat(['simulator/error-500', 'simulator/echo']), METADATA);
    expect(reply.status).toBe(200);
    expect(reply.json.model).toBe('simulator/echo');
    expect(reply.json.choices[0].message.content).toBe('ping');
    const metadata = reply.json.service_metadata;
    // error-500 is tried twice (attemptsPerEndpoint), then echo answers.
    expect(metadata.attempt).toBe(3);
    expect(metadata.strategy).toBe('fallback');
    expect(metadata.requested).toBe('simulator/error-500,simulator/echo');
    expect(metadata.endpoints).toEqual({
      available: [
        { model: 'simulator/error-500', provider: 'simulator', selected: false },
        { model: 'simulator/echo', provider: 'simulator', selected: true },
      ],
      total: 2,
    });
    expect(metadata.summary).toContain('simulator 500');
    const record = await store.deps.engine.generations.get(reply.json.id as string);
    expect(record).toMatchObject({ model: 'simulator/echo', status: 'completed', attempts: 3 });
  });

  it('answers 429 with the envelope and a retry-after header when the only model is rate limited', async () => {
    const started = Date.now();
    const reply = await sendJson(CHAT, chat('simulator/error-429'));
    expect(reply.status).toBe(429);
    expect(reply.json.error.code).toBe(429);
    expect(reply.json.error.message).toContain('429');
    expect(reply.json.error.metadata).toMatchObject({ provider_name: 'simulator', attempts: 2 });
    expect(reply.headers['retry-after']).toBe('1');
    expect(reply.headers['x-generation-id']).toMatch(/^gen-/);
    // Retry-After: 1 is honoured between the two tries.
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('answers 408 when the upstream never answers, within the timeout and its retries', async () => {
    const started = Date.now();
    const reply = await sendJson(CHAT, chat('simulator/timeout'), METADATA);
    const elapsed = Date.now() - started;
    expect(reply.status).toBe(408);
    expect(reply.json.error.code).toBe(408);
    expect(reply.json.error.message).toMatch(/timed out/);
    expect(reply.json.error.metadata.attempts).toBe(2);
    expect(reply.json.service_metadata).toMatchObject({ attempt: 2, summary: 'No endpoint answered after 2 attempt(s)' });
    // Two tries of 1 s each plus one backoff of at most 200 ms.
    expect(elapsed).toBeGreaterThanOrEqual(2 * TIMEOUT_MS - 50);
    expect(elapsed).toBeLessThan(5_000);
  });
});

describe('context length', () => {
  async function organization(orgId: string): Promise<Json> {
    const db = createDocumentClient({ endpoint: store.endpoint });
    try {
      return (await db.send(new GetCommand({ TableName: store.tableName, Key: itemKeys.organization(orgId), ConsistentRead: true }))).Item as Json;
    } finally {
      db.destroy();
    }
  }

  it('answers 400 naming the limit to a prompt no endpoint can hold, before reserving anything', async () => {
    const tenant = await createTenant(store.deps);
    const own = (await tenant.addKey('standard')).text;
    const before = await organization(tenant.orgId);
    // 1 MB of text: about 250,000 tokens, for a model with a 131,072-token context.
    const body = chat('simulator/echo', { messages: [{ role: 'user', content: 'word '.repeat(200_000) }], max_tokens: 1000 });
    const reply = await handleInference(httpEvent({ method: 'POST', path: CHAT, key: own, body }), store.deps);
    const json = JSON.parse(reply.body as string) as Json;
    expect(reply.statusCode).toBe(400);
    expect(json.error.message).toBe(
      "This endpoint's maximum context length is 131072 tokens. However, you requested about 251004 tokens (250004 of text input, 1000 in the output). Please reduce the length of either one.",
    );
    expect(json.error.metadata).toEqual({ context_length: 131072, requested_tokens: 251004, prompt_tokens: 250004, max_tokens: 1000 });
    // Nothing was held or charged, and no generation was started (so none can be recorded).
    const after = await organization(tenant.orgId);
    expect({ balance: after.balance, held: after.held ?? 0, usage: after.total_usage ?? 0 }).toEqual({ balance: before.balance, held: before.held ?? 0, usage: before.total_usage ?? 0 });
    expect(reply.headers['x-generation-id']).toBeUndefined();
  });

  it('skips an endpoint whose context is too short and says so in service_metadata', async () => {
    // About 2,000 tokens: more than sim-short's 1,000, within sim-long's 8,192.
    const reply = await sendJson(CHAT, chat('context/echo', { messages: [{ role: 'user', content: 'word '.repeat(1600) }] }), METADATA);
    expect(reply.status).toBe(200);
    expect(reply.json.provider).toBe('sim-long');
    expect(reply.json.service_metadata.endpoints.available).toEqual([{ model: 'context/echo', provider: 'sim-long', selected: true }]);
    expect(reply.json.service_metadata.pipeline).toContainEqual({
      type: 'routing',
      name: 'context-length',
      summary: 'context/echo@sim-short skipped: the request needs about 2004 tokens and its context length is 1000',
      data: { endpoint: 'context/echo@sim-short', context_length: 1000, requested_tokens: 2004 },
    });
  });
});

describe('provider.max_price', () => {
  it('is taken to the nearest nano-dollar: a float a hair under sim-short\'s $0.1 per million still admits it', async () => {
    const reply = await sendJson(CHAT, chat('context/echo', { provider: { max_price: { prompt: 0.0999999999999 } } }), METADATA);
    expect(reply.status).toBe(200);
    expect(reply.json.provider).toBe('sim-short');
    expect(reply.json.service_metadata.endpoints.available).toEqual([{ model: 'context/echo', provider: 'sim-short', selected: true }]);
  });

  it('answers 400 naming the field to a negative or non-numeric max_price', async () => {
    for (const [value, problem] of [[-1, 'must not be negative'], ['1e-3', 'must be a number, or decimal text like "0.5"']] as const) {
      const reply = await sendJson(CHAT, chat('context/echo', { provider: { max_price: { completion: value } } }));
      expect(reply.status).toBe(400);
      expect(reply.json.error.message).toBe(`Invalid body.provider.max_price.completion: ${problem}`);
    }
  });
});

describe('service_metadata header', () => {
  it('is absent without the header', async () => {
    const reply = await sendJson(CHAT, chat('simulator/echo'));
    expect(reply.status).toBe(200);
    expect(reply.json).not.toHaveProperty('service_metadata');
    const responses = await sendJson(RESPONSES, { model: 'simulator/echo', input: 'ping' });
    expect(responses.status).toBe(200);
    expect(responses.json).not.toHaveProperty('service_metadata');
    const disabled = await sendJson(CHAT, chat('simulator/echo'), { 'X-Service-Metadata': 'disabled' });
    expect(disabled.json).not.toHaveProperty('service_metadata');
  });

  it('is present with the legacy X-Service-Experimental-Metadata header', async () => {
    const reply = await sendJson(CHAT, chat('simulator/echo'), { 'X-Service-Experimental-Metadata': 'enabled' });
    expect(reply.status).toBe(200);
    expect(reply.json.service_metadata).toMatchObject({
      attempt: 1, strategy: 'direct', requested: 'simulator/echo', is_byok: false,
      endpoints: { available: [{ model: 'simulator/echo', provider: 'simulator', selected: true }], total: 1 },
    });
    const responses = await sendJson(RESPONSES, { model: 'simulator/echo', input: 'ping' }, { 'x-service-experimental-metadata': 'enabled' });
    expect(responses.json.service_metadata).toMatchObject({ attempt: 1, strategy: 'direct' });
  });
});

describe('generation records', () => {
  it('stores the chat reply under its id, the X-Generation-Id header, with the same cost', async () => {
    const reply = await sendJson(CHAT, chat('simulator/echo', { messages: [{ role: 'user', content: 'count the cost of this' }] }));
    expect(reply.status).toBe(200);
    expect(reply.json.id).toMatch(/^gen-/);
    expect(reply.headers['x-generation-id']).toBe(reply.json.id);
    const record = await store.deps.engine.generations.get(reply.json.id as string);
    expect(record).toBeDefined();
    expect(record!.cost.total).toBe(usdToNanos(reply.json.usage.cost as number));
    // 22 characters in, 22 out: 6 tokens each at 1000 and 2000 nano-dollars per token.
    expect(reply.json.usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 6 });
    expect(record!.cost.total).toBe(6n * 1_000n + 6n * 2_000n);
    expect(record).toMatchObject({ id: reply.json.id, api: 'chat', model: 'simulator/echo', provider: 'simulator', streamed: false, status: 'completed', attempts: 1 });
    expect(record!.usage).toMatchObject({ input_tokens: 6, output_tokens: 6 });
  });

  it('does the same for /responses', async () => {
    const reply = await sendJson(RESPONSES, { model: 'simulator/echo', input: 'responses cost' });
    expect(reply.status).toBe(200);
    expect(reply.headers['x-generation-id']).toBe(reply.json.id);
    const record = await store.deps.engine.generations.get(reply.json.id as string);
    expect(record!.cost.total).toBe(usdToNanos(reply.json.usage.cost as number));
    expect(record!.cost.total).toBeGreaterThan(0n);
    expect(record).toMatchObject({ api: 'responses', status: 'completed' });
  });
});

describe('sticky routing', () => {
  it('sends the second request of a session to the provider that served the first', async () => {
    const firsts = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const session = `session-${i}-${Date.now()}`;
      const first = await sendJson(CHAT, chat('sticky/echo', { session_id: session }));
      expect(first.status).toBe(200);
      const provider = first.json.provider as string;
      expect(['sim-a', 'sim-b']).toContain(provider);
      firsts.add(provider);
      const second = await sendJson(CHAT, chat('sticky/echo', { session_id: session }), METADATA);
      expect(second.status).toBe(200);
      expect(second.json.provider).toBe(provider);
      expect(second.json.service_metadata.endpoints.available[0]).toEqual({ model: 'sticky/echo', provider, selected: true });
      const third = await sendJson(RESPONSES, { model: 'sticky/echo', input: 'again', session_id: session });
      expect(third.json.provider).toBe(provider);
    }
    // Both providers were chosen for some new session: the second choice is sticky, not a fixed order.
    expect(firsts).toEqual(new Set(['sim-a', 'sim-b']));
    // 60 requests one after another, each reading its key, policies and workspace afresh (the test deps cache
    // nothing): about 4 s on an idle machine, past 30 s when the whole suite loads it.
  }, 120_000);

  it('keys stickiness on the x-session-id header too', async () => {
    const session = `header-${Date.now()}`;
    const first = await sendJson(CHAT, chat('sticky/echo'), { 'x-session-id': session });
    for (let i = 0; i < 5; i++) {
      const next = await sendJson(CHAT, chat('sticky/echo'), { 'x-session-id': session });
      expect(next.json.provider).toBe(first.json.provider);
    }
  });
});

describe('streaming failures', () => {
  it('ends a stream cut mid-way with an error chunk and no [DONE]', async () => {
    const reply = await send(CHAT, chat('simulator/cut-stream', { stream: true, messages: [{ role: 'user', content: 'a reply long enough to be cut after three pieces' }] }));
    expect(reply.statusCode).toBe(200);
    expect(reply.headers['content-type']).toMatch(/^text\/event-stream/);
    const text = await readBody(reply.body);
    expect(text).not.toContain('[DONE]');
    const frames = dataFrames(text).map((frame) => JSON.parse(frame) as Json);
    const content = frames.flatMap((frame) => (frame.choices ?? []).map((choice: Json) => choice.delta?.content ?? '')).join('');
    expect(content).toBe('a reply long enough to b'); // three 8-character pieces, then the cut
    const last = frames.at(-1)!;
    expect(last.choices[0].finish_reason).toBe('error');
    expect(last.error).toMatchObject({ code: 502 });
    expect(typeof last.error.message).toBe('string');
    expect(frames.filter((frame) => frame.choices?.[0]?.finish_reason === 'error')).toHaveLength(1);
    const record = await store.deps.engine.generations.get(reply.headers['x-generation-id']!);
    expect(record).toMatchObject({ status: 'error', streamed: true, finish_reason: 'error', usage_estimated: true });
    // The provider reported no usage before the cut: the prompt and the 24 streamed bytes are charged as estimated.
    expect(record!.usage.output_tokens).toBe(6);
    expect(record!.usage.input_tokens).toBeGreaterThan(0);
    expect(record!.cost.total).toBeGreaterThan(0n);
  });

  it('ends a cut /responses stream with error and response.failed events and no [DONE]', async () => {
    const reply = await send(RESPONSES, { model: 'simulator/cut-stream', input: 'another reply long enough to be cut', stream: true });
    expect(reply.statusCode).toBe(200);
    const text = await readBody(reply.body);
    expect(text).not.toContain('[DONE]');
    const frames = dataFrames(text).map((frame) => JSON.parse(frame) as Json);
    expect(frames.map((frame) => frame.type).slice(-2)).toEqual(['error', 'response.failed']);
    expect(frames.at(-1)!.response.status).toBe('failed');
  });

  it('answers a stream that fails before its first byte with a real 502 and the envelope', async () => {
    const engine = store.deps.engine;
    const random = engine.random;
    // A fixed jitter keeps the one retry (50 ms) well inside the 200 ms window before the stream commits to 200.
    engine.random = () => 0.25;
    try {
      const reply = await send(CHAT, chat('simulator/error-500', { stream: true }));
      expect(reply.statusCode).toBe(502);
      expect(typeof reply.body).toBe('string');
      expect(reply.headers['content-type']).toBe('application/json');
      const json = JSON.parse(reply.body as string) as Json;
      expect(json.error.code).toBe(502);
      expect(json.error.message).toContain('500');
      expect(json.error.metadata).toMatchObject({ provider_name: 'simulator', attempts: 2 });
      expect(reply.headers['x-generation-id']).toMatch(/^gen-/);
    } finally {
      engine.random = random;
    }
  });

  it('streams a healthy reply to the end with [DONE]', async () => {
    const reply = await send(CHAT, chat('simulator/echo', { stream: true }));
    expect(reply.statusCode).toBe(200);
    const text = await readBody(reply.body);
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    const frames = dataFrames(text).filter((frame) => frame !== '[DONE]').map((frame) => JSON.parse(frame) as Json);
    expect(frames.every((frame) => frame.id === reply.headers['x-generation-id'])).toBe(true);
    expect(frames.at(-1)!.usage.cost).toBeGreaterThan(0);
  });
});

describe('a failure inside the stream producer', () => {
  it('cuts the stream and logs it instead of crashing the process', async () => {
    const pages = store.deps.engine.pages;
    const add = pages.add.bind(pages);
    pages.add = () => { throw new Error('ledger exploded'); };
    try {
      const reply = await send(CHAT, chat('simulator/echo', { stream: true }));
      expect(reply.statusCode).toBe(200);
      const read = await readBody(reply.body).then((text) => ({ text, failed: false }), () => ({ text: '', failed: true }));
      expect(read.failed || !read.text.includes('[DONE]')).toBe(true);
      expect(store.logs.some((line) => line.includes('stream producer failed') && line.includes('ledger exploded'))).toBe(true);
    } finally {
      pages.add = add;
    }
    // The gateway keeps serving.
    expect((await sendJson(CHAT, chat('simulator/echo'))).status).toBe(200);
  });
});
