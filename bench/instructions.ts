// `npm run bench:instructions -- <variant> [<variant> …]`: the gateway's CPU per request as a count of
// machine instructions instead of a time. Each variant's gateway process runs under valgrind's callgrind,
// which counts every instruction the process executes in user space (node's C++, V8's generated code, the
// garbage collector and libuv's threads alike), whatever else the machine is doing: on a shared host whose
// speed drifts (where `npm run bench`'s microseconds cannot be compared from one day to the next) the count
// of one build on one load is the same to within a few per cent from run to run. What it leaves out: time in
// the kernel (the `system` part of `npm run bench`'s CPU figure) and how fast each instruction runs.
//
// Variants are bench:ab's: `bundle` (this checkout, bundled as npm start runs it), `tsx`, or the directory
// of another checkout (a git worktree of an earlier commit with node_modules linked into it), bundled by
// its own bin/local/bundle.mjs; `tsx:<dir>` runs that checkout's gateway through tsx (as npm start did
// before the bundle, 2026-11-25; e.g. the reference day's 32a0eb2, whose flush delay is a constant: set
// FLUSH_DELAY_MS in its lambdas/billing/pages.ts to the one used here).
// For each: warm up with BENCH_INSTRUCTIONS_WARMUP requests (default 3,000: V8 has tiered up the request
// path by then), zero the counters, send BENCH_INSTRUCTIONS_REQUESTS (default 3,000) closed-loop (or paced)
// non-streaming requests over 10 connections (BENCH_AB_STREAM=1: streamed), dump the counters, and print
// instructions per request: all threads, and the main thread alone. The gateway's own children (DynamoDB
// Local, the meter aggregator) are not counted. Under callgrind a request takes about 50 times its normal
// CPU, so the timers of the page writer and the lease run relatively more often per request than at full
// speed: compare variants with each other, not with microseconds.
//
// A measurement, not a test; needs valgrind (`apt-get install valgrind`).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { Cleanup } from './children.js';
import { forkGateway, startZeroLatencySimulator } from './gateway-child.js';
import { runLoad, type RequestSpec } from './load.js';

const argv = process.argv.slice(2);
const warmup = Number(process.env.BENCH_INSTRUCTIONS_WARMUP ?? 3000);
const requests = Number(process.env.BENCH_INSTRUCTIONS_REQUESTS ?? 3000);
const stream = process.env.BENCH_AB_STREAM === '1';
// BENCH_INSTRUCTIONS_RATE: the measured requests paced at this many per second in all (closed loop when
// unset). Two builds that run at different speeds under callgrind otherwise spread the work their timers do
// (the page writer's flushes, the lease's upkeep, V8's idle-time tasks) over different numbers of requests;
// paced alike, each request carries the same share.
const rate = process.env.BENCH_INSTRUCTIONS_RATE ? Number(process.env.BENCH_INSTRUCTIONS_RATE) : undefined;
// The page writer's flush delay: 10 ms at full speed, where a saturated gateway (about 3,000 req/s on the
// reference day) puts some 20 records in a page; under callgrind (about 10 req/s) 2 s keeps that share.
const pageFlushMs = process.env.BENCH_INSTRUCTIONS_PAGE_FLUSH_MS ?? '2000';
const isCheckout = (value: string) => existsSync(join(value.replace(/^tsx:/, ''), 'bench', 'gateway-process.ts'));
if (argv.length === 0 || !argv.every((value) => value === 'bundle' || value === 'tsx' || isCheckout(value))) {
  console.error('usage: npm run bench:instructions -- <bundle|tsx|dir|tsx:dir> [<bundle|tsx|dir|tsx:dir> …]  (BENCH_INSTRUCTIONS_WARMUP, BENCH_INSTRUCTIONS_REQUESTS, BENCH_INSTRUCTIONS_PAGE_FLUSH_MS, BENCH_AB_STREAM=1)');
  process.exit(2);
}
const cleanup = new Cleanup();
const log = (line: string) => console.error(`[instructions] ${line}`);

/** callgrind_control's answer, failing loudly (it says "OK." per process it reached). */
function control(option: string, pid: number): void {
  const out = execFileSync('callgrind_control', [option, String(pid)], { encoding: 'utf8' });
  if (!out.includes('OK.')) throw new Error(`callgrind_control ${option} ${pid}: ${out}`);
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

async function measure(variant: string, simulatorUrl: string, tmp: string, index: number) {
  const dir = join(tmp, `v${index}`);
  const label = `${index + 1} (${variant})`;
  log(`${label}: starting under callgrind`);
  mkdirSync(dir, { recursive: true });
  const gateway = await forkGateway({
    label,
    ...(variant === 'bundle' || variant === 'tsx' ? { variant } : variant.startsWith('tsx:') ? { variant: 'tsx' as const, root: resolve(variant.slice(4)) } : { root: resolve(variant) }),
    env: { BENCH_DATA_DIR: join(dir, 'data'), BENCH_SIMULATOR_URL: simulatorUrl, GATEWAY_PAGE_FLUSH_MS: pageFlushMs },
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
  const load = async (count: number, paced?: number) => {
    // Paced, two connections: ten would each sit idle for long enough that the server's keep-alive timer
    // (5 s, slowed by callgrind) closes one as the client reuses it.
    const result = await runLoad({ connections: paced ? 2 : 10, warmupMs: 0, durationMs: 3_600_000, maxRequests: count, request: () => spec, ...(paced ? { rate: paced } : {}) });
    if (result.errors) throw new Error(`${label}: ${result.errors} failed requests (${result.errorSamples.join('; ')})`);
    return result;
  };
  log(`${label}: ${warmup} warm-up requests`);
  await load(warmup);
  // Only the dump asked for below counts (not an earlier run's in BENCH_INSTRUCTIONS_KEEP, nor the one at exit).
  const seen = new Set(readdirSync(dir));
  control('-z', pid);
  const result = await load(requests, rate);
  control('-d', pid);
  const dumps = readDumps(dir, seen);
  if (dumps.size === 0) throw new Error(`${label}: callgrind wrote no dump`);
  let total = 0;
  let main = 0;
  const threads: string[] = [];
  for (const [name, count] of [...dumps].sort(([a], [b]) => a.localeCompare(b))) {
    total += count;
    if (/-01$/.test(name)) main = count;
    threads.push(`${/-(\d+)$/.exec(name)?.[1] ?? name}: ${Math.round(count / result.count).toLocaleString('en-US')}`);
  }
  log(`${label}: instructions per request by thread: ${threads.join(', ')}`);
  await gateway.call({ type: 'stop' });
  return { label, perRequest: total / result.count, mainPerRequest: main / result.count, threads: dumps.size, count: result.count, rps: (result.count * 1000) / result.elapsedMs };
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
  for (const result of results) {
    const ratio = result === first ? '' : `; ${(result.perRequest / first.perRequest).toFixed(3)} × the first`;
    console.log(`${result.label}: ${Math.round(result.perRequest).toLocaleString('en-US')} instructions per ${stream ? 'streamed' : 'non-streamed'} request (main thread ${Math.round(result.mainPerRequest).toLocaleString('en-US')}; ${result.threads} threads ran; ${result.count} requests at ${result.rps.toFixed(0)} req/s under callgrind${rate ? `, paced at ${rate}` : ''})${ratio}`);
  }
}

cleanup.installHandlers();
main()
  .then(() => cleanup.run())
  .catch(async (err: unknown) => {
    console.error(err instanceof Error ? err.stack : String(err));
    await cleanup.run();
    process.exitCode = 1;
  });
