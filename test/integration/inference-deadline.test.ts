// One overall deadline per request (GATEWAY_REQUEST_TIMEOUT_MS): retries and fallbacks happen within it,
// each attempt gets at most what is left, no retry starts with too little left, and the reply after the
// deadline is a 408. Through the real inference handler with real deps over DynamoDB Local, a fake provider
// that never answers, and the simulator.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installAwsLambdaShim } from '../../bin/local/awslambda-shim.js';
import { startSimulator, type Simulator } from '../../bin/simulator/server.js';
import type { CatalogFile } from '../../lambdas/catalog/catalog-config.js';
import { DEFAULT_ENGINE_CONFIG } from '../../lambdas/inference/engine.js';
import { engineConfigFromEnv } from '../../lambdas/app/engine-deps.js';
import { createTestStore, type TestStore } from '../support/store.js';
import { createTenant } from '../support/tenants.js';
import { httpEvent } from '../support/events.js';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';

installAwsLambdaShim();
const { handleInference } = await import('../../lambdas/handlers/inference.js');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

const CHAT = '/api/v1/chat/completions';

let sim: Simulator;
let hung: FakeUpstream;
let store: TestStore;
let key: string;
let catalogDir: string;

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
  hung = await startFakeUpstream();
  hung.reply({ hang: true });
  catalogDir = mkdtempSync(join(tmpdir(), 'gateway-catalog-'));
  const catalog: CatalogFile = {
    models: [{
      id: 'test/hang',
      endpoints: [{ provider: 'hung', adapter: 'openai-chat', base_url: `${hung.url}/v1`, upstream_model: 'hang', pricing: { prompt: '0.000001', completion: '0.000002' }, context_length: 8192 }],
    }],
  };
  const catalogFile = join(catalogDir, 'catalog.json');
  writeFileSync(catalogFile, JSON.stringify(catalog));
  store = await createTestStore({ SIMULATOR_URL: sim.url, GATEWAY_CATALOG_FILE: catalogFile, GATEWAY_KEEPALIVE_MS: '5000' });
  key = (await (await createTenant(store.deps)).addKey('standard')).text;
});
afterAll(async () => {
  await store.drop();
  await hung.close();
  await sim.close();
  rmSync(catalogDir, { recursive: true, force: true });
});
beforeEach(() => {
  hung.received.length = 0;
});

function configure(requestTimeoutMs: number, firstByteTimeoutMs: number, minAttemptMs: number): void {
  Object.assign(store.deps.engine.config, { requestTimeoutMs, firstByteTimeoutMs, minAttemptMs });
}

async function send(body: Json): Promise<{ status: number; json: Json }> {
  const reply = await handleInference(httpEvent({ method: 'POST', path: CHAT, key, body, headers: { 'X-Service-Metadata': 'enabled' } }), store.deps);
  expect(typeof reply.body).toBe('string');
  return { status: reply.statusCode, json: JSON.parse(reply.body as string) as Json };
}

const ping = (model: string | string[], extra: Json = {}): Json => ({
  ...(Array.isArray(model) ? { models: model } : { model }),
  messages: [{ role: 'user', content: 'ping' }],
  ...extra,
});

describe('one overall deadline', () => {
  it('does not start a retry when too little of the deadline is left: one attempt, then 408', async () => {
    // 1,800 ms per attempt within 2,000 ms: after the first attempt at most 200 ms are left, less than a retry
    // needs. (The deadline also counts the work before the attempt, which a busy machine can stretch to
    // hundreds of milliseconds: the margins leave room for it.)
    configure(2_000, 1_800, 1_000);
    const reply = await send(ping('test/hang'));
    expect(reply.status).toBe(408);
    expect(reply.json.error.message).toMatch(/timed out/);
    expect(reply.json.error.metadata.attempts).toBe(1);
    // Without the deadline: a second attempt of 1,800 ms.
    expect(hung.received).toHaveLength(1);
  });

  it('gives a retry only what is left of the deadline', async () => {
    // 2,400 ms per attempt within 4,000 ms: the retry (after no backoff) gets what is left, less than 1,600 ms
    // (the deadline also counts the time before the first attempt: authentication, the reservation).
    configure(4_000, 2_400, 100);
    const random = store.deps.engine.random;
    store.deps.engine.random = () => 0;
    try {
      const reply = await send(ping('test/hang'));
      expect(reply.status).toBe(408);
      expect(reply.json.error.metadata.attempts).toBe(2);
      expect(reply.json.error.message).toBe('Provider hung timed out: no reply within the request deadline of 4000 ms');
    } finally {
      store.deps.engine.random = random;
    }
  });

  it('retries and falls back within the deadline', async () => {
    configure(5_000, 300, 100);
    const reply = await send(ping(['test/hang', 'simulator/echo']));
    expect(reply.status).toBe(200);
    expect(reply.json.choices[0].message.content).toBe('ping');
    expect(reply.json.service_metadata).toMatchObject({ attempt: 3 });
    expect(hung.received).toHaveLength(2);
  });

  it('bounds the wait for a stream\'s first event the same way: a real 408 before anything is streamed', async () => {
    configure(600, 600, 100);
    const reply = await send(ping('test/hang', { stream: true }));
    expect(reply.status).toBe(408);
    expect(reply.json.error.metadata.attempts).toBe(1);
  });
});

describe('a non-streaming reply whose connection drops', () => {
  it('says the connection dropped, not that the provider returned 502, and does not try again', async () => {
    configure(10_000, 10_000, 100);
    const reply = await send(ping('simulator/cut-stream'));
    expect(reply.status).toBe(502);
    expect(reply.json.error.message).toBe('Provider simulator connection dropped before the reply completed');
    // The reply had started: the provider has done (and billed) the generation, so a retry would pay twice.
    expect(reply.json.error.metadata).toMatchObject({ provider_name: 'simulator', attempts: 1 });
  });
});

describe('configuration', () => {
  it('defaults to a 120 s deadline; the per-attempt wait defaults to the deadline and never exceeds it', () => {
    expect(DEFAULT_ENGINE_CONFIG).toMatchObject({ requestTimeoutMs: 120_000, firstByteTimeoutMs: 120_000 });
    expect(engineConfigFromEnv({})).toMatchObject({ requestTimeoutMs: 120_000, firstByteTimeoutMs: 120_000 });
    expect(engineConfigFromEnv({ GATEWAY_REQUEST_TIMEOUT_MS: '30000' })).toMatchObject({ requestTimeoutMs: 30_000, firstByteTimeoutMs: 30_000 });
    expect(engineConfigFromEnv({ GATEWAY_REQUEST_TIMEOUT_MS: '30000', GATEWAY_UPSTREAM_TIMEOUT_MS: '10000' })).toMatchObject({ requestTimeoutMs: 30_000, firstByteTimeoutMs: 10_000 });
    expect(engineConfigFromEnv({ GATEWAY_REQUEST_TIMEOUT_MS: '30000', GATEWAY_UPSTREAM_TIMEOUT_MS: '60000' })).toMatchObject({ firstByteTimeoutMs: 30_000 });
    expect(() => engineConfigFromEnv({ GATEWAY_REQUEST_TIMEOUT_MS: 'soon' })).toThrow(/GATEWAY_REQUEST_TIMEOUT_MS must be a positive integer/);
  });
});
