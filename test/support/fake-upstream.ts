// A local HTTP fake for provider adapter tests: answers each request with a recorded fixture
// (status, headers, JSON or SSE chunks written one by one) and keeps what it was sent.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

export interface FakeReply {
  status?: number;
  headers?: Record<string, string>;
  /** A JSON value, raw text, or chunks written one after another (SSE). */
  json?: unknown;
  text?: string;
  chunks?: string[];
  /** Destroy the socket after writing the chunks, without ending the response. */
  cut?: boolean;
  /** Never answer (after writing `chunks`, if any): the connection stays open until the client closes it. */
  hang?: boolean;
  /** With `hang`: write this chunk every `everyMs` while the connection is open (a stream that never ends). */
  repeat?: { chunk: string; everyMs: number };
}

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}

export interface FakeUpstream {
  url: string;
  received: ReceivedRequest[];
  /** Connections closed by the client while a hanging reply was open, in order (Date.now() at close). */
  closedAt: number[];
  reply(next: FakeReply | ((request: ReceivedRequest) => FakeReply)): void;
  close(): Promise<void>;
}

export async function startFakeUpstream(): Promise<FakeUpstream> {
  let next: FakeReply | ((request: ReceivedRequest) => FakeReply) = { status: 500, json: { error: { message: 'no reply configured' } } };
  const received: ReceivedRequest[] = [];
  const closedAt: number[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        // keep the raw text
      }
      const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      received.push(request);
      const reply = typeof next === 'function' ? next(request) : next;
      const headers: Record<string, string> = { ...reply.headers };
      if (reply.hang) {
        if (reply.chunks || reply.repeat) {
          res.writeHead(reply.status ?? 200, { 'content-type': 'text/event-stream', ...headers });
          for (const chunk of reply.chunks ?? []) res.write(chunk);
        }
        const timer = reply.repeat ? setInterval(() => res.write(reply.repeat!.chunk), reply.repeat.everyMs) : undefined;
        res.once('close', () => {
          clearInterval(timer);
          closedAt.push(Date.now());
        });
        return;
      }
      if (reply.chunks) {
        headers['content-type'] ??= 'text/event-stream';
        res.writeHead(reply.status ?? 200, headers);
        for (const chunk of reply.chunks) res.write(chunk);
        if (reply.cut) {
          setTimeout(() => res.destroy(), 10);
          return;
        }
        res.end();
        return;
      }
      const payload = reply.json !== undefined ? JSON.stringify(reply.json) : reply.text ?? '';
      if (reply.json !== undefined) headers['content-type'] ??= 'application/json';
      res.writeHead(reply.status ?? 200, headers);
      res.end(payload);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    closedAt,
    reply: (value) => { next = value; },
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');

export function fixtureJson(path: string): unknown {
  return JSON.parse(readFileSync(join(FIXTURES, path), 'utf8'));
}

/** An SSE fixture file, split into one chunk per event so the adapter sees them arrive separately. */
export function fixtureSse(path: string): string[] {
  const text = readFileSync(join(FIXTURES, path), 'utf8');
  return text.split(/(?<=\n\n)/).filter((chunk) => chunk.length > 0);
}

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}
