// The local server against slow and greedy clients: header and body deadlines, a connection cap, and
// shutdown (stop accepting, let in-flight requests finish, refuse new ones on kept-alive connections).
import { afterEach, describe, expect, it } from '@jest/globals';
import { connect, type Socket } from 'node:net';
import { DEFAULT_SERVER_LIMITS, startLocalServer, type BufferedHandler, type LocalServer, type ServerLimits, type StreamingHandler } from '../../bin/local/server.js';

let server: LocalServer | undefined;
const sockets: Socket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await server?.close();
  server = undefined;
});

let release: (() => void) | undefined;
/** Ends the work a /settling request goes on with once its connection is cut (as an inference request settles). */
let settle: (() => void) | undefined;
const management: BufferedHandler = async (event) => {
  if (event.rawPath === '/slow') await new Promise<void>((resolve) => { release = resolve; });
  if (event.rawPath === '/settling') await new Promise<void>((resolve) => { settle = resolve; });
  return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ok: true }) };
};
const inference: StreamingHandler = async (_event, res) => { res.end(); };

let logged: string[] = [];

async function start(limits: Partial<ServerLimits> = {}): Promise<LocalServer> {
  logged = [];
  server = await startLocalServer({ port: 0, handlers: { inference, management }, log: (line) => { logged.push(line); }, limits });
  return server;
}

interface Conversation {
  socket: Socket;
  /** Everything received so far. */
  received: () => string;
  /** Resolves with everything received once the server has closed the connection. */
  closed: Promise<string>;
}

function open(url: string): Promise<Conversation> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    sockets.push(socket);
    let text = '';
    socket.on('data', (chunk) => { text += chunk.toString(); });
    const closed = new Promise<string>((done) => socket.once('close', () => done(text)));
    socket.once('error', () => undefined);
    socket.once('connect', () => resolve({ socket, received: () => text, closed }));
    socket.once('error', reject);
  });
}

async function within<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const result = await Promise.race([promise, new Promise<T>((resolve) => { timer = setTimeout(() => resolve(fallback), ms); })]);
  clearTimeout(timer);
  return result;
}

async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  return condition();
}

describe('local server limits', () => {
  it('answers 431 to more headers than the cap instead of dropping the ones past it (a second Authorization header among them)', async () => {
    let seen = 0;
    server = await startLocalServer({
      port: 0, handlers: { inference, management: async (event, context) => { seen += 1; return management(event, context); } }, log: () => undefined, limits: {},
    });
    const conversation = await open(server.url);
    const filler = Array.from({ length: 100 }, (_, i) => `x-filler-${i}: ${i}\r\n`).join('');
    conversation.socket.write(`GET /api/v1/key HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer first\r\n${filler}authorization: Bearer second\r\nconnection: close\r\n\r\n`);
    const reply = await within(conversation.closed, 5000, 'no reply');
    expect(reply).toMatch(/^HTTP\/1\.1 431 /);
    expect(reply).toMatch(/x-content-type-options: nosniff/i);
    expect(reply).toContain('More than 100 request headers');
    expect(seen).toBe(0);
  });

  it('has stated defaults: 10 s for headers, 60 s for the whole request, 5 s keep-alive, 512 connections, 100 headers of 16 KB', async () => {
    const { server: http } = await start();
    expect(DEFAULT_SERVER_LIMITS).toEqual({ headersTimeoutMs: 10_000, requestTimeoutMs: 60_000, keepAliveTimeoutMs: 5_000, maxConnections: 512, maxHeadersCount: 100, maxHeaderBytes: 16_384 });
    // Node keeps every header (it would drop those past its own count silently); the server counts them itself.
    expect([http.headersTimeout, http.requestTimeout, http.keepAliveTimeout, http.maxConnections, http.maxHeadersCount]).toEqual([10_000, 60_000, 5_000, 512, 0]);
  });

  it('cuts off a client that sends its headers too slowly (slowloris) with a 408', async () => {
    const { url } = await start({ headersTimeoutMs: 500, requestTimeoutMs: 1000 });
    const client = await open(url);
    client.socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n');
    const trickle = setInterval(() => { if (!client.socket.destroyed) client.socket.write('X-Slow: 1\r\n'); }, 100);
    try {
      const text = await within(client.closed, 8000, 'still open');
      expect(text).toMatch(/^HTTP\/1\.1 408 /);
      expect(text).toContain('"code":408');
    } finally {
      clearInterval(trickle);
    }
  });

  it('cuts off a client that sends its body too slowly', async () => {
    const { url } = await start({ headersTimeoutMs: 500, requestTimeoutMs: 1000 });
    const client = await open(url);
    client.socket.write('POST /api/v1/keys HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{');
    const trickle = setInterval(() => { if (!client.socket.destroyed) client.socket.write(' '); }, 100);
    try {
      const text = await within(client.closed, 8000, 'still open');
      expect(text).toMatch(/^HTTP\/1\.1 408 /);
    } finally {
      clearInterval(trickle);
    }
  });

  it('closes connections over the cap as they arrive and keeps serving the others', async () => {
    const { url } = await start({ maxConnections: 2 });
    const first = await open(url);
    const second = await open(url);
    // Both are counted once the server has accepted them.
    expect(await until(() => (server!.server as unknown as { _connections: number })._connections === 2, 5000)).toBe(true);
    const third = await open(url);
    third.socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n');
    expect(await third.closed).toBe('');

    first.socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n');
    expect(await until(() => first.received().includes('{"ok":true}'), 5000)).toBe(true);
    expect(second.socket.destroyed).toBe(false);
  });
});

describe('local server shutdown', () => {
  it('stops accepting, lets the request in flight finish and closes its connection after it', async () => {
    const { url } = await start();
    release = undefined;
    // A kept-alive connection, idle after its first request.
    const idle = await open(url);
    idle.socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n');
    expect(await until(() => idle.received().includes('{"ok":true}'), 5000)).toBe(true);
    const client = await open(url);
    client.socket.write('GET /slow HTTP/1.1\r\nHost: localhost\r\n\r\n');
    expect(await until(() => release !== undefined && server!.inFlight === 1, 5000)).toBe(true);
    // A connection in the middle of sending its request when the shutdown begins (so not idle).
    const late = await open(url);
    late.socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n');

    let expired = false;
    const closed = server!.close({ graceMs: 10_000, onGraceExpired: () => { expired = true; } });
    // Idle keep-alive connections close at once, and new connections are refused.
    expect(await idle.closed).toMatch(/^HTTP\/1\.1 200 /);
    await expect(open(url)).rejects.toThrow(/ECONNREFUSED/);
    // The request completed after the shutdown began is refused with a 503 envelope (nosniff, as every reply).
    late.socket.write('\r\n');
    const refused = await late.closed;
    expect(refused).toMatch(/^HTTP\/1\.1 503 /);
    expect(refused.toLowerCase()).toContain('x-content-type-options: nosniff');
    expect(refused).toContain('"code":503');
    release!();
    await closed;
    const text = await client.closed;
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(text.toLowerCase()).toContain('connection: close');
    expect(text).toContain('{"ok":true}');
    expect(expired).toBe(false);
    server = undefined;
  });

  it('tells requests still in flight after the grace period to end, then waits for them', async () => {
    const { url } = await start();
    release = undefined;
    const client = await open(url);
    client.socket.write('GET /slow HTTP/1.1\r\nHost: localhost\r\n\r\n');
    expect(await until(() => release !== undefined, 5000)).toBe(true);
    // The "end now" signal is what lets the handler finish (as the engine's shutdown switch does).
    await server!.close({ graceMs: 200, onGraceExpired: () => release!(), settleMs: 10_000 });
    expect(await client.closed).toMatch(/^HTTP\/1\.1 200 /);
    server = undefined;
  });

  it('after cutting the connections, waits for handlers still finishing their work before it resolves', async () => {
    const { url } = await start();
    settle = undefined;
    const client = await open(url);
    client.socket.write('GET /settling HTTP/1.1\r\nHost: localhost\r\n\r\n');
    expect(await until(() => settle !== undefined, 5000)).toBe(true);
    let closed = false;
    const closing = server!.close({ graceMs: 50, settleMs: 50, finishMs: 10_000 }).then(() => { closed = true; });
    // The connection is cut, but the handler's work (an inference request's settlement) goes on: close waits for it.
    await client.closed;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(closed).toBe(false);
    settle!();
    await closing;
    expect(server!.inFlight).toBe(0);
    expect(logged.filter((line) => line.includes('unsettled'))).toEqual([]);
    server = undefined;
  });

  it('gives up on handlers that do not finish within the bound, and says so', async () => {
    const { url } = await start();
    settle = undefined;
    const client = await open(url);
    client.socket.write('GET /settling HTTP/1.1\r\nHost: localhost\r\n\r\n');
    expect(await until(() => settle !== undefined, 5000)).toBe(true);
    await server!.close({ graceMs: 50, settleMs: 50, finishMs: 100 });
    expect(server!.inFlight).toBe(1);
    expect(logged.filter((line) => line.includes('unsettled'))).toHaveLength(1);
    settle!();
    server = undefined;
  });
});
