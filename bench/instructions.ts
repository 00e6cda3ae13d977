// `npm run bench:instructions -- <variant> [<variant> …]`: the gateway's CPU per request as a count of
// machine instructions instead of a time. Each variant's gateway process runs under valgrind's callgrind,
// which counts every instruction the process executes in user space (node's C++, V8's generated code, the
// garbage collector and libuv's threads alike). On a shared host whose speed drifts (where `npm run bench`'s
// microseconds cannot be compared from one day to the next) a count does not depend on how fast each
// instruction ran. What it leaves out: time in the kernel (the `system` part of `npm run bench`'s CPU
// figure) and how fast each instruction runs.
//
// Variants are bench:ab's: `bundle` (this checkout, bundled as npm start runs it), `tsx`, or the directory
// of another checkout (a git worktree of an earlier commit with node_modules linked into it), bundled by
// its own bin/local/bundle.mjs; `tsx:<dir>` runs that checkout's gateway through tsx (as npm start did
// before the bundle, 2026-11-25; e.g. the reference day's 32a0eb2, whose flush delay is a constant: set
// FLUSH_DELAY_MS in its lambdas/billing/pages.ts to the one used here).
// For each: warm up with BENCH_INSTRUCTIONS_WARMUP requests (default 3,000), zero the counters, send
// BENCH_INSTRUCTIONS_REQUESTS (default 3,000) closed-loop non-streaming requests over 10
// connections (BENCH_AB_STREAM=1: streamed), dump the counters; then zero them again, leave the process idle
// for BENCH_INSTRUCTIONS_IDLE_MS (default 20 s) and dump: its idle instructions per second. It prints
// instructions per request, of the main thread and of all threads, as counted and less the idle rate over
// the loaded window. The gateway's own children (DynamoDB Local, the meter aggregator) are not counted.
//
// Under callgrind a request takes some 50 times its normal CPU, so what the process does per second (the
// bench harness's 2 ms event-loop delay monitor, timers, V8's idle tasks) weighs on each request 50 times
// as much as at full speed, and more when the machine is busy: the same build measured twice on a loaded
// machine (40 and 27 req/s under callgrind) counted 1,118,562 and 1,121,134 main-thread instructions per
// request, and 1,025,183 on a quiet one (44 req/s). The figure less the idle rate is meant to take that
// share out, but the idle rate is noisy itself (1.6 to 6.6 million instructions a second between runs of
// nearly the same build, V8's idle-time collections among it): read differences under some 7 % as noise.
// Time-based work that depends on traffic is scaled instead: the page writer's flush delay and the key
// cache's life (below).
//
// A measurement, not a test; needs valgrind (`apt-get install valgrind`).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { join, resolve } from 'node:path';
import { Cleanup } from './children.js';
import { forkGateway, startZeroLatencySimulator } from './gateway-child.js';
import { runLoad, type RequestSpec } from './load.js';

const argv = process.argv.slice(2);
const warmup = Number(process.env.BENCH_INSTRUCTIONS_WARMUP ?? 3000);
const requests = Number(process.env.BENCH_INSTRUCTIONS_REQUESTS ?? 3000);
const stream = process.env.BENCH_AB_STREAM === '1';
// The page writer's flush delay: 10 ms at full speed, where a saturated gateway (about 3,000 req/s on the
// reference day) puts some 20 records in a page. Under callgrind at 10 ms every record had a page of its
// own (10 req/s); at 2 s a page holds 40-90 (20-46 req/s), a page's cost shared a little more widely than
// at full speed, alike for the builds compared.
const pageFlushMs = process.env.BENCH_INSTRUCTIONS_PAGE_FLUSH_MS ?? '2000';
// The caches of keys (and presets, private endpoints) live 2 s: at full speed a key is looked up again once
// every few thousand requests, under callgrind once every hundred (about 60 k instructions a request).
// Slowed alike: 120 s.
const keyCacheTtlMs = process.env.BENCH_INSTRUCTIONS_KEY_CACHE_TTL_MS ?? '120000';
const isCheckout = (value: string) => existsSync(join(value.replace(/^tsx:/, ''), 'bench', 'gateway-process.ts'));
if (argv.length === 0 || !argv.every((value) => value === 'bundle' || value === 'tsx' || isCheckout(value))) {
  console.error('usage: npm run bench:instructions -- <bundle|tsx|dir|tsx:dir> [<bundle|tsx|dir|tsx:dir> …]  (BENCH_INSTRUCTIONS_WARMUP, _REQUESTS, _IDLE_MS, _PAGE_FLUSH_MS, _KEY_CACHE_TTL_MS, _KEEP, BENCH_AB_STREAM=1)');
  process.exit(2);
}
const cleanup = new Cleanup();
const log = (line: string) => console.error(`[instructions] ${line}`);

/**
 * A callgrind monitor command (`zero`, `dump`) sent to the process through vgdb, which exits with an error
 * when it cannot reach it (callgrind_control prints "OK." either way); bounded in time.
 */
function monitor(command: 'zero' | 'dump', pid: number): void {
  execFileSync('vgdb', [`--pid=${pid}`, command], { timeout: 60_000, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** The `totals:` of each per-thread dump file made since `seen` (file name → instructions). */
function readDumps(dir: string, seen: Set<string>): Map<string, number> {
  const found = new Map<string, number>();
  for (const name of readdirSync(dir)) {
    if (seen.has(name) || !name.startsWith('callgrind.out')) continue;
    seen.add(name);
    const totals = /^totals:\s+(\d+)/m.exec(readFileSync(join(dir, name), 'utf8'));
    if (totals) found.set(name, Number(totals[1]));
  }
  return found;
}

/** Instructions in all threads, in the main thread, and per thread that ran any (name, count). */
function sumDumps(dumps: Map<string, number>): { total: number; main: number; threads: Array<[string, number]> } {
  if (dumps.size === 0) throw new Error('callgrind wrote no dump');
  let total = 0;
  let main = 0;
  const threads: Array<[string, number]> = [];
  for (const [name, count] of [...dumps].sort(([a], [b]) => a.localeCompare(b))) {
    total += count;
    if (/-01$/.test(name)) main = count;
    if (count > 0) threads.push([/-(\d+)$/.exec(name)?.[1] ?? name, count]);
  }
  return { total, main, threads };
}

async function measure(variant: string, simulatorUrl: string, tmp: string, index: number) {
  const dir = join(tmp, `v${index}`);
  const label = `${index + 1} (${variant})`;
  log(`${label}: starting under callgrind`);
  mkdirSync(dir, { recursive: true });
  const gateway = await forkGateway({
    label,
    ...(variant === 'bundle' || variant === 'tsx' ? { variant } : variant.startsWith('tsx:') ? { variant: 'tsx' as const, root: resolve(variant.slice(4)) } : { root: resolve(variant) }),
    env: { BENCH_DATA_DIR: join(dir, 'data'), BENCH_SIMULATOR_URL: simulatorUrl, GATEWAY_PAGE_FLUSH_MS: pageFlushMs, GATEWAY_KEY_CACHE_TTL_MS: keyCacheTtlMs },
    cleanup,
    // Per-thread dumps (the main thread's share apart), without per-instruction or per-line detail.
    wrapper: ['valgrind', '--tool=callgrind', '--separate-threads=yes', '--dump-instr=no', '--dump-line=no', `--callgrind-out-file=${join(dir, 'callgrind.out.%p')}`],
    startTimeoutMs: 600_000,
  });
  const pid = gateway.child.pid!;
  const body = Buffer.from(JSON.stringify({ model: 'simulator/echo', stream, messages: [{ role: 'user', content: 'The quick brown fox jumps over the lazy dog. '.repeat(5) }] }));
  const spec: RequestSpec = {
    url: new URL('/api/v1/chat/completions', gateway.url),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${gateway.key}` },
    body,
  };
  const load = async (count: number) => {
    const result = await runLoad({ connections: 10, warmupMs: 0, durationMs: 3_600_000, maxRequests: count, request: () => spec });
    if (result.errors) throw new Error(`${label}: ${result.errors} failed requests (${result.errorSamples.join('; ')})`);
    return result;
  };
  log(`${label}: ${warmup} warm-up requests`);
  await load(warmup);
  // Only the dump asked for below counts (not an earlier run's in BENCH_INSTRUCTIONS_KEEP, nor the one at exit).
  const seen = new Set(readdirSync(dir));
  monitor('zero', pid);
  const result = await load(requests);
  monitor('dump', pid);
  const loaded = sumDumps(readDumps(dir, seen));
  // The same process left idle as long: what its timers cost per second (the bench harness's event-loop
  // delay monitor, the lease and cache upkeep, V8's idle-time tasks), which a slower run spreads over fewer
  // requests. Subtracted for the corrected figure.
  const idleMs = Number(process.env.BENCH_INSTRUCTIONS_IDLE_MS ?? 20_000);
  monitor('zero', pid);
  const idleStarted = performance.now();
  await new Promise((resolve) => setTimeout(resolve, idleMs));
  const idleElapsed = performance.now() - idleStarted;
  monitor('dump', pid);
  const idle = sumDumps(readDumps(dir, seen));
  const per = (loadedCount: number, idleCount: number) => (loadedCount - (idleCount / idleElapsed) * result.elapsedMs) / result.count;
  log(`${label}: instructions per request by thread: ${loaded.threads.map(([thread, count]) => `${thread}: ${Math.round(count / result.count).toLocaleString('en-US')}`).join(', ')}; idle, per second: main ${Math.round((idle.main / idleElapsed) * 1000).toLocaleString('en-US')}, all ${Math.round((idle.total / idleElapsed) * 1000).toLocaleString('en-US')}`);
  const measured = {
    label, count: result.count, rps: (result.count * 1000) / result.elapsedMs, threads: loaded.threads.length,
    perRequest: loaded.total / result.count, mainPerRequest: loaded.main / result.count,
    lessIdle: per(loaded.total, idle.total), mainLessIdle: per(loaded.main, idle.main),
  };
  // Gone (its exit dump written) before the next variant starts on the same cores.
  const exited = new Promise((resolve) => gateway.child.once('exit', resolve));
  await gateway.call({ type: 'stop' });
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 120_000))]);
  return measured;
}

async function main(): Promise<void> {
  // BENCH_INSTRUCTIONS_KEEP: a directory that keeps the dumps (v0/, v1/ …; `callgrind_annotate` reads them).
  const kept = process.env.BENCH_INSTRUCTIONS_KEEP;
  const tmp = kept ? resolve(kept) : mkdtempSync(join(os.tmpdir(), 'gateway-instructions-'));
  if (!kept) cleanup.addFinal('temp dir', () => rmSync(tmp, { recursive: true, force: true }));
  const simulatorUrl = (await startZeroLatencySimulator(cleanup)).url;
  const results = [];
  for (const [index, variant] of argv.entries()) results.push(await measure(variant, simulatorUrl, tmp, index));
  const first = results[0]!;
  const n = (value: number) => Math.round(value).toLocaleString('en-US');
  for (const result of results) {
    const ratio = result === first ? '' : `; ${(result.mainLessIdle / first.mainLessIdle).toFixed(3)} × the first's main thread less idle, ${(result.lessIdle / first.lessIdle).toFixed(3)} × in all`;
    console.log(`${result.label}: per ${stream ? 'streamed' : 'non-streamed'} request, main thread ${n(result.mainPerRequest)} instructions (${n(result.mainLessIdle)} less its idle rate), all threads ${n(result.perRequest)} (${n(result.lessIdle)}); ${result.threads} threads busy; ${result.count} requests at ${result.rps.toFixed(0)} req/s under callgrind${ratio}`);
  }
}

cleanup.runMain(main);
