// One delivery request over node:http(s), with a deadline, no redirects followed, and (unless private hosts
// are allowed) every address the host name resolves to checked when the connection is made: a public name
// that resolves, or later rebinds, to a private, loopback or link-local address is refused, not reached.
import http from 'node:http';
import https from 'node:https';
import { isPrivateAddress, publicLookup, RefusedAddressError } from '../platform/public-address.js';

export { publicLookup, RefusedAddressError };
import type { OutboundRequest } from './wire-formats.js';

export interface SendOptions {
  timeoutMs: number;
  allowPrivateHosts: boolean;
}

/** How much of a reply is read (and dropped): deliveries only need its status. */
const MAX_REPLY_BYTES = 64 * 1024;

export function send(request: OutboundRequest, options: SendOptions): Promise<{ status: number; body: string }> {
  const url = new URL(request.url);
  if (!options.allowPrivateHosts && isPrivateAddress(url.hostname)) {
    return Promise.reject(new RefusedAddressError(`${url.hostname} is a private or loopback address`));
  }
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(url, {
      method: request.method,
      headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
      ...(options.allowPrivateHosts ? {} : { lookup: publicLookup }),
      agent: false,
    }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (body.length < MAX_REPLY_BYTES) body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    const timer = setTimeout(() => req.destroy(Object.assign(new Error('timed out'), { name: 'TimeoutError' })), options.timeoutMs);
    req.on('close', () => clearTimeout(timer));
    req.on('error', reject);
    req.end(request.body);
  });
}
