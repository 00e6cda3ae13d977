// The adapters' HTTP client (node:http with keep-alive agents) against a real local server: targets,
// bodies, aborts before, during and after the reply, and connections kept when a stream's reader stops at
// its last event.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import { Abort } from '../../lambdas/platform/abort.js';
import { nodeFetch, wasUnsent } from '../../lambdas/providers/http-client.js';
import { parseSse } from '../../lambdas/providers/sse.js';

let server: http.Server;
let base: string;
const seen: Array<{ method: string; url: string; body: string; authorization?: string }> = [];
let connections = 0;
const closedReplies: string[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (chunk: Buffer) => parts.push(chunk));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body: Buffer.concat(parts).toString(), authorization: req.headers.authorization });
      if (req.url?.startsWith('/slow')) {
        setTimeout(() => res.end('late'), 5_000).unref();
        return;
      }
      if (req.url?.startsWith('/sse-hang')) {
        // The last event, and then neither the message's end nor anything else.
        res.on('close', () => closedReplies.push(req.url ?? ''));
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: [DONE]\n\n');
        return;
      }
      if (req.url?.startsWith('/sse')) {
        // An OpenAI-style stream: the last event, then the end of the message a moment later.
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: {"n":1}\n\n');
        setTimeout(() => res.write('data: [DONE]\n\n'), 5);
        setTimeout(() => res.end(), 15);
        return;
      }
      if (req.url?.startsWith('/stream')) {
        res.on('close', () => closedReplies.push(req.url ?? ''));
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('first ');
        const timer = setInterval(() => res.write('more '), 20);
        res.on('close', () => clearInterval(timer));
        return;
      }
      res.writeHead(201, { 'content-type': 'application/json', 'x-echo': 'yes' });
      res.end(JSON.stringify({ url: req.url }));
    });
  });
  server.on('connection', () => { connections += 1; });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('nodeFetch', () => {
  it('sends the method, path with query, headers and body, and reads the reply', async () => {
    const response = await nodeFetch(`${base}/v1/things?x=1&y=2`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":"é"}' });
    expect(response.status).toBe(201);
    expect(response.ok).toBe(true);
    expect(response.headers.get('X-Echo')).toBe('yes');
    expect(await response.json()).toEqual({ url: '/v1/things?x=1&y=2' });
    expect(seen.at(-1)).toMatchObject({ method: 'POST', url: '/v1/things?x=1&y=2', body: '{"a":"é"}' });
    // A URL object, and the same URL again (its parsed target is reused).
    for (const input of [new URL(`${base}/again`), `${base}/again`]) {
      const again = await nodeFetch(input);
      expect(await again.json()).toEqual({ url: '/again' });
    }
  });

  it('sends the credentials of a URL as basic authorization', async () => {
    const withUser = base.replace('http://', 'http://us%40er:p%3Ass@');
    await (await nodeFetch(`${withUser}/auth`)).text();
    expect(seen.at(-1)?.authorization).toBe(`Basic ${Buffer.from('us@er:p:ss').toString('base64')}`);
  });

  it('refuses an unsupported protocol', async () => {
    await expect(nodeFetch('ftp://127.0.0.1/x')).rejects.toThrow('unsupported protocol ftp:');
  });

  it('rejects at once with an AbortError when the signal is already aborted, sending nothing', async () => {
    const before = seen.length;
    const abort = new Abort();
    abort.abort(new Error('cancelled'));
    // Marked as never sent: an abort then charges no prompt (inference's attempts).
    const rejected = await nodeFetch(`${base}/never`, { signal: abort.signal }).catch((err: unknown) => err);
    expect(rejected).toMatchObject({ name: 'AbortError', unsent: true });
    expect(wasUnsent(rejected)).toBe(true);
    expect(wasUnsent(new Error('wrapped', { cause: rejected }))).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen.length).toBe(before);
  });

  it('destroys the request when the signal aborts before the reply', async () => {
    const abort = new Abort();
    const pending = nodeFetch(`${base}/slow`, { signal: abort.signal });
    setTimeout(() => abort.abort(new Error('stop')), 50);
    const rejected = await pending.catch((err: unknown) => err);
    expect(rejected).toMatchObject({ name: 'AbortError', cause: new Error('stop') });
    // The server had it: sent, so its prompt is the caller's to pay.
    expect(wasUnsent(rejected)).toBe(false);
  });

  it('ends a body being read when the signal aborts mid-reply', async () => {
    const abort = new Abort();
    const response = await nodeFetch(`${base}/stream`, { signal: abort.signal });
    const text = response.text();
    setTimeout(() => abort.abort(), 60);
    await expect(text).rejects.toThrow();
  });

  it('keeps the connection of a stream whose reader stops at its last event, before the message ends', async () => {
    // Settle the pool: one request, read whole, so the next ones find a kept connection.
    await (await nodeFetch(`${base}/warm`)).text();
    const before = connections;
    for (let i = 0; i < 3; i++) {
      const response = await nodeFetch(`${base}/sse?i=${i}`);
      const events: string[] = [];
      for await (const event of parseSse(response.body!)) {
        if (event.data === '[DONE]') break;
        events.push(event.data);
      }
      expect(events).toEqual(['{"n":1}']);
      // The message's end arrives after the reader stopped; the socket goes back to the pool then.
      await new Promise((resolve) => setTimeout(resolve, 40));
    }
    expect(connections).toBe(before);
  });

  it('drops the connection of a reply that goes on after its reader stopped, so the upstream stops generating', async () => {
    const response = await nodeFetch(`${base}/stream?drop`);
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
      expect(Buffer.from(chunk).toString()).toContain('first');
      break;
    }
    // At its next chunk (20 ms apart), not a second later.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(closedReplies).toContain('/stream?drop');
  });

  it('drops, after a second, the connection of a reply that neither ends nor sends more', async () => {
    const response = await nodeFetch(`${base}/sse-hang`);
    for await (const event of parseSse(response.body!)) if (event.data === '[DONE]') break;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(closedReplies).not.toContain('/sse-hang');
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(closedReplies).toContain('/sse-hang');
  });

  it('stops listening to the signal once the exchange is over', async () => {
    const abort = new Abort();
    const response = await nodeFetch(`${base}/done`, { signal: abort.signal });
    expect(abort.listenerCount).toBe(1);
    await response.text();
    await new Promise((resolve) => setImmediate(resolve));
    expect(abort.listenerCount).toBe(0);
  });
});
