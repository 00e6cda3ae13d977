// `npm run bench:ab -- <variant> <variant>`: two builds of the gateway process side by side, measured in
// alternating rounds so that a machine whose speed drifts (a shared host) slows both alike. Each round puts
// the same closed-loop non-streaming load (10 connections) on one gateway, then on the other, and reads
// each gateway's CPU per request over its window; the figure compared is the per-round ratio B / A, with
// its median and spread across rounds.
//
// Variants:
//   tsx      bench/gateway-process.ts through tsx (each module transformed as it loads, as `npm start` ran it before)
//   bundle   the same entry bundled first (bin/local/bundle.mjs, as `npm start` and `npm run bench` run it)
//   <dir>    another checkout's gateway process, bundled: a change against the commit before it, e.g.
//            `git worktree add /tmp/base HEAD~1 && ln -s $PWD/node_modules /tmp/base/node_modules`, then
//            `npm run bench:ab -- /tmp/base bundle`
// BENCH_AB_STREAM=1 loads both with streamed replies (the simulator's echo, about 30 events) instead.
// BENCH_AB_CHUNKS=1 compares chunk forwarding instead of CPU, as `npm run bench`'s chunk phase measures it:
// each round streams through each gateway from the timed upstream (one chunk every 20 ms, 10 connections)
// and counts the chunks that arrived more than 1 ms later than the direct median (measured once, first).
// BENCH_AB_ENV_A / BENCH_AB_ENV_B: `KEY=value` pairs (space-separated) added to that variant's environment
// only, e.g. one build against itself with an allocator setting: `BENCH_AB_ENV_B='MALLOC_TRIM_THRESHOLD_=…'
// npm run bench:ab -- bundle bundle`.
//
// Each gateway has its own DynamoDB Local on disk; one simulator serves both. A measurement, not a test.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { PROJECT_ROOT } from '../bin/build.js';
import { Cleanup } from './children.js';
import { forkGateway, startZeroLatencySimulator } from './gateway-child.js';
import { runLoad, type RequestSpec } from './load.js';
import { distribution, median } from './stats.js';
import { CHUNK_PHASE, chunkTiming, countLate, directChunkTarget, startTimedUpstream, writeTimedCatalog, type TimedUpstream } from './timed-upstream.js';

const VARIANTS = ['tsx', 'bundle'] as const;
type Variant = typeof VARIANTS[number];
const isVariant = (value: string): value is Variant => (VARIANTS as readonly string[]).includes(value);
/** Another checkout: a directory with the bench's gateway process in it. */
const isCheckout = (value: string) => existsSync(join(value, 'bench', 'gateway-process.ts'));
const argv = process.argv.slice(2);
const rounds = Number(process.env.BENCH_AB_ROUNDS ?? 8);
const roundMs = Number(process.env.BENCH_AB_ROUND_MS ?? 3000);
const stream = process.env.BENCH_AB_STREAM === '1';
const chunks = process.env.BENCH_AB_CHUNKS === '1';
if (argv.length !== 2 || !argv.every((value) => isVariant(value) || isCheckout(value))) {
  console.error(`usage: npm run bench:ab -- <${VARIANTS.join('|')}|dir> <${VARIANTS.join('|')}|dir>  (BENCH_AB_ROUNDS, BENCH_AB_ROUND_MS, BENCH_AB_STREAM=1, BENCH_AB_CHUNKS=1)`);
  process.exit(2);
}
const cleanup = new Cleanup();
const log = (line: string) => console.error(`[ab] ${line}`);

interface Gateway {
  label: string;
  url: string;
  key: string;
  /** CPU (µs) and minor page faults so far. */
  cpu(): Promise<{ us: number; faults: number }>;
  /** Resident set size now (bytes). */
  rss(): Promise<number>;
}

/** `KEY=value KEY2=value2` as an environment. */
function envOf(pairs: string | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of pairs?.split(' ').filter(Boolean) ?? []) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new Error(`not KEY=value: ${pair}`);
    env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return env;
}

async function startGateway(label: string, variant: string, dataDir: string, simulatorUrl: string, extraEnv: Record<string, string>): Promise<Gateway> {
  const env = { ...extraEnv, BENCH_DATA_DIR: dataDir, BENCH_SIMULATOR_URL: simulatorUrl };
  const gateway = await forkGateway(isVariant(variant) ? { label, variant, env, cleanup } : { label, root: resolve(variant), env, cleanup });
  const ask = async () => {
    const message = await gateway.call({ type: 'cpu' });
    if (message.type !== 'cpu') throw new Error(`${label}: ${JSON.stringify(message)}`);
    return message;
  };
  return {
    label,
    url: gateway.url,
    key: gateway.key,
    cpu: () => ask().then((message) => ({ us: message.user + message.system, faults: message.minorFaults })),
    rss: () => ask().then((message) => message.rss),
  };
}

async function main(): Promise<void> {
  const tmp = mkdtempSync(join(os.tmpdir(), 'gateway-ab-'));
  cleanup.addFinal('temp dir', () => rmSync(tmp, { recursive: true, force: true }));
  const simulatorUrl = (await startZeroLatencySimulator(cleanup)).url;
  const timed = chunks ? await startTimedUpstream({ chunkDelayMs: CHUNK_PHASE.delayMs }) : undefined;
  if (timed) cleanup.add('timed upstream', () => timed.close());
  const catalog: Record<string, string> = timed ? { GATEWAY_CATALOG_FILE: writeTimedCatalog(timed, join(tmp, 'catalog.json')) } : {};
  const gateways = [
    await startGateway(`A (${argv[0]}${process.env.BENCH_AB_ENV_A ? ` ${process.env.BENCH_AB_ENV_A}` : ''})`, argv[0]!, join(tmp, 'a'), simulatorUrl, { ...catalog, ...envOf(process.env.BENCH_AB_ENV_A) }),
    await startGateway(`B (${argv[1]}${process.env.BENCH_AB_ENV_B ? ` ${process.env.BENCH_AB_ENV_B}` : ''})`, argv[1]!, join(tmp, 'b'), simulatorUrl, { ...catalog, ...envOf(process.env.BENCH_AB_ENV_B) }),
  ];
  if (timed) await compareChunks(gateways, timed);
  else await compareCpu(gateways);
}

async function compareCpu(gateways: Gateway[]): Promise<void> {
  const body = Buffer.from(JSON.stringify({ model: 'simulator/echo', stream, messages: [{ role: 'user', content: 'The quick brown fox jumps over the lazy dog. '.repeat(5) }] }));
  const spec = (gateway: Gateway): RequestSpec => ({
    url: new URL('/api/v1/chat/completions', gateway.url),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${gateway.key}` },
    body,
  });
  const round = async (gateway: Gateway, durationMs: number) => {
    let before = { us: 0, faults: 0 };
    let after = { us: 0, faults: 0 };
    const result = await runLoad({
      connections: 10, warmupMs: 500, durationMs, maxRequests: 1_000_000, request: () => spec(gateway),
      beforeMeasure: async () => { before = await gateway.cpu(); },
      afterMeasure: async () => { after = await gateway.cpu(); },
    });
    if (result.errors) throw new Error(`${gateway.label}: ${result.errors} failed requests (${result.errorSamples.join('; ')})`);
    const count = Math.max(1, result.count);
    return { us: (after.us - before.us) / count, faults: (after.faults - before.faults) / count, rps: (result.count * 1000) / result.elapsedMs };
  };
  log('warming both up');
  for (const gateway of gateways) await round(gateway, 6000);
  const ratios: number[] = [];
  const per: number[][] = [[], []];
  const faults: number[][] = [[], []];
  for (let r = 0; r < rounds; r++) {
    // Alternate which goes first, so neither always follows the other's leftovers.
    const order = r % 2 === 0 ? [0, 1] : [1, 0];
    const got: number[] = [0, 0];
    for (const i of order) {
      const measured = await round(gateways[i]!, roundMs);
      got[i] = measured.us;
      per[i]!.push(measured.us);
      faults[i]!.push(measured.faults);
      log(`round ${r + 1}: ${gateways[i]!.label} ${measured.us.toFixed(0)} µs/req, ${measured.faults.toFixed(2)} minor faults/req, ${measured.rps.toFixed(0)} req/s`);
    }
    ratios.push(got[1]! / got[0]!);
  }
  const sorted = [...ratios].sort((a, b) => a - b);
  const rss = await Promise.all(gateways.map((gateway) => gateway.rss()));
  console.log(`A = ${gateways[0]!.label}: median ${median(per[0]!).toFixed(0)} µs CPU per request (${per[0]!.map((v) => v.toFixed(0)).join(', ')}), ${median(faults[0]!).toFixed(2)} minor page faults per request; RSS at the end ${(rss[0]! / 2 ** 20).toFixed(0)} MiB`);
  console.log(`B = ${gateways[1]!.label}: median ${median(per[1]!).toFixed(0)} µs CPU per request (${per[1]!.map((v) => v.toFixed(0)).join(', ')}), ${median(faults[1]!).toFixed(2)} minor page faults per request; RSS at the end ${(rss[1]! / 2 ** 20).toFixed(0)} MiB`);
  const quartile = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(3);
  const below = ratios.filter((ratio) => ratio < 1).length;
  console.log(`B / A per round: median ${median(ratios).toFixed(3)}, quartiles ${quartile(0.25)}-${quartile(0.75)}, range ${sorted[0]!.toFixed(3)}-${sorted.at(-1)!.toFixed(3)}; B cheaper in ${below} of ${rounds} rounds of ${roundMs} ms (${(performance.now() / 1000).toFixed(0)} s in all)`);
}

/** Each round: the chunk timing of one gateway, then the other's (alternating who goes first). */
async function compareChunks(gateways: Gateway[], timed: TimedUpstream): Promise<void> {
  const load = async (target: Parameters<typeof chunkTiming>[1], durationMs: number) => {
    const timing = chunkTiming(timed, target, CHUNK_PHASE.chars);
    const result = await runLoad({ connections: 10, warmupMs: 1000, durationMs, maxRequests: 1_000_000, request: timing.spec, onOutcome: timing.onOutcome });
    if (result.errors) throw new Error(`${target.url.href}: ${result.errors} failed requests (${result.errorSamples.join('; ')})`);
    if (timing.missing) throw new Error(`${target.url.href}: ${timing.missing} chunks not seen at one end`);
    return timing.delays.values();
  };
  const viaGateway = (gateway: Gateway) => ({ url: new URL('/api/v1/chat/completions', gateway.url), headers: { 'content-type': 'application/json', authorization: `Bearer ${gateway.key}` }, model: 'bench/timed' });
  log('warming both up, then the direct baseline');
  for (const gateway of gateways) await load(viaGateway(gateway), 4000);
  const direct = await load(directChunkTarget(timed.url), roundMs);
  const baseline = distribution(direct).p50;
  log(`direct: median ${baseline.toFixed(3)} ms; ${countLate(direct, baseline)} of ${direct.length} chunks over ${CHUNK_PHASE.lateMs} ms later than it (the measuring process's own floor)`);
  const counts: number[][] = [[], []];
  const totals = [0, 0];
  let fewer = 0;
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? [0, 1] : [1, 0];
    for (const i of order) {
      const delays = await load(viaGateway(gateways[i]!), roundMs);
      const extra = distribution(Array.from(delays, (value) => value - baseline));
      const late = countLate(delays, baseline);
      counts[i]!.push(late);
      totals[i]! += delays.length;
      log(`round ${r + 1}: ${gateways[i]!.label} ${late} of ${delays.length} chunks over ${CHUNK_PHASE.lateMs} ms; extra p50 / p99 / max ${extra.p50.toFixed(2)} / ${extra.p99.toFixed(2)} / ${extra.max.toFixed(2)} ms`);
    }
    if (counts[1]![r]! < counts[0]![r]!) fewer += 1;
  }
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  for (const i of [0, 1]) console.log(`${i === 0 ? 'A' : 'B'} = ${gateways[i]!.label}: ${sum(counts[i]!)} of ${totals[i]} chunks over ${CHUNK_PHASE.lateMs} ms (per round ${counts[i]!.join(', ')})`);
  console.log(`B had fewer late chunks in ${fewer} of ${rounds} rounds, as many in ${counts[0]!.filter((count, r) => count === counts[1]![r]).length} (${(performance.now() / 1000).toFixed(0)} s in all)`);
}

cleanup.runMain(main);
