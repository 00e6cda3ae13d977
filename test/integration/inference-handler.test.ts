// The real inference Lambda handler (middy streamifyResponse) behind the local server: generation records
// written after the reply has ended, and a client that goes away mid-stream aborting the upstream request.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, request, type Server } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LocalServer } from '../../bin/local/server.js';
import { startHandlerServer } from '../support/handler-server.js';
import { createTestStore, type TestStore } from '../support/store.js';
import { createTenant } from '../support/tenants.js';
import { startSimulator, type Simulator } from '../../bin/simulator/server.js';
import { usdToNanos } from '../../lambdas/platform/money.js';
import { itemKeys } from '../../lambdas/platform/dynamo/item-keys.js';
import { defaultDeps } from '../../lambdas/app/deps.js';

let upstream: Server;
let upstreamClosedAt: number | undefined;
let upstreamOpenedAt: number | undefined;
let hangOpenedAt: number | undefined;
let hangClosedAt: number | undefined;
let gateway: LocalServer;
let store: TestStore;
let key: string;
let simulator: Simulator;
const savedEnv = { ...process.env };

beforeAll(async () => {
  // An OpenAI-style upstream that streams a chunk every 50 ms for as long as the connection stays open.
  upstream = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if ((JSON.parse(Buffer.concat(chunks).toString()) as { model: string }).model === 'hang') {
        // Never answer; note when the gateway closes the connection.
        hangOpenedAt = Date.now();
        res.on('close', () => { hangClosedAt = Date.now(); });
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if ((JSON.parse(Buffer.concat(chunks).toString()) as { model: string }).model === 'stall') {
        // One chunk, then silence with the connection held open.
        res.write(`data: ${JSON.stringify({ id: 'y', choices: [{ index: 0, delta: { content: 'and then nothing' }, finish_reason: null }] })}\n\n`);
        return;
      }
      upstreamOpenedAt = Date.now();
      const timer = setInterval(() => {
        res.write(`data: ${JSON.stringify({ id: 'x', choices: [{ index: 0, delta: { content: 'tick ' }, finish_reason: null }] })}\n\n`);
      }, 50);
      res.on('close', () => {
        clearInterval(timer);
        upstreamClosedAt = Date.now();
      });
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const port = (upstream.address() as { port: number }).port;
  const catalogFile = join(mkdtempSync(join(tmpdir(), 'gateway-catalog-')), 'catalog.json');
  writeFileSync(catalogFile, JSON.stringify({
    models: [
      { id: 'test/slow', endpoints: [{ provider: 'slow', adapter: 'openai-chat', base_url: `http://127.0.0.1:${port}/v1`, upstream_model: 'slow', pricing: { prompt: '0.000001', completion: '0.000001' }, context_length: 1000 }] },
      { id: 'test/hang', endpoints: [{ provider: 'hang', adapter: 'openai-chat', base_url: `http://127.0.0.1:${port}/v1`, upstream_model: 'hang', pricing: { prompt: '0.000001', completion: '0.000001' }, context_length: 1000 }] },
      { id: 'test/stall', endpoints: [{ provider: 'stall', adapter: 'openai-chat', base_url: `http://127.0.0.1:${port}/v1`, upstream_model: 'stall', pricing: { prompt: '0.000001', completion: '0.000001' }, context_length: 1000 }] },
    ],
  }));

  simulator = await startSimulator({ port: 0 });
  store = await createTestStore();
  key = (await (await createTenant(store.deps)).addKey('standard')).text;
  process.env.TABLE_NAME = store.tableName;
  process.env.DYNAMODB_ENDPOINT = store.endpoint;
  process.env.GATEWAY_CATALOG_FILE = catalogFile;
  process.env.SIMULATOR_URL = simulator.url;
  process.env.GATEWAY_STREAM_IDLE_TIMEOUT_MS = '300';
  gateway = await startHandlerServer();
});

afterAll(async () => {
  await gateway?.close();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
  await store.drop();
  await simulator.close();
  process.env = savedEnv;
});

async function waitForRecord(id: string) {
  const deadline = Date.now() + 3000;
  for (;;) {
    const found = await store.deps.engine.generations.get(id);
    if (found || Date.now() > deadline) return found;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('generation records', () => {
  it('stores the record of a JSON reply and of a streamed reply after the reply ends', async () => {
    const post = (stream: boolean) => fetch(`${gateway.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'simulator/echo', stream, messages: [{ role: 'user', content: 'record me' }] }),
    });
    const json = await post(false);
    const reply = await json.json() as { id: string; usage: { cost: number; prompt_tokens: number } };
    const record = await waitForRecord(reply.id);
    expect(record).toMatchObject({ id: reply.id, model: 'simulator/echo', status: 'completed', streamed: false, usage: { input_tokens: reply.usage.prompt_tokens } });
    // 3 prompt tokens at $1/M and 3 completion tokens at $2/M: the reply's cost and the record's agree exactly.
    expect(record!.cost.total).toBe(9_000n);
    expect(usdToNanos(reply.usage.cost)).toBe(record!.cost.total);

    const streamed = await post(true);
    const id = streamed.headers.get('x-generation-id')!;
    expect(await streamed.text()).toContain('data: [DONE]');
    expect(await waitForRecord(id)).toMatchObject({ id, status: 'completed', streamed: true, finish_reason: 'stop' });
  });
});

describe('page flush at the end of an invocation', () => {
  it('writes the page when the last invocation ends, unless pages are shared (npm start), where the writer\'s short wait writes it', async () => {
    const pages = (await defaultDeps()).engine.pages;
    const flush = pages.flush.bind(pages);
    let flushes = 0;
    pages.flush = async () => {
      flushes += 1;
      await flush();
    };
    const post = async () => {
      const reply = await fetch(`${gateway.url}/api/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'simulator/echo', messages: [{ role: 'user', content: 'page me' }] }),
      });
      return ((await reply.json()) as { id: string }).id;
    };
    try {
      // As on Lambda: the invocation writes its page itself before it ends.
      const own = await post();
      expect(await waitForRecord(own)).toMatchObject({ id: own });
      expect(flushes).toBe(1);
      // Shared pages: no flush; the record is stored all the same once the writer's wait is over.
      pages.shared = true;
      const shared = await post();
      expect(await waitForRecord(shared)).toMatchObject({ id: shared });
      expect(flushes).toBe(1);
    } finally {
      pages.shared = false;
      pages.flush = flush;
    }
  });
});

describe('client disconnect', () => {
  it('aborts the upstream request within 1 s of the client going away', async () => {
    let generationId = '';
    const disconnectedAt = await new Promise<number>((resolve, reject) => {
      const req = request(`${gateway.url}/api/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      }, (res) => {
        expect(res.statusCode).toBe(200);
        generationId = String(res.headers['x-generation-id']);
        let chunks = 0;
        res.on('data', () => {
          chunks += 1;
          if (chunks === 3) {
            req.destroy();
            resolve(Date.now());
          }
        });
      });
      req.on('error', (err) => { if (!req.destroyed) reject(err); });
      req.end(JSON.stringify({ model: 'test/slow', stream: true, messages: [{ role: 'user', content: 'go' }] }));
    });
    const deadline = Date.now() + 5000;
    while (upstreamClosedAt === undefined && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(upstreamOpenedAt).toBeDefined();
    expect(upstreamClosedAt).toBeDefined();
    expect(upstreamClosedAt! - disconnectedAt).toBeLessThan(1000);
    // The cancelled generation is still recorded, with what was produced before the client left.
    expect(await waitForRecord(generationId)).toMatchObject({ id: generationId, status: 'cancelled', streamed: true });
  });
});

describe('client disconnect from a non-streaming request', () => {
  const rawItem = async (itemKey: { pk: string; sk: string }) => (await store.item(itemKey))!;

  it('aborts the upstream request within 1 s and settles the hold at the estimated prompt cost', async () => {
    const tenant = await createTenant(store.deps);
    const own = await tenant.addKey('standard');
    const req = request(`${gateway.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${own.text}`, 'content-type': 'application/json' },
    });
    req.on('error', () => undefined);
    req.end(JSON.stringify({ model: 'test/hang', messages: [{ role: 'user', content: 'go' }] }));
    const opened = Date.now() + 5000;
    while (hangOpenedAt === undefined && Date.now() < opened) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(hangOpenedAt).toBeDefined();
    // The request is held and waiting on the provider; the client goes away.
    expect(Number((await rawItem(itemKeys.organization(tenant.orgId))).held)).toBeGreaterThan(0);
    const disconnectedAt = Date.now();
    req.destroy();
    const deadline = Date.now() + 5000;
    while (hangClosedAt === undefined && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(hangClosedAt).toBeDefined();
    expect(hangClosedAt! - disconnectedAt).toBeLessThan(1000);
    // The provider read the prompt (and may finish the generation): the hold is settled, not given back,
    // at an estimate of the prompt with no output, and the record says so.
    let records = await store.records(tenant.orgId);
    while (records.length === 0 && Date.now() < deadline) records = await store.records(tenant.orgId);
    // The handler's process gives its leases back (as it would stopping), and every record is applied.
    await (await defaultDeps()).engine.leases?.returnAll();
    await store.converge();
    const org = await rawItem(itemKeys.organization(tenant.orgId));
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ status: 'cancelled', streamed: false, usage_estimated: true, usage: { output_tokens: 0 } });
    const cost = Number(records[0]!.cost.total);
    expect(cost).toBeGreaterThan(0);
    const apiKey = await rawItem(itemKeys.apiKey(own.key.hash));
    expect({ held: Number(org.held), usage: Number(org.total_usage ?? 0), keyHeld: Number(apiKey.held), keyUsage: Number(apiKey.usage_total ?? 0) })
      .toEqual({ held: 0, usage: cost, keyHeld: 0, keyUsage: cost });
  });
});

describe('stalled upstream stream', () => {
  it('ends with an error event once the stream has been silent for the idle timeout', async () => {
    const started = Date.now();
    const reply = await fetch(`${gateway.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test/stall', stream: true, messages: [{ role: 'user', content: 'go' }] }),
    });
    expect(reply.status).toBe(200);
    const text = await reply.text();
    expect(Date.now() - started).toBeLessThan(3000);
    expect(text).toContain('and then nothing');
    expect(text).toContain('"finish_reason":"error"');
    expect(text).toContain('stalled');
    expect(text).not.toContain('[DONE]');
    const id = reply.headers.get('x-generation-id')!;
    expect(await waitForRecord(id)).toMatchObject({ id, status: 'error', error: { status: 408 } });
  });
});
