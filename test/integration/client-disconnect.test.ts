// A client that goes away mid-stream: the gateway aborts the upstream request within a second, through the
// real inference handler (middy streamifyResponse) behind the local server.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, request, type Server } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installAwsLambdaShim } from '../../bin/local/awslambda-shim.js';
import { startLocalServer, type BufferedHandler, type LocalServer, type StreamingHandler } from '../../bin/local/server.js';
import { createTestStore, type TestStore } from '../support/store.js';
import { createTenant } from '../support/tenants.js';

let upstream: Server;
let upstreamClosedAt: number | undefined;
let upstreamOpenedAt: number | undefined;
let gateway: LocalServer;
let store: TestStore;
let key: string;
const savedEnv = { ...process.env };

beforeAll(async () => {
  // An OpenAI-style upstream that streams a chunk every 50 ms for as long as the connection stays open.
  upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      upstreamOpenedAt = Date.now();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
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
    models: [{ id: 'test/slow', endpoints: [{ provider: 'slow', adapter: 'openai-chat', base_url: `http://127.0.0.1:${port}/v1`, upstream_model: 'slow', pricing: { prompt: '0.000001', completion: '0.000001' }, context_length: 1000 }] }],
  }));

  store = await createTestStore();
  key = (await (await createTenant(store.deps)).addKey('standard')).text;
  process.env.TABLE_NAME = store.tableName;
  process.env.DYNAMODB_ENDPOINT = store.endpoint;
  process.env.GATEWAY_CATALOG_FILE = catalogFile;
  installAwsLambdaShim();
  const [{ handler: inference }, { handler: management }] = await Promise.all([
    import('../../lambdas/handlers/inference.js'),
    import('../../lambdas/handlers/management.js'),
  ]);
  gateway = await startLocalServer({
    port: 0,
    handlers: { inference: inference as unknown as StreamingHandler, management: management as unknown as BufferedHandler },
    log: () => undefined,
  });
});

afterAll(async () => {
  await gateway?.close();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
  await store.drop();
  process.env = savedEnv;
});

describe('client disconnect', () => {
  it('aborts the upstream request within 1 s of the client going away', async () => {
    const disconnectedAt = await new Promise<number>((resolve, reject) => {
      const req = request(`${gateway.url}/api/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      }, (res) => {
        expect(res.statusCode).toBe(200);
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
  });
});
