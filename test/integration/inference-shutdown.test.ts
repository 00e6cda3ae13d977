// Graceful shutdown, engine side: once the ShutdownSwitch is triggered (the local runtime does it on SIGTERM
// after its grace period), every in-flight inference request stops waiting on its provider. A started stream
// ends with a 503 error event and settles what it used; a stream not yet committed and a non-streaming
// request get a 503 envelope and are charged an estimate of the prompt their provider already read; new
// requests get 503 before anything is reserved.
// Through the real inference handler with real deps over DynamoDB Local and a fake provider over HTTP.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { installAwsLambdaShim } from '../../bin/local/awslambda-shim.js';
import type { CatalogFile } from '../../lambdas/catalog/catalog-config.js';
import { ShutdownSwitch } from '../../lambdas/platform/shutdown.js';
import { createDocumentClient } from '../../lambdas/platform/dynamo/client.js';
import { itemKeys } from '../../lambdas/platform/dynamo/item-keys.js';
import { createTestStore, type TestStore } from '../support/store.js';
import { createTenant, type Tenant } from '../support/tenants.js';
import { httpEvent } from '../support/events.js';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';

installAwsLambdaShim();
const { handleInference } = await import('../../lambdas/handlers/inference.js');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

const CHAT = '/api/v1/chat/completions';
const TICK = `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'slow', choices: [{ index: 0, delta: { content: 'tick ' }, finish_reason: null }] })}\n\n`;

let upstream: FakeUpstream;
let store: TestStore;
let catalogDir: string;
let tenant: Tenant;
let key: string;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  // test/slow streams a chunk every 50 ms for as long as the connection stays open; test/pause streams one
  // chunk and then nothing; test/hang never answers.
  upstream.reply((request) => {
    const model = (request.body as Json).model;
    if (model === 'slow') return { hang: true, repeat: { chunk: TICK, everyMs: 50 } };
    if (model === 'pause') return { hang: true, chunks: [TICK] };
    return { hang: true };
  });
  catalogDir = mkdtempSync(join(tmpdir(), 'gateway-catalog-'));
  const endpoint = (upstreamModel: string) => ({
    provider: upstreamModel, adapter: 'openai-chat' as const, base_url: `${upstream.url}/v1`, upstream_model: upstreamModel,
    pricing: { prompt: '0.000001', completion: '0.000002' }, context_length: 8192,
  });
  const catalog: CatalogFile = { models: [{ id: 'test/slow', endpoints: [endpoint('slow')] }, { id: 'test/pause', endpoints: [endpoint('pause')] }, { id: 'test/hang', endpoints: [endpoint('hang')] }] };
  const catalogFile = join(catalogDir, 'catalog.json');
  writeFileSync(catalogFile, JSON.stringify(catalog));
  store = await createTestStore({ GATEWAY_CATALOG_FILE: catalogFile, GATEWAY_KEEPALIVE_MS: '5000' });
});
afterAll(async () => {
  await store.drop();
  await upstream.close();
  rmSync(catalogDir, { recursive: true, force: true });
});
beforeEach(async () => {
  store.deps.engine.shutdown = new ShutdownSwitch();
  upstream.received.length = 0;
  tenant = await createTenant(store.deps);
  key = (await tenant.addKey('standard')).text;
});

/** The organization's item once the process has stopped: its leases given back, every record applied. */
async function organization(): Promise<Json> {
  await store.quiesce();
  const db = createDocumentClient({ endpoint: store.endpoint });
  try {
    return (await db.send(new GetCommand({ TableName: store.tableName, Key: itemKeys.organization(tenant.orgId), ConsistentRead: true }))).Item as Json;
  } finally {
    db.destroy();
  }
}

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
}

function send(body: Json, deferred: Promise<unknown>[]) {
  return handleInference(httpEvent({ method: 'POST', path: CHAT, key, body }), store.deps, (work) => { deferred.push(work); });
}

/** Runs `test` with the engine's keep-alive interval set to `ms`, then puts it back. */
async function withKeepAliveMs(ms: number, test: () => Promise<void>): Promise<void> {
  const saved = store.deps.engine.config.keepAliveMs;
  store.deps.engine.config.keepAliveMs = ms;
  try {
    await test();
  } finally {
    store.deps.engine.config.keepAliveMs = saved;
  }
}

const ask = (model: string, stream: boolean): Json => ({ model, stream, messages: [{ role: 'user', content: 'go' }] });

describe('shutdown while requests are in flight', () => {
  it('ends a started stream with a 503 error event, closes the upstream, and settles the partial usage', async () => {
    const deferred: Promise<unknown>[] = [];
    const reply = await send(ask('test/slow', true), deferred);
    expect(reply.statusCode).toBe(200);
    let text = '';
    for await (const chunk of reply.body as Readable) {
      text += String(chunk);
      if (text.split('tick').length === 3 && !store.deps.engine.shutdown.triggered) store.deps.engine.shutdown.trigger();
    }
    expect(text).not.toContain('[DONE]');
    const frames = text.split('\n\n').filter((frame) => frame.startsWith('data: {')).map((frame) => JSON.parse(frame.slice(6)) as Json);
    const last = frames.at(-1)!;
    expect(last.choices[0].finish_reason).toBe('error');
    expect(last.error).toMatchObject({ code: 503 });
    expect(last.error.message).toMatch(/shutting down/);
    await until(() => upstream.closedAt.length > 0);

    await Promise.all(deferred);
    const record = await store.deps.engine.generations.get(reply.headers['x-generation-id']!);
    expect(record).toMatchObject({ status: 'error', streamed: true, usage_estimated: true, error: { status: 503 } });
    expect(record!.usage.output_tokens).toBeGreaterThan(0);
    const org = await organization();
    expect({ held: BigInt(org.held), usage: BigInt(org.total_usage) }).toEqual({ held: 0n, usage: record!.cost.total });
  });

  /**
   * A request the shutdown abandoned after its prompt went upstream: the provider has read (and billed) it,
   * so the hold is settled at an estimate of the prompt with no output, never given back for free.
   */
  async function expectAbandonedCharge(generationId: string, streamed: boolean): Promise<void> {
    const record = await store.deps.engine.generations.get(generationId);
    expect(record).toMatchObject({ status: 'cancelled', streamed, usage_estimated: true, usage: { output_tokens: 0 } });
    expect(record!.cost.total).toBeGreaterThan(0n);
    const org = await organization();
    expect({ held: BigInt(org.held), usage: BigInt(org.total_usage ?? 0) }).toEqual({ held: 0n, usage: record!.cost.total });
  }

  it('answers 503 to a non-streaming request waiting on its provider and charges the estimated prompt', async () => {
    const deferred: Promise<unknown>[] = [];
    const pending = send(ask('test/hang', false), deferred);
    await until(() => upstream.received.length === 1);
    store.deps.engine.shutdown.trigger();
    const reply = await pending;
    expect(reply.statusCode).toBe(503);
    expect(JSON.parse(reply.body as string)).toMatchObject({ error: { code: 503, message: expect.stringMatching(/shutting down/) } });
    await until(() => upstream.closedAt.length > 0);
    await Promise.all(deferred);
    await expectAbandonedCharge(reply.headers['x-generation-id']!, false);
  });

  it('answers 503 to a stream that has not committed to 200 yet and charges the estimated prompt', async () => {
    const deferred: Promise<unknown>[] = [];
    const pending = send(ask('test/hang', true), deferred);
    await until(() => upstream.received.length === 1);
    store.deps.engine.shutdown.trigger();
    const reply = await pending;
    expect(reply.statusCode).toBe(503);
    expect(JSON.parse(reply.body as string)).toMatchObject({ error: { code: 503 } });
    await Promise.all(deferred);
    await expectAbandonedCharge(reply.headers['x-generation-id']!, true);
  });

  it('keeps a stream whose upstream pauses alive with a comment every keep-alive interval, again and again', () => withKeepAliveMs(50, async () => {
    const deferred: Promise<unknown>[] = [];
    const reply = await send(ask('test/pause', true), deferred);
    expect(reply.statusCode).toBe(200);
    let text = '';
    const started = Date.now();
    for await (const chunk of reply.body as Readable) {
      text += String(chunk);
      const afterTick = text.split('tick')[1];
      if (afterTick !== undefined && afterTick.split(': keep-alive').length > 4 && !store.deps.engine.shutdown.triggered) store.deps.engine.shutdown.trigger();
    }
    const afterTick = text.split('tick')[1]!;
    expect(afterTick.split(': keep-alive').length - 1).toBeGreaterThanOrEqual(4);
    // Four intervals of 50 ms at least went by: comments are not sent faster than the interval.
    expect(Date.now() - started).toBeGreaterThanOrEqual(4 * 50 - 10);
    await Promise.all(deferred);
  }));

  it('ends a stream committed by a keep-alive before its first event with a 503 error event and charges the estimated prompt', () => withKeepAliveMs(50, async () => {
    const deferred: Promise<unknown>[] = [];
    const reply = await send(ask('test/hang', true), deferred);
    expect(reply.statusCode).toBe(200);
    await until(() => upstream.received.length === 1);
    store.deps.engine.shutdown.trigger();
    let text = '';
    for await (const chunk of reply.body as Readable) text += String(chunk);
    const frames = text.split('\n\n').filter((frame) => frame.startsWith('data: {')).map((frame) => JSON.parse(frame.slice(6)) as Json);
    expect(frames.at(-1)!.error).toMatchObject({ code: 503 });
    await Promise.all(deferred);
    await expectAbandonedCharge(reply.headers['x-generation-id']!, true);
  }));

  it('gives the hold back when the shutdown comes before anything was sent upstream', async () => {
    const ledger = store.deps.engine.ledger;
    const reserve = ledger.reserve.bind(ledger);
    // The shutdown arrives while the hold is being taken: past the refusal of new work, before any attempt.
    ledger.reserve = async (...args) => {
      const hold = await reserve(...args);
      store.deps.engine.shutdown.trigger();
      return hold;
    };
    try {
      const deferred: Promise<unknown>[] = [];
      const reply = await send(ask('test/hang', false), deferred);
      expect(reply.statusCode).toBe(503);
      await Promise.all(deferred);
      expect(upstream.received).toHaveLength(0);
      expect(await store.deps.engine.generations.get(reply.headers['x-generation-id']!)).toBeUndefined();
      const org = await organization();
      expect({ held: BigInt(org.held), usage: BigInt(org.total_usage ?? 0) }).toEqual({ held: 0n, usage: 0n });
    } finally {
      ledger.reserve = reserve;
    }
  });

  it('records an abandoned request as neither a success nor a failure of its endpoint, nor as its session\'s endpoint', async () => {
    const { health, sessions } = store.deps.engine;
    const seen: string[] = [];
    const recordSuccess = health.recordSuccess.bind(health);
    const recordFailure = health.recordFailure.bind(health);
    health.recordSuccess = (endpoint) => { seen.push(`success ${endpoint}`); recordSuccess(endpoint); };
    health.recordFailure = (endpoint, now) => { seen.push(`failure ${endpoint}`); recordFailure(endpoint, now); };
    try {
      const deferred: Promise<unknown>[] = [];
      const pending = send({ ...ask('test/hang', false), session_id: 'abandoned-session' }, deferred);
      await until(() => upstream.received.length === 1);
      store.deps.engine.shutdown.trigger();
      const reply = await pending;
      expect(reply.statusCode).toBe(503);
      await Promise.all(deferred);
      expect(await store.deps.engine.generations.get(reply.headers['x-generation-id']!)).toMatchObject({ status: 'cancelled', session_id: 'abandoned-session' });
      expect(seen).toEqual([]);
      expect(sessions.get(`${tenant.orgId}:abandoned-session`, store.deps.engine.now())).toBeUndefined();
    } finally {
      health.recordSuccess = recordSuccess;
      health.recordFailure = recordFailure;
    }
  });

  it('answers 503 to new requests before reserving anything or calling a provider', async () => {
    const before = await organization();
    store.deps.engine.shutdown.trigger();
    const deferred: Promise<unknown>[] = [];
    const reply = await send(ask('test/slow', false), deferred);
    expect(reply.statusCode).toBe(503);
    expect(JSON.parse(reply.body as string).error.message).toMatch(/shutting down/);
    expect(upstream.received).toHaveLength(0);
    await Promise.all(deferred);
    const after = await organization();
    expect({ balance: after.balance, held: after.held ?? 0 }).toEqual({ balance: before.balance, held: before.held ?? 0 });
  });
});
