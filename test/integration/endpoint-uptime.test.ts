// The live status of GET /models/{author}/{slug}/endpoints against what really happened to each endpoint:
// attempts that failed before a first byte count against its uptime (client aborts and the gateway's own
// shutdown do not), a busy endpoint's newest hours are read first, and a slow first token is not reported
// as faster than it was. Through the real handlers over DynamoDB Local and a fake provider over HTTP.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ListEndpointsResponse$inboundSchema } from '@openrouter/sdk/models/operations';
import { installAwsLambdaShim } from '../../bin/local/awslambda-shim.js';
import type { CatalogFile } from '../../lambdas/catalog/catalog-config.js';
import { ShutdownSwitch } from '../../lambdas/platform/shutdown.js';
import { createDocumentClient } from '../../lambdas/platform/dynamo/client.js';
import type { GenerationRecord } from '../../lambdas/billing/generation-record.js';
import { rollupDelta } from '../../lambdas/billing/rollups.js';
import { createTestStore, type TestStore } from '../support/store.js';
import { createTenant } from '../support/tenants.js';
import { httpEvent } from '../support/events.js';
import { fixtureJson, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';

installAwsLambdaShim();
const { handleInference } = await import('../../lambdas/handlers/inference.js');
const { handleManagement } = await import('../../lambdas/handlers/management.js');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

const TICK = `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'slow', choices: [{ index: 0, delta: { content: 'tick ' }, finish_reason: null }] })}\n\n`;
const MODELS = ['ok', 'fail', 'limited', 'flaky', 'flip', 'hang', 'slow', 'stuck', 'busy', 'sluggish'] as const;

let upstream: FakeUpstream;
let store: TestStore;
let catalogDir: string;
let key: string;
let flips = 0;
/** The x-generation-id of the last reply of chat(). */
let lastGenerationId: string | undefined;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  upstream.reply((request) => {
    switch ((request.body as Json).model) {
      case 'ok': return { json: fixtureJson('openai/chat-completion.json') };
      case 'fail': case 'flaky': return { status: 500, json: { error: { message: 'upstream exploded' } } };
      case 'limited': return { status: 429, json: { error: { message: 'slow down' } } };
      // Fails its first call, answers the second (the engine's retry of the same endpoint).
      case 'flip': return (flips += 1) % 2 === 1 ? { status: 503, json: { error: { message: 'warming up' } } } : { json: fixtureJson('openai/chat-completion.json') };
      case 'slow': return { hang: true, repeat: { chunk: TICK, everyMs: 50 } };
      default: return { hang: true };
    }
  });
  catalogDir = mkdtempSync(join(tmpdir(), 'gateway-catalog-'));
  const catalog: CatalogFile = {
    models: MODELS.map((name) => ({
      id: `test/${name}`,
      endpoints: [{ provider: `p-${name}`, adapter: 'openai-chat' as const, base_url: `${upstream.url}/v1`, upstream_model: name, pricing: { prompt: '0.000001', completion: '0.000002' }, context_length: 8192 }],
    })),
  };
  const catalogFile = join(catalogDir, 'catalog.json');
  writeFileSync(catalogFile, JSON.stringify(catalog));
  store = await createTestStore({ GATEWAY_CATALOG_FILE: catalogFile, GATEWAY_KEEPALIVE_MS: '5000' });
  key = (await (await createTenant(store.deps)).addKey('standard')).text;
});
afterAll(async () => {
  await store.drop();
  await upstream.close();
  rmSync(catalogDir, { recursive: true, force: true });
});

/** One chat request, drained, with every piece of work deferred past the reply finished before it returns. */
async function chat(body: Json, options: { signal?: AbortSignal; onText?: (text: string) => void } = {}): Promise<number> {
  const deferred: Promise<unknown>[] = [];
  const reply = await handleInference(
    httpEvent({ method: 'POST', path: '/api/v1/chat/completions', key, body: { messages: [{ role: 'user', content: 'hi' }], ...body } }),
    store.deps, (work) => { deferred.push(work); }, undefined, options.signal,
  );
  lastGenerationId = reply.headers['x-generation-id'];
  if (typeof reply.body !== 'string') {
    let text = '';
    for await (const chunk of reply.body as Readable) {
      text += String(chunk);
      options.onText?.(text);
    }
  }
  await Promise.all(deferred);
  return reply.statusCode;
}

/** The endpoint's figures once every record written so far is in the rollups. */
async function status(model: string): Promise<Json> {
  await store.converge();
  const reply = await handleManagement(httpEvent({ method: 'GET', path: `/api/v1/models/${model}/endpoints` }), store.deps);
  const json = JSON.parse(String(reply.body)) as Json;
  expect(ListEndpointsResponse$inboundSchema.safeParse(json).error).toBeUndefined();
  return json.data.endpoints[0];
}

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
}

const received = (model: string) => upstream.received.filter((request) => (request.body as Json).model === model).length;

describe('uptime counts what failed before a first byte', () => {
  it('counts 5xx, 429 and failed fallbacks against their endpoint: successes / (settled + failed attempts)', async () => {
    expect(await chat({ model: 'test/fail' })).toBe(502);
    expect(await chat({ model: 'test/fail', stream: true })).toBe(502);
    expect(await chat({ model: 'test/limited' })).toBe(429);
    // test/flaky fails, test/ok serves the request.
    expect(await chat({ model: 'test/flaky', models: ['test/flaky', 'test/ok'] })).toBe(200);
    // One failed attempt, then the retry of the same endpoint succeeds.
    expect(await chat({ model: 'test/flip' })).toBe(200);
    expect(received('fail')).toBe(4);

    const zero = { uptime_last_5m: 0, uptime_last_30m: 0, uptime_last_1d: 0 };
    expect(await status('test/fail')).toMatchObject({ ...zero, latency_last_30m: null });
    expect(await status('test/limited')).toMatchObject(zero);
    expect(await status('test/flaky')).toMatchObject(zero);
    expect(await status('test/ok')).toMatchObject({ uptime_last_5m: 100, uptime_last_30m: 100, uptime_last_1d: 100 });
    expect(await status('test/flip')).toMatchObject({ uptime_last_5m: 50, uptime_last_30m: 50, uptime_last_1d: 50 });
    expect(store.logs.filter((line) => line.includes('endpoint failures'))).toEqual([]);
  });

  it('does not count a client that went away or the gateway shutting down as the endpoint failing', async () => {
    // The client goes away while test/hang is thinking (499, never written).
    const client = new AbortController();
    const abandoned = chat({ model: 'test/hang' }, { signal: client.signal });
    await until(() => received('hang') === 1);
    client.abort(new Error('client disconnected'));
    await abandoned;

    try {
      // The gateway shuts down while test/stuck is thinking (503 before any byte) …
      store.deps.engine.shutdown = new ShutdownSwitch();
      const refused = chat({ model: 'test/stuck' });
      await until(() => received('stuck') === 1);
      store.deps.engine.shutdown.trigger();
      expect(await refused).toBe(503);
      // … and in the middle of a test/slow stream, which is settled as an error of the generation.
      store.deps.engine.shutdown = new ShutdownSwitch();
      let cut = false;
      expect(await chat({ model: 'test/slow', stream: true }, {
        onText: (text) => { if (!cut && text.split('tick').length === 3) { cut = true; store.deps.engine.shutdown.trigger(); } },
      })).toBe(200);
      expect(cut).toBe(true);
    } finally {
      store.deps.engine.shutdown = new ShutdownSwitch();
    }

    expect(await status('test/hang')).toMatchObject({ uptime_last_5m: null, uptime_last_30m: null, uptime_last_1d: null });
    expect(await status('test/stuck')).toMatchObject({ uptime_last_5m: null, uptime_last_30m: null, uptime_last_1d: null });
    expect(await status('test/slow')).toMatchObject({ uptime_last_5m: 100, uptime_last_30m: 100, uptime_last_1d: 100 });
  });

  it('records failures best effort: a store error is logged and the request still settles', async () => {
    const failing = jest.spyOn(store.deps.engine.endpointFailures, 'add').mockRejectedValue(new Error('store unavailable'));
    try {
      const before = store.logs.length;
      // test/flaky fails (its count cannot be written), test/ok serves and settles.
      expect(await chat({ model: 'test/flaky', models: ['test/flaky', 'test/ok'] })).toBe(200);
      expect(failing).toHaveBeenCalledWith('test/flaky', 'p-flaky', expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d$/), 2, expect.any(Number));
      const logged = store.logs.slice(before).filter((line) => line.includes('endpoint failures not recorded'));
      expect(logged).toHaveLength(1);
      expect(JSON.parse(logged[0]!)).toMatchObject({ level: 'warn', endpoint: 'test/flaky@p-flaky', failures: 2 });
      expect(await store.deps.engine.generations.get(lastGenerationId!)).toMatchObject({ model: 'test/ok', status: 'completed', attempts: 3 });
    } finally {
      failing.mockRestore();
    }
  });
});

/** A settled generation of `model@provider` as the settlement writes its rollup row (any organization). */
function generation(model: string, provider: string, createdAt: Date, overrides: Partial<GenerationRecord> = {}): GenerationRecord {
  return {
    id: `gen-${Math.random()}`, org_id: `org-${Math.random()}`, workspace_id: 'ws', key_hash: `k${Math.random()}`, model, provider,
    upstream_model: model, provider_id: null, api: 'chat', streamed: false, status: 'completed', finish_reason: 'stop', native_finish_reason: null,
    usage: { input_tokens: 10, output_tokens: 10, reasoning_tokens: 0, cached_input_tokens: 0 }, cost: { total: 0n }, is_byok: false,
    service_tier: null, attempts: 1, created_at: createdAt.toISOString(), latency_ms: 300, first_token_ms: 300, generation_time_ms: 0,
    session_id: null, user_hash: null, error: null, reserved: 0n, usage_estimated: false, provider_responses: [],
    ...overrides,
  } as unknown as GenerationRecord;
}

/** Adds a generation's rollup delta to its row the way the settlement transaction does. */
async function settleRollup(record: GenerationRecord): Promise<void> {
  const delta = rollupDelta(record);
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const adds: string[] = [];
  const sets: string[] = [];
  Object.entries(delta.counters).forEach(([name, value], i) => {
    if (value === 0 || value === 0n) return;
    names[`#c${i}`] = name;
    values[`:c${i}`] = value;
    adds.push(`#c${i} :c${i}`);
  });
  Object.entries(delta.dimensions).forEach(([name, value], i) => {
    names[`#d${i}`] = name;
    values[`:d${i}`] = value;
    sets.push(`#d${i} = :d${i}`);
  });
  const db = createDocumentClient({ endpoint: store.endpoint });
  try {
    await db.send(new UpdateCommand({
      TableName: store.tableName, Key: delta.key, UpdateExpression: `SET ${sets.join(', ')} ADD ${adds.join(', ')}`,
      ExpressionAttributeNames: names, ExpressionAttributeValues: values,
    }));
  } finally {
    db.destroy();
  }
}

const HOUR_MS = 3_600_000;

describe('reading a busy endpoint', () => {
  it('reads the newest hours first when the rows exceed the read limit, and logs the truncation', async () => {
    const now = Date.now();
    // The current hour: one success and one failed generation; earlier hours: successes only.
    await settleRollup(generation('test/busy', 'p-busy', new Date(now)));
    await settleRollup(generation('test/busy', 'p-busy', new Date(now), { status: 'error' }));
    for (let hours = 1; hours <= 6; hours += 1) {
      await settleRollup(generation('test/busy', 'p-busy', new Date(now - hours * HOUR_MS)));
      await settleRollup(generation('test/busy', 'p-busy', new Date(now - hours * HOUR_MS)));
    }
    const rollups = store.deps.rollups;
    const read = rollups.endpointRange.bind(rollups);
    // A read limit of 5 rows stands for the 10,000 of production.
    const limited = jest.spyOn(rollups, 'endpointRange').mockImplementation((model, provider, from, to) => read(model, provider, from, to, 5));
    try {
      const busy = await status('test/busy');
      // 5 minutes ago may still be the previous hour: the current one decides here either way.
      const previousHourInWindow = new Date(now - 5 * 60_000).toISOString().slice(0, 13) !== new Date(now).toISOString().slice(0, 13);
      expect(busy.uptime_last_5m).toBe(previousHourInWindow ? 75 : 50);
      expect(busy.latency_last_30m).not.toBeNull();
      expect(store.logs.some((line) => line.includes('endpoint rollups truncated') && line.includes('test/busy@p-busy'))).toBe(true);
    } finally {
      limited.mockRestore();
    }
  });
});

describe('latency percentiles', () => {
  it('reports a first token after 16 s by a bound it did not beat, not as 16000 ms', async () => {
    const now = new Date();
    for (let i = 0; i < 3; i += 1) await settleRollup(generation('test/sluggish', 'p-sluggish', now, { first_token_ms: 20_000, latency_ms: 21_000 }));
    const sluggish = await status('test/sluggish');
    expect(sluggish.latency_last_30m).toEqual({ p50: 32_000, p75: 32_000, p90: 32_000, p99: 32_000 });
  });
});
