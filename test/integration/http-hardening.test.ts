// Hostile input through the local server with the real Lambda handlers over DynamoDB Local: duplicate
// credentials, path parameters that do not match their pattern, input echoed in errors, and the
// headers every reply carries.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect } from 'node:net';
import type { LocalServer } from '../../bin/local/server.js';
import { startHandlerServer } from '../support/handler-server.js';
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
  gateway = await startHandlerServer();
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

describe('a connection broken right after a request\'s body', () => {
  it('leaves no request in flight, with or without a key, whatever the route (bytes after the body that are not HTTP)', async () => {
    const { port } = new URL(gateway.url);
    const big = 'x'.repeat(1_000_000);
    const sends = [regular, undefined].flatMap((key) => ['/api/v1/chat/completions', '/api/v1/keys'].map((path) => [
      `POST ${path} HTTP/1.1`, 'Host: x', ...(key ? [`Authorization: Bearer ${key}`] : []), 'Content-Type: application/json',
      `Content-Length: ${big.length}`, 'Connection: close', '', `${big}JUNKJUNK`,
    ].join('\r\n')));
    await Promise.all(sends.map((text) => new Promise<void>((resolve) => {
      const socket = connect(Number(port), '127.0.0.1', () => socket.end(text));
      socket.on('data', () => undefined);
      socket.on('close', () => resolve());
      socket.on('error', () => resolve());
    })));
    const deadline = Date.now() + 5000;
    while (gateway.inFlight > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(gateway.inFlight).toBe(0);
  });
});

describe('bodies that are not UTF-8', () => {
  it('are refused with a 400 on inference and management routes, JSON content type or not, and nothing is charged', async () => {
    const bytes = (text: string) => Buffer.concat([Buffer.from(text.slice(0, text.indexOf('@'))), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(text.slice(text.indexOf('@') + 1))]);
    const before = await (await fetch(`${gateway.url}/api/v1/key`, { headers: { authorization: `Bearer ${regular}` } })).json() as { data: { usage: number } };
    const sends: Array<[string, string, Buffer]> = [
      ['/api/v1/chat/completions', regular, bytes('{"model":"simulator/echo","messages":[{"role":"user","content":"a@"}]}')],
      ['/api/v1/responses', regular, bytes('{"model":"simulator/echo","input":"a@"}')],
      ['/api/v1/keys', management, bytes('{"name":"a@"}')],
    ];
    for (const [path, key, body] of sends) {
      for (const type of ['application/json', 'text/plain', 'application/octet-stream']) {
        const reply = await fetch(`${gateway.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': type }, body });
        expect([path, type, reply.status]).toEqual([path, type, 400]);
        expect(await reply.text()).toContain('not valid UTF-8');
      }
    }
    const after = await (await fetch(`${gateway.url}/api/v1/key`, { headers: { authorization: `Bearer ${regular}` } })).json() as { data: { usage: number } };
    expect(after.data.usage).toBe(before.data.usage);
  });
});

describe('path parameters', () => {
  it('refuses a parameter that does not match its pattern with 400 naming it, without echoing it, before authentication', async () => {
    for (const [path, name] of [
      ['/api/v1/keys/%3Cscript%3E', 'hash'],
      [`/api/v1/keys/${'A'.repeat(64)}`, 'hash'],
      ['/api/v1/workspaces/%3Cscript%3E', 'id'],
      ['/api/v1/workspaces/Default/budgets', 'workspace_ref'],
      ['/api/v1/workspaces/default/budgets/%3Cscript%3E', 'interval'],
      ['/api/v1/byok/%3Cscript%3E', 'id'],
      ['/api/v1/interns/%3Cscript%3E', 'internId'],
      ['/api/v1/vault/secrets/%3Cscript%3E', 'name'],
      ['/api/v1/models/%3Cscript%3E/echo', 'author'],
      ['/api/v1/models/simulator/%3Cscript%3E/endpoints', 'slug'],
    ] as const) {
      // No key at all: the pattern is checked first, so nothing is looked up for a malformed identifier.
      const reply = await rawRequest([`GET ${path} HTTP/1.1`]);
      expect([path, reply.status]).toEqual([path, 400]);
      const body = JSON.parse(reply.body) as { error: { code: number; message: string; metadata: { parameter: string } } };
      expect(body.error.message).toMatch(new RegExp(`^Invalid path parameter ${name}: expected `));
      // Intern routes add reason and retryable (the SDK's InternLifecycleError); the parameter is named everywhere.
      expect(body.error.metadata).toMatchObject({ parameter: name });
      expect(reply.body).not.toContain('script');
      expect(reply.body).not.toContain('AAAA');
    }
  });

  it('keeps valid identifiers working and over-long ones answering 404', async () => {
    const hash = 'a'.repeat(64);
    expect((await rawRequest([`GET /api/v1/keys/${hash} HTTP/1.1`, `Authorization: Bearer ${management}`])).status).toBe(404);
    expect((await rawRequest(['GET /api/v1/workspaces/default/budgets HTTP/1.1', `Authorization: Bearer ${management}`])).status).toBe(200);
    expect((await rawRequest([`GET /api/v1/keys/${'a'.repeat(600)} HTTP/1.1`, `Authorization: Bearer ${management}`])).status).toBe(404);
  });
});

describe('input echoed in errors', () => {
  it('keeps the 400 for a 10,000-character unknown field small', async () => {
    const field = 'x'.repeat(10_000);
    const reply = await rawRequest(['POST /api/v1/keys HTTP/1.1', `Authorization: Bearer ${management}`, 'Content-Type: application/json'], JSON.stringify({ name: 'k', [field]: 1 }));
    expect(reply.status).toBe(400);
    expect(Buffer.byteLength(reply.body)).toBeLessThan(1024);
    expect(JSON.parse(reply.body).error.message).toMatch(/^Invalid body: unknown field\(s\) "x{64}…"$/);
  });

  it('keeps the 400 for ten thousand unknown fields and the 404 for a long unknown path small', async () => {
    const fields = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`field_${'y'.repeat(50)}_${i}`, i]));
    const many = await rawRequest(['POST /api/v1/keys HTTP/1.1', `Authorization: Bearer ${management}`, 'Content-Type: application/json'], JSON.stringify({ name: 'k', ...fields }));
    expect(many.status).toBe(400);
    expect(Buffer.byteLength(many.body)).toBeLessThan(2048);
    expect(JSON.parse(many.body).error.message).toContain('and 9995 more');
    const lost = await rawRequest([`GET /api/v1/${'z'.repeat(8000)} HTTP/1.1`]);
    expect(lost.status).toBe(404);
    expect(Buffer.byteLength(lost.body)).toBeLessThan(512);
  });
});

describe('X-Content-Type-Options: nosniff', () => {
  it('is on every reply: JSON, error envelopes, inference JSON and streams, and the local server\'s own replies', async () => {
    const chat = (stream: boolean) => rawRequest(['POST /api/v1/chat/completions HTTP/1.1', `Authorization: Bearer ${regular}`, 'Content-Type: application/json'],
      JSON.stringify({ model: 'simulator/echo', stream, messages: [{ role: 'user', content: 'hi' }] }));
    const replies: Array<[string, RawReply]> = [
      ['management JSON', await rawRequest(['GET /api/v1/models HTTP/1.1'])],
      ['management error', await rawRequest(['GET /api/v1/keys HTTP/1.1'])],
      ['unknown route', await rawRequest(['GET /api/v1/nowhere HTTP/1.1'])],
      ['inference JSON', await chat(false)],
      ['inference stream', await chat(true)],
      ['inference error', await rawRequest(['POST /api/v1/chat/completions HTTP/1.1', 'Content-Type: application/json'], '{}')],
      ['preflight', await rawRequest(['OPTIONS /api/v1/chat/completions HTTP/1.1', 'Origin: https://app.example', 'Access-Control-Request-Method: POST'])],
      ['413', await rawRequest(['POST /api/v1/keys HTTP/1.1', `Authorization: Bearer ${management}`, 'Content-Type: application/json'], JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }))],
      ['400 bad HTTP', await rawRequest(['GET /api/v1/models HTTP/1.1', 'Bad Header Without Colon'])],
    ];
    for (const [what, reply] of replies) {
      expect([what, reply.status > 0, reply.headers['x-content-type-options']]).toEqual([what, true, 'nosniff']);
    }
    expect(replies.map(([what, reply]) => [what, reply.status])).toEqual([
      ['management JSON', 200], ['management error', 401], ['unknown route', 404], ['inference JSON', 200], ['inference stream', 200],
      ['inference error', 401], ['preflight', 204], ['413', 413], ['400 bad HTTP', 400],
    ]);
  });
});
