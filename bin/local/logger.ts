// The local runtime's log sink. On Lambda every log line (JSON, and one EMF metrics line of ~1.5 KB per
// generation) goes to CloudWatch Logs; on a developer's console that drowns everything else. Locally:
//   text (default)  one short line per request on stdout: method, path, status, model, ms, cost; the
//                   handlers' JSON lines (warnings, errors) on stderr as they are; no metrics lines.
//   json            every line as on Lambda (metrics included) plus a JSON line per request, on stdout.
// GATEWAY_LOG_FILE, in either format, also appends every machine line (JSON, EMF, per-request JSON) to a file.
import { appendFileSync } from 'node:fs';
import { isEmfLine } from '../../lambdas/accounting/metrics.js';
import type { RequestDone } from './server.js';

export type LogFormat = 'text' | 'json';

export interface LocalLogger {
  /** A line from the handlers or the engine (JSON or EMF). */
  line(text: string): void;
  /** A request whose handler has finished. */
  request(done: RequestDone): void;
}

export interface LoggerOptions {
  format: LogFormat;
  file?: string | undefined;
  /** Where console output goes (tests capture it). */
  out?: (text: string) => void;
  err?: (text: string) => void;
}

interface Generation {
  model: string;
  costUsd: number;
}

/** Generations whose metrics line came before their request finished, by id (bounded, in case one never does). */
const MAX_PENDING = 1000;

export function logFormatFromEnv(env: NodeJS.ProcessEnv = process.env): LogFormat {
  const value = (env.GATEWAY_LOG_FORMAT ?? '').trim().toLowerCase();
  if (value === '' || value === 'text') return 'text';
  if (value === 'json' || value === 'emf') return 'json';
  throw new Error(`GATEWAY_LOG_FORMAT must be text or json, got "${env.GATEWAY_LOG_FORMAT}"`);
}

export function createLocalLogger(options: LoggerOptions): LocalLogger {
  const out = options.out ?? ((text: string) => { process.stdout.write(text); });
  const err = options.err ?? ((text: string) => { process.stderr.write(text); });
  const toFile = options.file ? (text: string) => appendFileSync(options.file!, `${text}\n`) : undefined;
  const generations = new Map<string, Generation>();

  return {
    line(text) {
      toFile?.(text);
      if (options.format === 'json') {
        out(`${text}\n`);
        return;
      }
      if (!isEmfLine(text)) {
        err(`${text}\n`);
        return;
      }
      // Text mode: what the request line needs from the metrics line, nothing printed.
      try {
        const metrics = JSON.parse(text) as { generation_id?: unknown; Model?: unknown; UpstreamCostUSD?: unknown };
        if (typeof metrics.generation_id !== 'string') return;
        if (generations.size >= MAX_PENDING) generations.clear();
        generations.set(metrics.generation_id, { model: String(metrics.Model), costUsd: Number(metrics.UpstreamCostUSD) });
      } catch {
        // not for the console either way
      }
    },
    request(done) {
      const generation = done.generationId ? generations.get(done.generationId) : undefined;
      if (done.generationId) generations.delete(done.generationId);
      const ms = Math.round(done.ms);
      if (options.format === 'json' || toFile) {
        const json = JSON.stringify({
          level: 'info', message: 'request', request_id: done.requestId, method: done.method, path: done.path, status: done.status, ms,
          ...(done.generationId ? { generation_id: done.generationId } : {}),
          ...(generation ? { model: generation.model, cost_usd: generation.costUsd } : {}),
        });
        toFile?.(json);
        if (options.format === 'json') out(`${json}\n`);
      }
      if (options.format === 'text') {
        const parts = [new Date().toTimeString().slice(0, 8), done.method, done.path, String(done.status)];
        if (generation) parts.push(generation.model);
        parts.push(`${ms} ms`);
        if (generation) parts.push(`$${generation.costUsd.toFixed(6)}`);
        out(`${parts.join(' ')}\n`);
      }
    },
  };
}
