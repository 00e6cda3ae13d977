// Hostile input through the local server with the real Lambda handlers over DynamoDB Local: duplicate
// credentials, path parameters that do not match their pattern, input echoed in errors, and the
// headers every reply carries.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect } from 'node:net';
import { installAwsLambdaShim } from '../../bin/local/awslambda-shim.js';
import { startLocalServer, type BufferedHandler, type LocalServer, type StreamingHandler } from '../../bin/local/server.js';
import { startSimulator, type Simulator } from '../../bin/simulator/server.js';
import { createTestStore, type TestStore } from '../support/store.js';
import { createTenant } from '../support/tenants.js';

let gateway: LocalServer;
let store: TestStore;
let simulator: Simulator;
let regular: string;
let management: string;
const savedEnv = { ...process.env };

beforeAll(async () => {
  simulator = await startSimulator({ port: 0 });
  store = await createTestStore();
  const tenant = await createTenant(store.deps);
  regular = (await tenant.addKey('standard')).text;
  management = (await tenant.addKey('management')).text;
  process.env.TABLE_NAME = store.tableName;
  process.env.DYNAMODB_ENDPOINT = store.endpoint;
  process.env.SIMULATOR_URL = simulator.url;
  installAwsLambdaShim();
  // One after the other: Jest's ESM loader fails on concurrent imports that share modules.
  const { handler: inference } = await import('../../lambdas/handlers/inference.js');
  const { handler: managementHandler } = await import('../../lambdas/handlers/management.js');
  gateway = await startLocalServer({
    port: 0,
    handlers: { inference: inference as unknown as StreamingHandler, management: managementHandler as unknown as BufferedHandler },
    log: () => undefined,
  });
});

afterAll(async () => {
  await gateway?.close();
  await store.drop();
  await simulator.close();
  process.env = savedEnv;
});

interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

function unchunk(raw: Buffer): string {
  const parts: Buffer[] = [];
  let rest = raw;
  for (;;) {
    const at = rest.indexOf('\r\n');
    const size = parseInt(rest.subarray(0, at).toString(), 16);
    if (!size) return Buffer.concat(parts).toString('utf8');
    parts.push(rest.subarray(at + 2, at + 2 + size));
    rest = rest.subarray(at + 2 + size + 2);
  }
}

/** One HTTP/1.1 request written byte for byte, so that headers can repeat as a client may send them. */
function rawRequest(head: string[], body = ''): Promise<RawReply> {
  const { port } = new URL(gateway.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const all = Buffer.concat(chunks);
      const split = all.indexOf('\r\n\r\n');
      const [statusLine, ...headerLines] = all.subarray(0, split).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const at = line.indexOf(':');
        headers[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim();
      }
      const raw = all.subarray(split + 4);
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body: headers['transfer-encoding'] === 'chunked' ? unchunk(raw) : raw.toString('utf8') });
    });
    socket.write([...head, 'Host: 127.0.0.1', 'Connection: close', `Content-Length: ${Buffer.byteLength(body)}`, '', body].join('\r\n'));
  });
}

describe('duplicate credentials', () => {
  it('refuses two Authorization headers with 401, whichever comes first, as API Gateway does', async () => {
    for (const [first, second] of [[regular, management], [management, regular], [management, management]]) {
      const reply = await rawRequest(['GET /api/v1/key HTTP/1.1', `Authorization: Bearer ${first}`, `Authorization: Bearer ${second}`]);
      expect(reply.status).toBe(401);
      expect(JSON.parse(reply.body)).toEqual({ error: { code: 401, message: expect.stringMatching(/More than one credential/) } });
    }
    // Inference too: the regular key does not get through with a management key beside it.
    const chat = await rawRequest(['POST /api/v1/chat/completions HTTP/1.1', `Authorization: Bearer ${regular}`, `Authorization: Bearer ${management}`, 'Content-Type: application/json'],
      JSON.stringify({ model: 'simulator/echo', messages: [{ role: 'user', content: 'hi' }] }));
    expect(chat.status).toBe(401);
    // One header still works.
    expect((await rawRequest(['GET /api/v1/key HTTP/1.1', `Authorization: Bearer ${management}`])).status).toBe(200);
  });
});
