// A pass-through HTTP proxy in a process of its own: each request's body goes to one upstream (the path
// kept) over keep-alive connections, and the reply comes back chunk by chunk as it arrives, with nothing
// parsed, checked or recorded. `npm run bench` streams the chunk phase through it too: what one more
// process adds to a chunk on this machine (two more loopback hops and one more process to be scheduled), a
// reference beside the gateway's figure (not a bound: on a machine that stalls, it can come out higher).
// Prints `listening on <url>`.
// Usage: tsx bench/pass-through.ts <upstream origin>
import http from 'node:http';

const upstream = new URL(process.argv[2] ?? '');
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
const server = http.createServer((req, res) => {
  const forward = http.request({
    agent, host: upstream.hostname, port: upstream.port, path: req.url, method: req.method,
    headers: { 'content-type': req.headers['content-type'] ?? 'application/json', ...(req.headers['content-length'] ? { 'content-length': req.headers['content-length'] } : {}) },
  }, (reply) => {
    res.writeHead(reply.statusCode ?? 502, { 'content-type': reply.headers['content-type'] ?? 'application/octet-stream' });
    reply.on('data', (chunk: Buffer) => res.write(chunk));
    reply.on('end', () => res.end());
    reply.on('error', () => res.destroy());
  });
  forward.on('error', () => res.destroy());
  req.pipe(forward);
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
});
process.on('SIGTERM', () => process.exit(0));
