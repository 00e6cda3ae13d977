// The local server: Lambda events built from real HTTP requests, and streaming handlers whose bytes
// reach the client as they are written (through middy's streamifyResponse and the awslambda shim).
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PassThrough } from 'node:stream';
import { request } from 'node:http';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { installAwsLambdaShim } from '../../bin/local/awslambda-shim.js';
import { startLocalServer, type BufferedHandler, type LocalServer, type RequestDone, type StreamingHandler } from '../../bin/local/server.js';
import { waitFor } from '../support/wait.js';

installAwsLambdaShim();
const { default: middy } = await import('@middy/core');

let server: LocalServer;
let lastEvent: APIGatewayProxyEventV2 | undefined;
let stream: PassThrough | undefined;
let streamClosed: Promise<void> | undefined;

const management: BufferedHandler = async (event) => {
  lastEvent = event;
  return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ok: true }) };
};

const inference = middy({ streamifyResponse: true }).handler(async () => {
  stream = new PassThrough();
  streamClosed = new Promise((resolve) => stream!.once('close', () => resolve()));
  return { statusCode: 200, headers: { 'content-type': 'text/event-stream' }, body: stream };
}) as unknown as StreamingHandler;

beforeAll(async () => {
  server = await startLocalServer({ port: 0, handlers: { inference, management }, maxBodyBytes: 1024, log: () => undefined });
});
afterAll(() => server.close());

/** A request written as raw bytes (`head`: request line and headers), and everything the server sends back before it closes. */
function rawExchange(head: string): Promise<string> {
  const { port } = new URL(server.url);
  return new Promise<string>((resolve) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    let text = '';
    socket.on('data', (chunk: Buffer) => { text += chunk.toString(); });
    socket.on('close', () => resolve(text));
    socket.end(`${head}\r\n\r\n`);
  });
}

/** The error envelope in a raw reply's (possibly chunked) body. */
function envelopeOf(reply: string): Record<string, unknown> {
  return (JSON.parse(/\{.*\}/s.exec(reply.slice(reply.indexOf('\r\n\r\n')))![0]) as { error: Record<string, unknown> }).error;
}

function rawRequest(path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  return fetch(`${server.url}${path}`, { method: init.method ?? 'GET', headers: init.headers, body: init.body });
}

describe('local server', () => {
  it('builds the API Gateway v2 event from the HTTP request', async () => {
    const reply = await rawRequest('/api/v1/keys?offset=5&x=a%20b', { method: 'POST', headers: { authorization: 'Bearer t', 'content-type': 'application/json', cookie: 'a=1; b=2' }, body: '{"name":"n"}' });
    expect(reply.status).toBe(200);
    expect(lastEvent).toMatchObject({
      version: '2.0',
      rawPath: '/api/v1/keys',
      rawQueryString: 'offset=5&x=a%20b',
      queryStringParameters: { offset: '5', x: 'a b' },
      cookies: ['a=1', 'b=2'],
      body: '{"name":"n"}',
      isBase64Encoded: false,
      requestContext: { http: { method: 'POST', path: '/api/v1/keys' }, stage: '$default' },
    });
    expect(lastEvent!.headers.authorization).toBe('Bearer t');
  });

  it('joins repeated headers and query parameters as API Gateway does, own names only', async () => {
    const { port } = new URL(server.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    const reply = new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (text.includes('\r\n\r\n')) resolve(text);
      });
    });
    socket.end('GET /api/v1/keys?constructor=1&a=x&a=y&__proto__=z HTTP/1.1\r\nHost: localhost\r\nX-Dup: one\r\nx-dup: two\r\nConstructor: c\r\nCookie: a=1\r\nCookie: b=2\r\nConnection: close\r\n\r\n');
    expect(await reply).toMatch(/^HTTP\/1\.1 200/);
    expect(lastEvent!.headers['x-dup']).toBe('one,two');
    expect(lastEvent!.headers.constructor).toBe('c');
    expect(lastEvent!.cookies).toEqual(['a=1', 'b=2']);
    expect(lastEvent!.queryStringParameters).toEqual({ constructor: '1', a: 'x,y' });
    expect(Object.getPrototypeOf(lastEvent!.queryStringParameters)).toBe(Object.prototype);
  });

  it('answers an absolute-form request target whose host cannot be parsed with a 400 envelope, and serves one that can', async () => {
    const get = (target: string) => rawExchange(`GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close`);
    for (const target of ['http://[bad/api/v1/models', 'http://a:99999/api/v1/keys', 'http://%zz/health']) {
      const reply = await get(target);
      expect(reply).toMatch(/^HTTP\/1\.1 400/);
      expect(envelopeOf(reply)).toMatchObject({ code: 400, message: 'Bad request target: not a path or a URL' });
    }
    expect(await get('http://localhost/api/v1/keys')).toMatch(/^HTTP\/1\.1 200/);
  });

  it('answers a request without Host, and an Expect it cannot meet, with the envelope (not Node\'s empty replies)', async () => {
    const hostless = await rawExchange('GET /api/v1/keys HTTP/1.1\r\nConnection: close');
    expect(hostless).toMatch(/^HTTP\/1\.1 400/);
    expect(envelopeOf(hostless)).toEqual({ code: 400, message: 'Bad request: HTTP/1.1 requires a Host header' });
    const expectation = await rawExchange('POST /api/v1/keys HTTP/1.1\r\nHost: x\r\nExpect: bogus\r\nContent-Length: 2\r\nConnection: close');
    expect(expectation).toMatch(/^HTTP\/1\.1 417/);
    expect(envelopeOf(expectation)).toMatchObject({ code: 417 });
    // HTTP/1.0 has no Host requirement.
    expect(await rawExchange('GET /api/v1/keys HTTP/1.0')).toMatch(/^HTTP\/1\.1 200/);
  });

  it('answers CORS preflight itself and lets any origin read replies', async () => {
    const preflight = await rawRequest('/api/v1/chat/completions', { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization');
    const reply = await rawRequest('/api/v1/keys', { headers: { origin: 'https://app.example' } });
    expect(reply.headers.get('access-control-allow-origin')).toBe('*');
    expect(reply.headers.get('access-control-expose-headers')).toContain('x-generation-id');
  });

  it('passes binary bodies base64-encoded', async () => {
    await rawRequest('/api/v1/keys', { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: '\u0001\u0002' });
    expect(lastEvent).toMatchObject({ isBase64Encoded: true, body: Buffer.from([1, 2]).toString('base64') });
  });

  it('passes a text body that is not UTF-8 base64-encoded, so that its bytes reach the handler as sent', async () => {
    const bytes = Buffer.concat([Buffer.from('{"name":"a'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}')]);
    await fetch(`${server.url}/api/v1/keys`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bytes });
    expect(lastEvent).toMatchObject({ isBase64Encoded: true, body: bytes.toString('base64') });
    await rawRequest('/api/v1/keys', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"é"}' });
    expect(lastEvent).toMatchObject({ isBase64Encoded: false, body: '{"name":"é"}' });
  });

  it('answers 413 itself, with the envelope, for bodies over its cap', async () => {
    const reply = await rawRequest('/api/v1/keys', { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'x'.repeat(2048) });
    expect(reply.status).toBe(413);
    expect(await reply.json()).toMatchObject({ error: { code: 413 } });
  });

  it('answers 413 with the envelope to a chunked body past its drain cap (64 MB) while the client still sends, before the connection closes', async () => {
    const reply = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      let answered = false;
      const req = request(`${server.url}/api/v1/keys`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        answered = true;
        let body = '';
        res.on('data', (chunk: Buffer) => { body += chunk.toString(); });
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      // Once the reply has come, the closed connection's write errors are expected.
      req.on('error', (err) => { if (!answered) reject(err); });
      // No Content-Length: node sends it chunked, 1 MB at a time, up to 200 MB (never all of it).
      const chunk = Buffer.alloc(1024 * 1024, 0x61);
      let sent = 0;
      const send = () => {
        while (sent < 200) {
          sent += 1;
          if (!req.write(chunk)) {
            req.once('drain', send);
            return;
          }
        }
        req.end();
      };
      send();
    });
    expect(reply.status).toBe(413);
    expect(JSON.parse(reply.body)).toMatchObject({ error: { code: 413 } });
  });

  it('answers a declared body past the drain cap with a 413 and still closes the connection of a client that never stops sending (the lingering close has an end)', async () => {
    const { connect } = await import('node:net');
    const url = new URL(server.url);
    const seen = await new Promise<{ reply: string; closedWhileSending: boolean }>((resolve) => {
      // A declared size over the drain cap: the 413 goes out before any of the body is read.
      const socket = connect(Number(url.port), url.hostname, () => {
        socket.write('POST /api/v1/keys HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n');
      });
      let reply = '';
      let sending = true;
      const piece = Buffer.alloc(64 * 1024, 0x61);
      const trickle = setInterval(() => { if (sending) socket.write(piece, () => undefined); }, 20);
      socket.on('data', (chunk) => { reply += chunk.toString(); });
      socket.on('error', () => undefined);
      socket.on('close', () => {
        const closedWhileSending = sending;
        sending = false;
        clearInterval(trickle);
        resolve({ reply, closedWhileSending });
      });
    });
    expect(seen.reply).toMatch(/^HTTP\/1\.1 413/);
    expect(seen.reply).toContain('connection: close');
    expect(seen.reply).toContain('"code":413');
    // The client never ended its side: the server closed the connection after reading and dropping for a while.
    expect(seen.closedWhileSending).toBe(true);
  });

  it('answers malformed HTTP with a 400 envelope and keeps serving', async () => {
    const { connect } = await import('node:net');
    const url = new URL(server.url);
    const raw = await new Promise<string>((resolve) => {
      const socket = connect(Number(url.port), url.hostname, () => socket.write('GARBAGE\r\n\r\n'));
      let data = '';
      socket.on('data', (chunk) => { data += chunk.toString(); });
      socket.on('close', () => resolve(data));
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400/);
    expect(raw).toContain('"code":400');
    expect((await rawRequest('/health')).status).toBe(200);
  });

  it('lets go of a request whose connection broke right after its body (bytes after it that are not HTTP): nothing stays in flight', async () => {
    // A cap large enough for a body that arrives in many reads.
    const roomy = await startLocalServer({ port: 0, handlers: { inference, management }, maxBodyBytes: 4 * 1024 * 1024, log: () => undefined });
    const url = new URL(roomy.url);
    const big = 'x'.repeat(1_000_000);
    const sends = [
      `POST /api/v1/keys HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${big.length}\r\nConnection: close\r\n\r\n${big}JUNKJUNK`,
      // The body complete by its Content-Length, then bytes the parser refuses (after Connection: close).
      'POST /api/v1/keys HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10\r\nConnection: close\r\n\r\n{"name":"xJUNK',
      'POST /api/v1/keys HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 0\r\nConnection: close\r\n\r\nJUNK',
      // A chunked body broken mid-way (a chunk size that is not hex): the request ends without its body.
      'POST /api/v1/keys HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{"a"\r\nZZ\r\nxx\r\n',
      // A keep-alive connection: the same with a request line that is not one.
      'POST /api/v1/keys HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4\r\n\r\n{"a"\x01\x02 NOT HTTP\r\n\r\n',
    ];
    for (const text of sends) {
      const raw = await new Promise<string>((resolve) => {
        const socket = net.connect(Number(url.port), url.hostname, () => socket.write(text));
        let data = '';
        socket.on('data', (chunk) => { data += chunk.toString(); });
        socket.on('close', () => resolve(data));
      });
      expect(raw).toMatch(/^HTTP\/1\.1 (400|200)/);
    }
    try {
      await waitFor(() => roomy.inFlight === 0, { timeoutMs: 5000, what: 'no request in flight' });
    } finally {
      await roomy.close();
    }
  });
});

describe('streaming through the awslambda shim', () => {
  it('delivers each written chunk before the next one is produced, and ends the stream', async () => {
    const streamingServer = await startLocalServer({ port: 0, handlers: { inference, management: inferenceOnly }, log: () => undefined });
    try {
      const received: string[] = [];
      const done = new Promise<{ status: number; type: string }>((resolve, reject) => {
        const req = request(`${streamingServer.url}/api/v1/chat/completions`, { method: 'POST' }, (res) => {
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            received.push(chunk);
            if (received.length === 1) stream!.write('data: second\n\n');
            if (received.length === 2) stream!.end();
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']) }));
        });
        req.on('error', reject);
        req.end('{}');
      });
      // The first chunk is written only once the handler is running; the second only after the client saw the first.
      await waitFor(() => stream !== undefined);
      stream!.write('data: first\n\n');
      const result = await done;
      expect(result).toEqual({ status: 200, type: 'text/event-stream' });
      expect(received).toEqual(['data: first\n\n', 'data: second\n\n']);
    } finally {
      stream = undefined;
      await streamingServer.close();
    }
  });

  it('tears the handler\'s stream down when the client goes away', async () => {
    const req = request(`${server.url}/api/v1/chat/completions`, { method: 'POST' }, (res) => {
      res.once('data', () => req.destroy());
    });
    req.on('error', () => undefined);
    req.end('{}');
    await waitFor(() => stream !== undefined);
    stream!.write('data: hello\n\n');
    await streamClosed;
    expect(stream!.destroyed).toBe(true);
  });
});

// Inference paths must reach the streaming slot: a management handler that answers 599 would show a misroute.
const inferenceOnly: BufferedHandler = async () => ({ statusCode: 599, body: 'wrong function' });

describe('local server, after the handler', () => {
  const done: RequestDone[] = [];
  const lines: string[] = [];
  let mode: 'deferred' | 'fails-after-first-byte' | 'fails-before' | 'left-open' = 'deferred';
  let handlerEnded = 0;
  let other: LocalServer;
  const handler: StreamingHandler = async (_event, res) => {
    if (mode === 'fails-before') throw new Error('broken before any byte');
    res.writeHead(200, { 'content-type': 'application/json', 'x-generation-id': 'gen-1-abc' });
    if (mode === 'fails-after-first-byte') {
      res.write('{"partial":');
      await new Promise((resolve) => setTimeout(resolve, 20));
      throw new Error('broken mid-reply');
    }
    if (mode === 'left-open') {
      res.write('{"open":true}');
      return;
    }
    res.end('{"ok":true}');
    // Deferred work after the reply (a record waiting for its page).
    await new Promise((resolve) => setTimeout(resolve, 60));
    handlerEnded = Date.now();
  };

  beforeAll(async () => {
    other = await startLocalServer({ port: 0, handlers: { inference: handler, management }, log: (line) => { lines.push(line); }, onRequestDone: (entry) => { done.push(entry); } });
  });
  afterAll(() => other.close());

  const post = () => fetch(`${other.url}/api/v1/chat/completions?x=1`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  const nextDone = async (count: number) => {
    await waitFor(() => done.length >= count, { what: `request ${count} logged` });
    return done[count - 1]!;
  };

  it('answers before the deferred work ends, and logs the request with its status and generation id once it has', async () => {
    mode = 'deferred';
    const reply = await post();
    expect(await reply.json()).toEqual({ ok: true });
    const answeredAt = Date.now();
    expect(done).toHaveLength(0);
    const entry = await nextDone(1);
    expect(handlerEnded).toBeGreaterThanOrEqual(answeredAt);
    expect(entry).toMatchObject({ method: 'POST', path: '/api/v1/chat/completions', status: 200, generationId: 'gen-1-abc' });
    expect(entry.ms).toBeGreaterThanOrEqual(50);
  });

  it('ends a reply the handler left open', async () => {
    mode = 'left-open';
    const reply = await post();
    expect(await reply.text()).toBe('{"open":true}');
    expect(await nextDone(2)).toMatchObject({ status: 200 });
  });

  it('answers 500 with the envelope when the handler fails before any byte', async () => {
    mode = 'fails-before';
    const reply = await post();
    expect(reply.status).toBe(500);
    expect(await reply.json()).toMatchObject({ error: { code: 500 } });
    expect(await nextDone(3)).toMatchObject({ status: 500 });
  });

  it('cuts the reply and logs it when the handler fails after the first byte', async () => {
    mode = 'fails-after-first-byte';
    const reply = await post();
    expect(reply.status).toBe(200);
    await expect(reply.text()).rejects.toThrow();
    expect(await nextDone(4)).toMatchObject({ status: 200, generationId: 'gen-1-abc' });
    expect(lines.some((line) => line.includes('handler failed after the first byte'))).toBe(true);
  });
});
