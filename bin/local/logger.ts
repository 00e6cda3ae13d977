// The local runtime's log sink. On Lambda every log line (JSON, and one EMF metrics line of ~1.5 KB per
// generation) goes to CloudWatch Logs; on a developer's console that drowns everything else. Locally:
//   text (default)  one short line per request on stdout: method, path, status, model, ms, cost; the
//                   handlers' JSON lines (warnings, errors) on stderr as they are; no metrics lines (and
//                   none is even built: the request line takes the model and cost from the record).
//   json            every line as on Lambda (metrics included) plus a JSON line per request, on stdout.
// GATEWAY_LOG_FILE, in either format, also appends every machine line (JSON, EMF, per-request JSON) to a file.
// Request lines reach stdout in batches (every CONSOLE_FLUSH_MS): a write to a pipe or a terminal is
// synchronous, and one per request cost about 15 µs of CPU at a few thousand requests a second.
import { createWriteStream } from 'node:fs';
import { emfLine, isEmfLine } from '../../lambdas/billing/metrics.js';
import type { GenerationRecord } from '../../lambdas/billing/generation-record.js';
import { nanosToUsd } from '../../lambdas/platform/money.js';
import { logLine } from '../../lambdas/platform/logger.js';
import type { RequestDone } from './server.js';

export type LogFormat = 'text' | 'json';

export interface LocalLogger {
  /** A line from the handlers or the engine (JSON or EMF). */
  line(text: string): void;
  /** A stored generation: the model and cost its request's line shows, and its EMF line where machine lines go. */
  generation(record: GenerationRecord, timestamp: number): void;
  /**
   * A generation a previous run settled and this one stored (from its journal): its metrics line only,
   * timed at its end, since no request of this run will show it.
   */
  replayed(record: GenerationRecord): void;
  /** A request whose handler has finished. */
  request(done: RequestDone): void;
  /** Flushes and closes the log file, if any. */
  close(): Promise<void>;
}

export interface LoggerOptions {
  format: LogFormat;
  file?: string | undefined;
  /** Where console output goes (tests capture it; by default stdout, in batches). */
  out?: (text: string) => void;
  err?: (text: string) => void;
}

interface Generation {
  model: string;
  costUsd: number;
}

/** Generations whose metrics line came before their request finished, by id (bounded, in case one never does). */
const MAX_PENDING = 1000;
/** How long request lines may wait to be written to stdout together. */
const CONSOLE_FLUSH_MS = 25;

/** Lines for stdout, written together at most CONSOLE_FLUSH_MS after the first; `flush` writes what waits now. */
function batchedStdout(): { write: (text: string) => void; close: () => void } {
  let waiting: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (waiting.length === 0) return;
    const text = waiting.join('');
    waiting = [];
    process.stdout.write(text);
  };
  // A process that exits (npm start stopped, or failing) still prints its last lines.
  process.once('exit', flush);
  return {
    write: (text) => {
      // After close (the runtime stopping), lines go out as they come: nothing is left to flush them.
      if (closed) {
        process.stdout.write(text);
        return;
      }
      waiting.push(text);
      if (!timer) {
        timer = setTimeout(flush, CONSOLE_FLUSH_MS);
        timer.unref();
      }
    },
    close: () => {
      closed = true;
      flush();
      process.off('exit', flush);
    },
  };
}

/** The local time of day (HH:MM:SS) for request lines, formatted once a second. */
let lastSecond = -1;
let lastClock = '';
function clockTime(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== lastSecond) {
    lastSecond = second;
    lastClock = new Date(now).toTimeString().slice(0, 8);
  }
  return lastClock;
}

export function logFormatFromEnv(env: NodeJS.ProcessEnv = process.env): LogFormat {
  const value = (env.GATEWAY_LOG_FORMAT ?? '').trim().toLowerCase();
  if (value === '' || value === 'text') return 'text';
  if (value === 'json' || value === 'emf') return 'json';
  throw new Error(`GATEWAY_LOG_FORMAT must be text or json, got "${env.GATEWAY_LOG_FORMAT}"`);
}

export function createLocalLogger(options: LoggerOptions): LocalLogger {
  const stdout = options.out ? undefined : batchedStdout();
  const out = options.out ?? stdout!.write;
  const err = options.err ?? ((text: string) => { process.stderr.write(text); });
  // Buffered and asynchronous: the request path never waits for the disk.
  const file = options.file ? createWriteStream(options.file, { flags: 'a' }) : undefined;
  file?.on('error', (error) => err(`cannot write the log file ${options.file}: ${error.message}\n`));
  const toFile = file ? (text: string) => { file.write(`${text}\n`); } : undefined;
  const generations = new Map<string, Generation>();
  const keep = (id: string, generation: Generation) => {
    if (generations.size >= MAX_PENDING) generations.clear();
    generations.set(id, generation);
  };
  // What the request line needs from a generation's metrics line, for metrics lines logged as such.
  const remember = (text: string) => {
    try {
      const metrics = JSON.parse(text) as { generation_id?: unknown; Model?: unknown; UpstreamCostUSD?: unknown };
      if (typeof metrics.generation_id !== 'string') return;
      keep(metrics.generation_id, { model: String(metrics.Model), costUsd: Number(metrics.UpstreamCostUSD) });
    } catch {
      // a malformed line: no model or cost on the request line
    }
  };

  const metricsLine = (record: GenerationRecord, timestamp: number) => {
    if (options.format !== 'json' && !toFile) return;
    const line = emfLine(record, record.infra ?? undefined, timestamp);
    toFile?.(line);
    if (options.format === 'json') out(`${line}\n`);
  };

  return {
    line(text) {
      toFile?.(text);
      const metrics = isEmfLine(text);
      if (metrics) remember(text);
      if (options.format === 'json') out(`${text}\n`);
      else if (!metrics) err(`${text}\n`);
    },
    generation(record, timestamp) {
      // Stored after the reply, before the request is done: its line shows them.
      keep(record.id, { model: record.model, costUsd: nanosToUsd(record.cost.total) });
      metricsLine(record, timestamp);
    },
    replayed(record) {
      // Timed when it ended (its creation plus its latency), as a live record's line is (when stored).
      const ended = Date.parse(record.created_at) + record.latency_ms;
      metricsLine(record, Number.isNaN(ended) ? Date.now() : ended);
    },
    request(done) {
      const generation = done.generationId ? generations.get(done.generationId) : undefined;
      if (done.generationId) generations.delete(done.generationId);
      const ms = Math.round(done.ms);
      if (options.format === 'json' || toFile) {
        const json = logLine('info', 'request', {
          request_id: done.requestId, method: done.method, path: done.path, status: done.status, ms,
          ...(done.generationId ? { generation_id: done.generationId } : {}),
          ...(generation ? { model: generation.model, cost_usd: generation.costUsd } : {}),
        });
        toFile?.(json);
        if (options.format === 'json') out(`${json}\n`);
      }
      // A supervisor's health probes every few seconds would drown the console again: only failed ones show.
      if (options.format === 'text' && !(done.path === '/health' && done.status === 200)) {
        const parts = [clockTime(), done.method, done.path, String(done.status)];
        if (generation) parts.push(generation.model);
        parts.push(`${ms} ms`);
        if (generation) parts.push(`$${generation.costUsd.toFixed(6)}`);
        out(`${parts.join(' ')}\n`);
      }
    },
    close: () => {
      stdout?.close();
      return new Promise((resolve) => { if (file) file.end(() => resolve()); else resolve(); });
    },
  };
}
