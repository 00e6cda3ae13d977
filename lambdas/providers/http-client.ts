// The HTTP client adapters use by default: node:http/https with keep-alive agents. It does per request a
// fraction of the work of the global fetch (which wraps every body in WHATWG streams), measured at
// ~100 µs versus ~380 µs of CPU per small request on loopback.
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { FetchLike, UpstreamResponse } from './types.js';

const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 512 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 512 }),
};

function wrap(res: IncomingMessage): UpstreamResponse {
  const status = res.statusCode ?? 0;
  let consumed: Promise<string> | undefined;
  const text = () => {
    consumed ??= new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      res.on('error', reject);
      res.on('aborted', () => reject(new Error('terminated')));
    });
    return consumed;
  };
  return {
    status,
    ok: status >= 200 && status < 300,
    headers: {
      get(name: string): string | null {
        const value = res.headers[name.toLowerCase()];
        if (value === undefined) return null;
        return Array.isArray(value) ? value.join(', ') : String(value);
      },
    },
    text,
    json: async () => JSON.parse(await text()) as unknown,
    body: res,
  };
}

export const nodeFetch: FetchLike = (input, init = {}) => new Promise((resolve, reject) => {
  const url = typeof input === 'string' ? new URL(input) : input;
  const agent = agents[url.protocol as keyof typeof agents];
  if (!agent) {
    reject(new TypeError(`unsupported protocol ${url.protocol}`));
    return;
  }
  const body = typeof init.body === 'string' ? init.body : undefined;
  const headers: Record<string, string> = { ...(init.headers as Record<string, string> | undefined) };
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  const request = (url.protocol === 'https:' ? https : http).request(url, {
    method: init.method ?? 'GET',
    headers,
    agent,
    ...(init.signal ? { signal: init.signal } : {}),
  }, (res) => resolve(wrap(res)));
  request.on('error', reject);
  request.end(body);
});
