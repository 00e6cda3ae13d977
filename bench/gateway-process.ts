// The gateway under test, as its own process so its CPU can be measured apart from the load generator:
// DynamoDB Local, the Lambda handlers behind the local HTTP server, and a regular API key created through
// the management API (authentication and accounting on, as in production: every request reserves credits
// and settles them with its generation record in DynamoDB transactions). Started by bench/run.ts with an
// IPC channel; answers `cpu` with process.cpuUsage(), event-loop utilization and delay, can CPU-profile a
// window, and for `--what-if` analysis can hold its key cache or stub out the ledger's DynamoDB work
// (never in the measured phases).
//
// Environment: BENCH_DATA_DIR (required, removed by the parent), BENCH_SIMULATOR_URL (required),
// plus anything the gateway reads (GATEWAY_CATALOG_FILE, …).
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { constants as perfConstants, monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';
import { startLocalRuntime, type LocalRuntime } from '../bin/local/runtime.js';
import { Ledger } from '../lambdas/billing/ledger.js';
import { PageWriter } from '../lambdas/billing/pages.js';
import type { ApiKey } from '../lambdas/keys/types.js';
import { BENCH_BUILTINS, BENCH_FILTERS } from './guardrail-patterns.js';
import { defaultDeps } from '../lambdas/app/deps.js';
import { KeyCache } from '../lambdas/keys/key-cache.js';

export type ToGateway =
  | { type: 'cpu'; id: number }
  | { type: 'profile-start'; id: number; intervalUs: number }
  | { type: 'profile-stop'; id: number; file: string }
  /** A sampling heap profile of the objects that outlive a young-generation collection (bench/survivors.ts). */
  | { type: 'heap-sample-start'; id: number; intervalBytes: number; all?: boolean }
  | { type: 'heap-sample-stop'; id: number; file: string }
  | { type: 'stub-ledger'; id: number; on: boolean }
  | { type: 'key-cache-ttl'; id: number; ms: number | null }
  /** The meter aggregator's lags (page written → applied, ms) since the last ask; `reset` drops them. */
  | { type: 'lags'; id: number }
  | { type: 'stop'; id: number };

export type FromGateway =
  | { type: 'ready'; url: string; key: string; guardedKey: string; dynamodbPid: number | undefined }
  | { type: 'failed'; error: string }
  /** aggregator: the meter aggregator process's user and system (undefined while it is down). */
  | { type: 'cpu'; id: number; user: number; system: number; minorFaults: number; aggregator: { user: number; system: number } | undefined; rss: number; eluIdle: number; eluActive: number; loopDelay: { p50: number; p99: number; max: number }; gc: GcPauses }
  | { type: 'done'; id: number; error?: string }
  | { type: 'lags'; id: number; lagsMs: number[] };

/** The garbage collector's pauses of the main thread since the previous `cpu` message (ms). */
export interface GcPauses {
  count: number;
  totalMs: number;
  maxMs: number;
  /** Pauses over 1 ms, and how many of them were full (mark-compact) collections. */
  overOneMs: number;
  majorOverOneMs: number;
}

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

function send(message: FromGateway): void {
  process.send?.(message);
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

let runtime: LocalRuntime | undefined;
// The money path's DynamoDB work (exact holds and their release, leases, the records' pages), which the
// what-if analysis replaces with answers that need no store.
const ledger = Ledger.prototype as unknown as Record<string, unknown>;
const pages = PageWriter.prototype as unknown as Record<string, unknown>;
const stubbed: Array<[Record<string, unknown>, string, unknown]> = [
  [ledger, 'reserve', async (generationId: string, key: ApiKey, amount: bigint) => ({
    generationId, orgId: key.org_id, workspaceId: key.workspace_id, keyHash: key.hash, amount, writeUnits: 0, attempts: 1, readUnits: 0,
  })],
  [ledger, 'release', async () => ({ outcome: 'released', writeUnits: 0, attempts: 1 })],
  [ledger, 'takeLease', async () => undefined],
  [pages, 'add', async () => ({ stored: true, writeUnits: 0 })],
];
const real = stubbed.map(([target, name]) => target[name]);
let session: Session | undefined;
const LOOP_DELAY_RESOLUTION_MS = 2;
const loopDelays = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
loopDelays.enable();
let gcPauses: GcPauses = { count: 0, totalMs: 0, maxMs: 0, overOneMs: 0, majorOverOneMs: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const major = ((entry as { detail?: { kind?: number } }).detail)?.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR;
    gcPauses.count += 1;
    gcPauses.totalMs += entry.duration;
    gcPauses.maxMs = Math.max(gcPauses.maxMs, entry.duration);
    if (entry.duration > 1) {
      gcPauses.overOneMs += 1;
      if (major) gcPauses.majorOverOneMs += 1;
    }
  }
}).observe({ entryTypes: ['gc'] });
let originalKeyCache: KeyCache | undefined;
let stopping: Promise<void> | undefined;

function stop(code: number): Promise<void> {
  stopping ??= (async () => {
    try {
      await runtime?.stop();
    } catch (err) {
      console.error(`gateway stop failed: ${String(err)}`);
    }
    process.exit(code);
  })();
  return stopping;
}

async function main(): Promise<void> {
  const adminKey = `bench-admin-${randomBytes(16).toString('hex')}`;
  runtime = await startLocalRuntime({
    port: 0,
    host: '127.0.0.1',
    dataDir: required('BENCH_DATA_DIR'),
    tableName: 'gateway',
    adminKey,
    initialCredits: '1000',
    simulatorPort: 0,
    simulatorUrl: required('BENCH_SIMULATOR_URL'),
    internProgramme: true,
  });
  // DynamoDB Local stops with this process however it ends (its watchdog sees the lifeline close).
  const dynamodb = runtime.dynamodb;

  const manage = async (path: string, body: unknown) => {
    const response = await fetch(`${runtime!.url}/api/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`bench setup: POST ${path} failed: ${response.status} ${text}`);
    return JSON.parse(text) as { key?: unknown; data?: { id?: string; hash?: string } };
  };
  const { key } = await manage('/keys', { name: 'bench' });
  if (typeof key !== 'string') throw new Error('creating the bench API key returned no key');
  // A second key, with one guardrail of 20 patterns (the guardrail phase compares the two).
  const guarded = await manage('/keys', { name: 'bench guarded' });
  const guardrail = await manage('/guardrails', { name: 'bench: 20 patterns', content_filter_builtins: BENCH_BUILTINS, content_filters: BENCH_FILTERS });
  await manage(`/guardrails/${guardrail.data!.id}/assignments/keys`, { key_hashes: [guarded.data!.hash] });
  send({ type: 'ready', url: runtime.url, key, guardedKey: guarded.key as string, dynamodbPid: dynamodb.javaPid() });
}

/** Runs `work` and answers `done` (with the error, if it failed). */
async function answer(id: number, work: () => Promise<void>): Promise<void> {
  try {
    await work();
    send({ type: 'done', id });
  } catch (err) {
    send({ type: 'done', id, error: String(err) });
  }
}

/** An inspector session for a profiler, begun by `begin`. */
async function startSession(begin: (inspector: Session) => Promise<void>): Promise<void> {
  session = new Session();
  session.connect();
  await begin(session);
}

/** Ends the session's profiler with `end` and writes what it gives to `file`. */
async function stopSession(notStarted: string, end: (inspector: Session) => Promise<unknown>, file: string): Promise<void> {
  if (!session) throw new Error(notStarted);
  const profile = await end(session);
  session.disconnect();
  session = undefined;
  writeFileSync(file, JSON.stringify(profile));
}

process.on('message', (message: ToGateway) => {
  void (async () => {
    switch (message.type) {
      case 'cpu': {
        const aggregator = await runtime?.aggregator.cpu();
        const usage = process.cpuUsage();
        const elu = performance.eventLoopUtilization();
        // Event-loop delay since the previous `cpu` message (ms): how long a ready callback could wait.
        // The histogram holds whole timer intervals: the lag is the interval minus the resolution.
        const lag = (ns: number) => Math.max(0, ns / 1e6 - LOOP_DELAY_RESOLUTION_MS);
        const loopDelay = { p50: lag(loopDelays.percentile(50)), p99: lag(loopDelays.percentile(99)), max: lag(loopDelays.max) };
        loopDelays.reset();
        const gc = gcPauses;
        gcPauses = { count: 0, totalMs: 0, maxMs: 0, overOneMs: 0, majorOverOneMs: 0 };
        send({ type: 'cpu', id: message.id, user: usage.user, system: usage.system, minorFaults: process.resourceUsage().minorPageFault, aggregator, rss: process.memoryUsage.rss(), eluIdle: elu.idle, eluActive: elu.active, loopDelay, gc });
        return;
      }
      case 'profile-start':
        return answer(message.id, () => startSession(async (inspector) => {
          await inspector.post('Profiler.enable');
          await inspector.post('Profiler.setSamplingInterval', { interval: message.intervalUs });
          await inspector.post('Profiler.start');
        }));
      case 'profile-stop':
        return answer(message.id, () => stopSession('profiler not started', async (inspector) => (await inspector.post('Profiler.stop')).profile, message.file));
      case 'heap-sample-start':
        return answer(message.id, () => startSession(async (inspector) => {
          await inspector.post('HeapProfiler.enable');
          // Objects a scavenge frees are left out (unless `all`); those it promotes (alive at the end, or
          // freed later by a full collection) are kept.
          await inspector.post('HeapProfiler.startSampling', { samplingInterval: message.intervalBytes, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: message.all === true } as never);
        }));
      case 'heap-sample-stop':
        return answer(message.id, () => stopSession('heap sampling not started', async (inspector) => (await inspector.post('HeapProfiler.stopSampling')).profile, message.file));
      case 'stub-ledger': {
        // What-if analysis only (`npm run bench -- --what-if`): no reservation, settlement or generation
        // record reaches DynamoDB, so the share of cost and latency that the accounting accounts for can be
        // measured. Never the default.
        stubbed.forEach(([target, name, stub], i) => { target[name] = message.on ? stub : real[i]; });
        send({ type: 'done', id: message.id });
        return;
      }
      case 'key-cache-ttl': {
        // What-if analysis only: a key cache whose entries outlive the run (ms) or the gateway's own again (null).
        const deps = await defaultDeps();
        originalKeyCache ??= deps.keyCache;
        deps.keyCache = message.ms === null ? originalKeyCache : new KeyCache(message.ms);
        send({ type: 'done', id: message.id });
        return;
      }
      case 'lags': {
        send({ type: 'lags', id: message.id, lagsMs: runtime?.aggregator.takeLags() ?? [] });
        return;
      }
      case 'stop':
        send({ type: 'done', id: message.id });
        await stop(0);
    }
  })();
});

// The bench went away (crash, Ctrl-C): stop too.
process.on('disconnect', () => void stop(0));
process.on('SIGINT', () => void stop(130));
process.on('SIGTERM', () => void stop(143));

main().catch((err: unknown) => {
  send({ type: 'failed', error: err instanceof Error ? err.stack ?? err.message : String(err) });
  void stop(1);
});
