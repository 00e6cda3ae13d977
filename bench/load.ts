// The load generator: keep-alive HTTP/1.1 over node:http, a fixed number of connections (one request in
// flight per connection), either closed-loop (as fast as the server answers: throughput) or paced to a
// fixed total rate (latency at a load the server is not saturated by). Loopback only, bounded in time
// and count.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { Samples } from './stats.js';

export interface RequestSpec {
  /** http://127.0.0.1:PORT/path */
  url: URL;
  headers: Record<string, string>;
  body: Buffer;
  /** Body chunks with their arrival time (performance.now()), for SSE chunk timing. */
  onChunk?: (chunk: Buffer, at: number) => void;
}

export interface Outcome {
  status: number;
  /** ms from just before the request was issued to the first body byte. */
  ttfb: number;
  /** ms from just before the request was issued to the end of the body. */
  total: number;
  bytes: number;
  error?: string;
  /** The body, when asked for. */
  body?: string;
}

/** A chat completion request's body: one user message. */
export function chatBody(model: string, content: string, stream: boolean): Buffer {
  return Buffer.from(JSON.stringify({ model, messages: [{ role: 'user', content }], ...(stream ? { stream: true } : {}) }));
}

export function newAgent(connections: number): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections, keepAliveMsecs: 60_000 });
}

export function send(agent: http.Agent, spec: RequestSpec, keepBody = false): Promise<Outcome> {
  return new Promise((resolve) => {
    const started = performance.now();
    let ttfb = Number.NaN;
    let bytes = 0;
    let settled = false;
    const parts: Buffer[] = [];
    const finish = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    const req = http.request({
      agent,
      host: spec.url.hostname,
      port: spec.url.port,
      path: spec.url.pathname,
      method: 'POST',
      headers: { ...spec.headers, 'content-length': String(spec.body.length) },
    }, (res) => {
      const status = res.statusCode ?? 0;
      res.on('data', (chunk: Buffer) => {
        const at = performance.now();
        if (bytes === 0) ttfb = at - started;
        bytes += chunk.length;
        if (keepBody) parts.push(chunk);
        spec.onChunk?.(chunk, at);
      });
      res.on('end', () => {
        const total = performance.now() - started;
        finish({ status, ttfb: Number.isNaN(ttfb) ? total : ttfb, total, bytes, ...(keepBody ? { body: Buffer.concat(parts).toString('utf8') } : {}) });
      });
      res.on('error', (err) => finish({ status: 0, ttfb, total: performance.now() - started, bytes, error: err.message }));
    });
    req.on('error', (err) => finish({ status: 0, ttfb, total: performance.now() - started, bytes, error: err.message }));
    req.end(spec.body);
  });
}

export interface PhaseResult {
  /** Requests completed in the measured window (any status). */
  count: number;
  ok: number;
  errors: number;
  /** First few error descriptions. */
  errorSamples: string[];
  elapsedMs: number;
  latency: Float64Array;
  ttfb: Float64Array;
  /** Paced phases: how late requests were issued versus their schedule (ms). */
  lateness: Float64Array;
}

export interface LoadOptions {
  connections: number;
  warmupMs: number;
  durationMs: number;
  /** Hard cap on measured requests. */
  maxRequests: number;
  /** The request for the n-th request of a worker. */
  request: (worker: number, n: number) => RequestSpec;
  /** Called with every measured outcome (after the stats are recorded). */
  onOutcome?: (outcome: Outcome, spec: RequestSpec) => void;
  /** Paced: total requests per second across all connections; closed-loop when absent. */
  rate?: number;
  /** Awaited just before and just after the measured window (CPU samples). */
  beforeMeasure?: () => Promise<void>;
  afterMeasure?: () => Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runLoad(options: LoadOptions): Promise<PhaseResult> {
  const agent = newAgent(options.connections);
  let counter = 0;
  const run = async (durationMs: number, record: boolean, maxRequests: number) => {
    const latency = new Samples();
    const ttfb = new Samples();
    const lateness = new Samples();
    const errorSamples: string[] = [];
    let count = 0;
    let ok = 0;
    let errors = 0;
    const start = performance.now();
    const deadline = start + durationMs;
    const period = options.rate ? (options.connections * 1000) / options.rate : 0;
    const worker = async (index: number) => {
      let scheduled = start + (period * index) / options.connections;
      while (count < maxRequests) {
        if (period > 0) {
          if (scheduled >= deadline) return;
          const wait = scheduled - performance.now();
          if (wait > 0) await sleep(wait);
        } else if (performance.now() >= deadline) {
          return;
        }
        const issued = performance.now();
        const spec = options.request(index, counter++);
        const outcome = await send(agent, spec);
        count += 1;
        if (record) {
          if (period > 0) lateness.push(issued - scheduled);
          if (outcome.status >= 200 && outcome.status < 300 && !outcome.error) {
            ok += 1;
            latency.push(outcome.total);
            ttfb.push(outcome.ttfb);
          } else {
            errors += 1;
            if (errorSamples.length < 5) errorSamples.push(outcome.error ?? `HTTP ${outcome.status}`);
          }
          options.onOutcome?.(outcome, spec);
        }
        scheduled += period;
      }
    };
    await Promise.all(Array.from({ length: options.connections }, (_, index) => worker(index)));
    return { count, ok, errors, errorSamples, elapsedMs: performance.now() - start, latency: latency.values(), ttfb: ttfb.values(), lateness: lateness.values() };
  };
  try {
    if (options.warmupMs > 0) await run(options.warmupMs, false, Number.MAX_SAFE_INTEGER);
    await options.beforeMeasure?.();
    const result = await run(options.durationMs, true, options.maxRequests);
    await options.afterMeasure?.();
    return result;
  } finally {
    agent.destroy();
  }
}
