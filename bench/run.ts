// `npm run bench`: the gateway's performance benchmark (README "Benchmark").
//
// The gateway (DynamoDB Local + the Lambda handlers behind the local server, authentication and generation
// records on) in front of the upstream simulator at zero latency on loopback, 10 keep-alive connections:
//   - non-streaming and streaming throughput (closed loop) and latency at a paced load, each against the
//     same request sent to the simulator directly; added latency and added time to first byte;
//   - per-chunk forwarding delay, with a timestamping copy of the simulator streaming every 20 ms, directly,
//     through a pass-through proxy (what a process of its own adds) and through the gateway;
//   - gateway CPU per request; the inference bundle's size and its cold import time.
// Prints one markdown table with every figure against its target and writes it to bench/results/latest.md.
// A measurement, not a test: exits 0 when targets are missed (non-zero only if the bench itself fails).
//
// Flags: --profile   also CPU-profile the gateway during extra non-streaming and streaming phases and
//                    print the top functions (bench/results/*.cpuprofile).
//        --what-if   also measure the gateway with its key cache held for the whole run, then also with
//                    the ledger's DynamoDB work stubbed out (analysis only: what the accounting costs).
//        --quick     shorter phases (for trying the bench out; figures are noisier).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildBundle, bundleComposition, formatBytes, PROJECT_ROOT } from '../bin/build.js';
import { Cleanup, machineCpu, processCpuMicros, startChild, stopChild, waitForOutput, type MachineCpu } from './children.js';
import { coldImports } from './cold-import.js';
import type { FromGateway, GcPauses, ToGateway } from './gateway-process.js';
import { forkGateway, startZeroLatencySimulator, type GatewayChild, type WithoutId } from './gateway-child.js';
import { chatBody, runLoad, send, newAgent, type PhaseResult, type RequestSpec } from './load.js';
import { formatSummary, longTasks, summarize, type CpuProfile, type LongTask } from './profile.js';
import { distribution, int, median, ms, type Distribution } from './stats.js';
import { CHUNK_PHASE, chunkTiming, countLate, directChunkTarget, startTimedUpstream, taggedText, writeTimedCatalog, type TimedUpstream } from './timed-upstream.js';
import { BENCH_PROMPT_4K } from './guardrail-patterns.js';

const args = new Set(process.argv.slice(2));
const PROFILE = args.has('--profile');
const QUICK = args.has('--quick');
const WHAT_IF = args.has('--what-if');
for (const arg of args) {
  if (!['--profile', '--quick', '--what-if'].includes(arg)) {
    console.error(`unknown option ${arg}; options: --profile, --what-if, --quick`);
    process.exit(2);
  }
}

const CONNECTIONS = 10;
const CHUNK_DELAY_MS = CHUNK_PHASE.delayMs;
const MESSAGE_CHARS = 200;
const COLD_IMPORT_RUNS = QUICK ? 5 : 7;
const MAX_REQUESTS = 500_000;
const PACED_RATE_MAX = 500;
const SPEECH_CHARS = 100;
const SPEECH_RATE_MAX = 100;
const D = QUICK
  ? { gatewayWarm: 2000, warm: 1000, gatewaySat: 4000, directSat: 2500, paced: 3000, streamSat: 3000, chunk: 3000, profile: 4000 }
  : { gatewayWarm: 6000, warm: 2000, gatewaySat: 10_000, directSat: 5000, paced: 6000, streamSat: 6000, chunk: 5000, profile: 6000 };

const TARGETS = {
  bundleBytes: 1_000_000,
  coldImportMs: 150,
  addedP50Ms: 1,
  addedP99Ms: 5,
  nonStreamingRps: 3000,
  chunkDelayMs: CHUNK_PHASE.lateMs,
  /** Added time to the first audio byte of POST /audio/speech over the simulator (the "Presets and text to speech" issue). */
  addedAudioTtfbMs: 2,
  /** The request path's CPU per non-streaming request at saturation, and DynamoDB Local's (the "Money at scale" issue). */
  gatewayCpuUs: 250,
  dynamodbCpuUs: 300,
  /** What one guardrail of 20 patterns adds to a 4 KB prompt's request (the governance issue). */
  guardrailAddedMs: 0.2,
};

const RESULTS_DIR = join(PROJECT_ROOT, 'bench', 'results');
const cleanup = new Cleanup();
const log = (line: string) => console.error(`[bench] ${line}`);

// ---- the gateway child ---------------------------------------------------------------------------

async function startGateway(dataDir: string, simulatorUrl: string, catalogFile: string): Promise<GatewayChild> {
  return forkGateway({ label: 'gateway', env: { BENCH_DATA_DIR: dataDir, BENCH_SIMULATOR_URL: simulatorUrl, GATEWAY_CATALOG_FILE: catalogFile }, cleanup });
}

// ---- CPU accounting --------------------------------------------------------------------------------

interface CpuSnapshot {
  at: number;
  /** Gateway event-loop delay since the previous snapshot (ms). */
  loopDelay: { p50: number; p99: number; max: number };
  /** Gateway garbage-collection pauses since the previous snapshot. */
  gc: GcPauses;
  /** Gateway event loop: cumulative idle and active ms (performance.eventLoopUtilization). */
  eluIdle: number;
  eluActive: number;
  machine: MachineCpu | undefined;
  /** The whole gateway process. */
  gatewayUs: number;
  gatewaySystemUs: number;
  /** The gateway process's minor page faults so far (memory the kernel had to hand it). */
  gatewayMinorFaults: number;
  /** Its meter aggregator process (which is a function of its own on AWS). */
  aggregator: { user: number; system: number } | undefined;
  rss: number;
  dynamodbUs: number | undefined;
  simulatorUs: number | undefined;
  benchUs: number;
}

async function cpuSnapshot(gateway: GatewayChild, simulatorPid: number | undefined): Promise<CpuSnapshot> {
  const reply = await gateway.call({ type: 'cpu' });
  if (reply.type !== 'cpu') throw new Error(`unexpected reply from the gateway: ${JSON.stringify(reply)}`);
  const bench = process.cpuUsage();
  return {
    at: performance.now(),
    loopDelay: reply.loopDelay,
    gc: reply.gc,
    eluIdle: reply.eluIdle,
    eluActive: reply.eluActive,
    machine: machineCpu(),
    gatewayUs: reply.user + reply.system,
    gatewaySystemUs: reply.system,
    gatewayMinorFaults: reply.minorFaults,
    aggregator: reply.aggregator,
    rss: reply.rss,
    dynamodbUs: processCpuMicros(gateway.dynamodbPid),
    simulatorUs: processCpuMicros(simulatorPid),
    benchUs: bench.user + bench.system,
  };
}

interface CpuPerRequest {
  /** The request path: the gateway process (the meter aggregator is a process of its own). */
  gatewayUs: number;
  /** The kernel's part of gatewayUs (system time: sockets, loopback TCP). */
  gatewaySystemUs: number;
  /** Minor page faults of the gateway process per request. */
  gatewayMinorFaults: number;
  /** The meter aggregator process (applying the requests' pages to the meters). */
  aggregatorUs: number | undefined;
  dynamodbUs: number | undefined;
  simulatorUs: number | undefined;
  benchUs: number;
  /** Gateway CPU as a share of one core over the window. */
  gatewayCores: number;
  dynamodbCores: number | undefined;
  /** Gateway event-loop delay over the window (ms). */
  loopDelay: { p50: number; p99: number; max: number };
  /** Gateway garbage-collection pauses over the window. */
  gc: GcPauses;
  /** Share of the window the gateway's event loop was busy. */
  eventLoopUtilization: number;
  /** Machine-wide shares of CPU time over the window: busy, iowait, steal. */
  machine: { busy: number; iowait: number; steal: number } | undefined;
  rss: number;
}

function machineShares(before: MachineCpu | undefined, after: MachineCpu | undefined): CpuPerRequest['machine'] {
  if (!before || !after) return undefined;
  const busy = after.busy - before.busy;
  const idle = after.idle - before.idle;
  const iowait = after.iowait - before.iowait;
  const steal = after.steal - before.steal;
  const total = Math.max(1, busy + idle + iowait + steal);
  return { busy: busy / total, iowait: iowait / total, steal: steal / total };
}

function perRequest(before: CpuSnapshot, after: CpuSnapshot, requests: number): CpuPerRequest {
  const diff = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : (b - a) / requests);
  // The meter aggregator is a process of its own: the gateway process's CPU is the request path's. Its own
  // figure counts only when both snapshots have it from the same process (one started again counts from zero).
  const aggregator = before.aggregator && after.aggregator && after.aggregator.user >= before.aggregator.user && after.aggregator.system >= before.aggregator.system
    ? { user: after.aggregator.user - before.aggregator.user, system: after.aggregator.system - before.aggregator.system }
    : undefined;
  const requestPathUs = after.gatewayUs - before.gatewayUs;
  return {
    gatewayUs: requestPathUs / requests,
    gatewaySystemUs: (after.gatewaySystemUs - before.gatewaySystemUs) / requests,
    gatewayMinorFaults: (after.gatewayMinorFaults - before.gatewayMinorFaults) / requests,
    aggregatorUs: aggregator ? (aggregator.user + aggregator.system) / requests : undefined,
    dynamodbUs: diff(before.dynamodbUs, after.dynamodbUs),
    simulatorUs: diff(before.simulatorUs, after.simulatorUs),
    benchUs: (after.benchUs - before.benchUs) / requests,
    gatewayCores: requestPathUs / 1000 / (after.at - before.at),
    dynamodbCores: before.dynamodbUs === undefined || after.dynamodbUs === undefined ? undefined : (after.dynamodbUs - before.dynamodbUs) / 1000 / (after.at - before.at),
    loopDelay: after.loopDelay,
    gc: after.gc,
    eventLoopUtilization: (after.eluActive - before.eluActive) / Math.max(1e-9, (after.eluActive - before.eluActive) + (after.eluIdle - before.eluIdle)),
    machine: machineShares(before.machine, after.machine),
    rss: after.rss,
  };
}

// ---- phases ------------------------------------------------------------------------------------------

interface Measured {
  label: string;
  result: PhaseResult;
  rps: number;
  latency: Distribution;
  ttfb: Distribution;
  cpu?: CpuPerRequest;
}

async function measure(
  label: string,
  options: { spec: (worker: number, n: number) => RequestSpec; warmupMs: number; durationMs: number; rate?: number; cpu?: () => Promise<CpuSnapshot>; onOutcome?: Parameters<typeof runLoad>[0]['onOutcome'] },
): Promise<Measured> {
  log(`${label}: ${options.rate ? `paced at ${options.rate} req/s` : 'closed loop'}, ${CONNECTIONS} connections, ${options.warmupMs} ms warm-up + ${options.durationMs} ms`);
  let before: CpuSnapshot | undefined;
  let after: CpuSnapshot | undefined;
  const result = await runLoad({
    connections: CONNECTIONS,
    warmupMs: options.warmupMs,
    durationMs: options.durationMs,
    maxRequests: MAX_REQUESTS,
    request: options.spec,
    ...(options.rate ? { rate: options.rate } : {}),
    ...(options.onOutcome ? { onOutcome: options.onOutcome } : {}),
    beforeMeasure: async () => { if (options.cpu) before = await options.cpu(); },
    afterMeasure: async () => { if (options.cpu) after = await options.cpu(); },
  });
  const measured: Measured = {
    label,
    result,
    rps: (result.count * 1000) / result.elapsedMs,
    latency: distribution(result.latency),
    ttfb: distribution(result.ttfb),
    ...(before && after ? { cpu: perRequest(before, after, Math.max(1, result.count)) } : {}),
  };
  log(`  ${int(measured.rps)} req/s, p50 ${ms(measured.latency.p50)}, p99 ${ms(measured.latency.p99)}, ttfb p50 ${ms(measured.ttfb.p50)}${measured.cpu ? `, gateway ${measured.cpu.gatewayUs.toFixed(0)} µs CPU/req` : ''}${result.errors ? `, ${result.errors} ERRORS (${result.errorSamples.join('; ')})` : ''}`);
  return measured;
}

async function preflight(label: string, spec: RequestSpec, check: (body: string) => boolean): Promise<void> {
  const agent = newAgent(1);
  try {
    const outcome = await send(agent, spec, true);
    if (outcome.status !== 200 || !check(outcome.body ?? '')) {
      throw new Error(`preflight ${label} failed: HTTP ${outcome.status} ${outcome.error ?? ''}\n${(outcome.body ?? '').slice(0, 1000)}`);
    }
  } finally {
    agent.destroy();
  }
}

// ---- report ------------------------------------------------------------------------------------------

interface Row {
  metric: string;
  value: string;
  target?: string;
  pass?: boolean;
}

function table(rows: Row[]): string {
  const lines = ['| Metric | Result | Target | |', '|---|---|---|:-:|'];
  for (const row of rows) lines.push(`| ${row.metric} | ${row.value} | ${row.target ?? '—'} | ${row.pass === undefined ? '' : row.pass ? '✓' : '✗'} |`);
  return lines.join('\n');
}

const trio = (d: Distribution) => `${ms(d.p50)} / ${ms(d.p90)} / ${ms(d.p99)}`;
const cpuCell = (cpu: CpuPerRequest | undefined, cores: boolean) => cpu
  ? `${us(cpu.gatewayUs)} (${us(cpu.gatewayUs - cpu.gatewaySystemUs)} user + ${us(cpu.gatewaySystemUs)} system; ${cpu.gatewayMinorFaults.toFixed(1)} minor page faults)${cpu.aggregatorUs === undefined ? '' : `, + ${us(cpu.aggregatorUs)} in the meter aggregator process`}${cores ? `; ${cpu.gatewayCores.toFixed(2)} cores busy, event loop ${pct(cpu.eventLoopUtilization)} utilized` : ''}`
  : 'n/a';
const bundleMargin = (bytes: number) => {
  const decimal = TARGETS.bundleBytes - bytes;
  const binary = 1024 * 1024 - bytes;
  const say = (margin: number, unit: string) => (margin >= 0 ? `${int(margin)} B under ${unit}` : `${int(-margin)} B over ${unit}`);
  return `${say(decimal, '10⁶ B')}, ${say(binary, '1 MiB')}`;
};
const pct = (share: number | undefined) => (share === undefined || !Number.isFinite(share) ? 'n/a' : `${(share * 100).toFixed(0)}%`);
const us = (value: number | undefined) => (value === undefined || !Number.isFinite(value) ? 'n/a' : `${value.toFixed(0)} µs`);

/** The commit measured, and whether the working tree differs from it. */
function codeVersion(): string {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: PROJECT_ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: PROJECT_ROOT, encoding: 'utf8' }).trim() !== '';
    return `code ${commit}${dirty ? ' + uncommitted changes' : ''}`;
  } catch {
    return 'code version unknown';
  }
}

// ---- main ----------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const benchStarted = performance.now();
  const code = codeVersion();
  const loadBefore = os.loadavg();
  mkdirSync(RESULTS_DIR, { recursive: true });

  // 1. The inference bundle, exactly as CDK bundles it: size and cold import time.
  log('building the inference bundle (bin/bundle-options.ts, as CDK deploys it)');
  const bundle = await buildBundle('inference', { metafile: true });
  log(`  ${relative(PROJECT_ROOT, bundle.file)}: ${int(bundle.bytes)} bytes (${formatBytes(bundle.bytes)})`);
  log(`cold import: ${COLD_IMPORT_RUNS} fresh node processes per variant`);
  const imports = await coldImports(bundle.file, COLD_IMPORT_RUNS, {
    deployed: ['--enable-source-maps'],
    plain: [],
  });
  const coldDeployed = median(imports.deployed!.map((run) => run.importMs));
  const coldPlain = median(imports.plain!.map((run) => run.importMs));
  log(`  median ${ms(coldDeployed)} with --enable-source-maps (the function's NODE_OPTIONS), ${ms(coldPlain)} without`);

  // 2. The processes: simulator (zero latency), the timed upstream (in this process), the gateway.
  const tmp = mkdtempSync(join(os.tmpdir(), 'gateway-bench-'));
  cleanup.addFinal('temp dir', () => rmSync(tmp, { recursive: true, force: true }));

  log('starting the simulator (zero latency)');
  const simulator = await startZeroLatencySimulator(cleanup);
  const simulatorUrl = simulator.url;

  const timed: TimedUpstream = await startTimedUpstream({ chunkDelayMs: CHUNK_DELAY_MS });
  cleanup.add('timed upstream', () => timed.close());
  const catalogFile = writeTimedCatalog(timed, join(tmp, 'catalog.json'));
  const passThrough = startChild('pass-through proxy', process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, 'bench', 'pass-through.ts'), timed.url], { cwd: PROJECT_ROOT });
  cleanup.add('pass-through proxy', () => stopChild(passThrough.process));
  const passThroughUrl = (await waitForOutput(passThrough, /listening on (http:\/\/127\.0\.0\.1:\d+)/, 30_000))[1]!;

  log('starting the gateway (DynamoDB Local + handlers) and creating a regular API key');
  const gateway = await startGateway(join(tmp, 'gateway'), simulatorUrl, catalogFile);
  log(`  gateway ${gateway.url}, simulator ${simulatorUrl}, timed upstream ${timed.url}`);
  const cpu = () => cpuSnapshot(gateway, simulator.pid);

  // 3. Requests.
  const content = taggedText('bench', MESSAGE_CHARS);
  const gatewayUrl = new URL('/api/v1/chat/completions', gateway.url);
  const directUrl = new URL('/v1/chat/completions', simulatorUrl);
  const gatewayHeaders = { 'content-type': 'application/json', authorization: `Bearer ${gateway.key}` };
  const directHeaders = { 'content-type': 'application/json' };
  const spec = (target: 'gateway' | 'direct', stream: boolean): RequestSpec => target === 'gateway'
    ? { url: gatewayUrl, headers: gatewayHeaders, body: chatBody('simulator/echo', content, stream) }
    : { url: directUrl, headers: directHeaders, body: chatBody('echo', content, stream) };
  // Text to speech: the simulator's OpenAI speech format, MP3 of a SPEECH_CHARS-character text (about 6 s of audio).
  const speechText = content.slice(0, SPEECH_CHARS);
  const speechBody = (model: string) => Buffer.from(JSON.stringify({ model, input: speechText, voice: 'alloy', response_format: 'mp3' }));
  const specs = {
    gatewayJson: spec('gateway', false), directJson: spec('direct', false),
    gatewaySse: spec('gateway', true), directSse: spec('direct', true),
    gatewaySpeech: { url: new URL('/api/v1/audio/speech', gateway.url), headers: gatewayHeaders, body: speechBody('simulator/tts') } as RequestSpec,
    directSpeech: { url: new URL('/v1/audio/speech', simulatorUrl), headers: directHeaders, body: speechBody('tts-echo') } as RequestSpec,
  };

  const echoed = (body: string) => (JSON.parse(body) as { choices?: Array<{ message?: { content?: unknown } }> }).choices?.[0]?.message?.content === content;
  const streamed = (body: string) => body.includes('[DONE]') && body.includes('"content"');
  await preflight('direct, non-streaming', specs.directJson, echoed);
  await preflight('gateway, non-streaming', specs.gatewayJson, echoed);
  await preflight('direct, streaming', specs.directSse, streamed);
  await preflight('gateway, streaming', specs.gatewaySse, streamed);
  // Audio, not a JSON error (the body arrives decoded as UTF-8: MP3's sync bytes are not text).
  const audio = (body: string) => body.length > 1000 && !body.trimStart().startsWith('{');
  await preflight('direct, speech', specs.directSpeech, audio);
  await preflight('gateway, speech', specs.gatewaySpeech, audio);

  // One longer warm-up of the whole gateway path first (V8's JIT in the gateway, and the JVM's in
  // DynamoDB Local, which takes thousands of writes to reach its steady state); each phase warms up again.
  log(`warming up the gateway for ${(D.gatewayWarm / 1000).toFixed(0)} s`);
  await runLoad({ connections: CONNECTIONS, warmupMs: 0, durationMs: D.gatewayWarm * 0.7, maxRequests: MAX_REQUESTS, request: () => specs.gatewayJson });
  await runLoad({ connections: CONNECTIONS, warmupMs: 0, durationMs: D.gatewayWarm * 0.3, maxRequests: MAX_REQUESTS, request: () => specs.gatewaySse });

  // Non-streaming throughput (closed loop).
  const directJsonSat = await measure('non-streaming, direct, throughput', { spec: () => specs.directJson, warmupMs: D.warm / 2, durationMs: D.directSat });
  await gateway.call({ type: 'lags' });
  const gatewayJsonSat = await measure('non-streaming, gateway, throughput', { spec: () => specs.gatewayJson, warmupMs: D.warm, durationMs: D.gatewaySat, cpu });
  const lagReply = await gateway.call({ type: 'lags' });
  const aggregatorLag = distribution(lagReply.type === 'lags' ? lagReply.lagsMs : []);

  // Latency at a load neither side is saturated by.
  // A quarter of what the gateway sustains, so the paced phases measure a request's own cost, not queueing
  // (at least 1 req/s: a slow store on a busy machine can bring the gateway under 50 req/s).
  const quarter = gatewayJsonSat.rps / 4;
  const rate = Math.min(PACED_RATE_MAX, quarter >= 50 ? Math.round(quarter / 10) * 10 : Math.max(1, Math.round(quarter)));
  const directJsonPaced = await measure('non-streaming, direct, latency', { spec: () => specs.directJson, warmupMs: D.warm / 2, durationMs: D.paced, rate });
  await gateway.call({ type: 'lags' });
  const gatewayJsonPaced = await measure('non-streaming, gateway, latency', { spec: () => specs.gatewayJson, warmupMs: D.warm / 2, durationMs: D.paced, rate, cpu });
  const pacedLagReply = await gateway.call({ type: 'lags' });
  const pacedLag = distribution(pacedLagReply.type === 'lags' ? pacedLagReply.lagsMs : []);

  // Streaming: time to first byte and total at the same paced load, then throughput.
  const directSsePaced = await measure('streaming, direct, latency', { spec: () => specs.directSse, warmupMs: D.warm / 2, durationMs: D.paced, rate });
  const gatewaySsePaced = await measure('streaming, gateway, latency', { spec: () => specs.gatewaySse, warmupMs: D.warm / 2, durationMs: D.paced, rate, cpu });
  const directSseSat = await measure('streaming, direct, throughput', { spec: () => specs.directSse, warmupMs: D.warm / 2, durationMs: D.directSat });
  const gatewaySseSat = await measure('streaming, gateway, throughput', { spec: () => specs.gatewaySse, warmupMs: D.warm / 2, durationMs: D.streamSat, cpu });

  // Speech: time to the first audio byte at a paced load (a tenth of a second of audio is the first chunk).
  const speechRate = Math.min(rate, SPEECH_RATE_MAX);
  const directSpeechPaced = await measure('speech, direct, time to first audio byte', { spec: () => specs.directSpeech, warmupMs: D.warm / 2, durationMs: D.paced, rate: speechRate });
  const gatewaySpeechPaced = await measure('speech, gateway, time to first audio byte', { spec: () => specs.gatewaySpeech, warmupMs: D.warm / 2, durationMs: D.paced, rate: speechRate, cpu });

  // One guardrail of 20 patterns on a 4 KB prompt: the same request through a key without it and a key with
  // it, at the paced load; the difference of the two is what the guardrail adds.
  const prompt4k = (key: string): RequestSpec => ({
    url: gatewayUrl, headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: chatBody('simulator/echo', BENCH_PROMPT_4K, false),
  });
  await preflight('gateway, 4 KB prompt, guarded key', prompt4k(gateway.guardedKey), (body) => body.includes('[REDACTED:EMAIL]'));
  const plain4k = await measure('non-streaming, 4 KB prompt, gateway, latency', { spec: () => prompt4k(gateway.key), warmupMs: D.warm / 2, durationMs: D.paced, rate });
  const guarded4k = await measure('non-streaming, 4 KB prompt, one guardrail of 20 patterns, gateway, latency', { spec: () => prompt4k(gateway.guardedKey), warmupMs: D.warm / 2, durationMs: D.paced, rate });

  // Chunk forwarding: the timed upstream streams a chunk every CHUNK_DELAY_MS; per content chunk,
  // arrival at the client minus the moment the upstream wrote it, directly and through the gateway.
  // `profiled`: a CPU profile of the gateway over the measured window, and each chunk's emission and
  // arrival (this process's performance.now()) for lining late chunks up with it.
  const chunkPhase = async (target: 'gateway' | 'direct' | 'pass-through', profiled?: { snapshot: () => Promise<CpuSnapshot>; chunks: Array<[number, number]> }) => {
    const timing = chunkTiming(timed, target === 'gateway'
      ? { url: gatewayUrl, headers: gatewayHeaders, model: 'bench/timed' }
      : directChunkTarget(target === 'direct' ? timed.url : passThroughUrl), CHUNK_PHASE.chars, profiled && ((emission, arrival) => profiled.chunks.push([emission, arrival])));
    const phase = await measure(`streaming every ${CHUNK_DELAY_MS} ms, ${target}, per-chunk delay`, {
      warmupMs: D.warm / 2,
      durationMs: D.chunk,
      ...(target === 'gateway' ? { cpu: profiled?.snapshot ?? cpu } : {}),
      spec: timing.spec,
      onOutcome: timing.onOutcome,
    });
    return { phase, delays: distribution(timing.delays.values()), raw: Float64Array.from(timing.delays.values()), missing: timing.missing };
  };
  const chunksDirect = await chunkPhase('direct');
  const chunksPassThrough = await chunkPhase('pass-through');
  const chunksGateway = await chunkPhase('gateway');
  const chunkBaseline = chunksDirect.delays.p50;
  const extra = distribution(chunksGateway.raw.map((value) => value - chunkBaseline));
  const overTarget = countLate(chunksGateway.raw, chunkBaseline);
  // The same count for the direct run: the measuring process's own stalls (the timed upstream and the client
  // share it), the floor under the gateway's figure.
  const overTargetDirect = countLate(chunksDirect.raw, chunkBaseline);
  // And through a pass-through proxy in a process of its own: what one more process adds on this machine.
  const overTargetPassThrough = countLate(chunksPassThrough.raw, chunkBaseline);

  // Optional: where the gateway's CPU goes.
  const profiles: string[] = [];
  // A phase's CPU snapshot, called just before its measured window and just after it, that starts the
  // gateway's profiler (sampling every `intervalUs`) at the first call.
  const profilingCpu = (intervalUs: number) => {
    let profiling = false;
    return async () => {
      const snapshot = await cpu();
      if (!profiling) {
        profiling = true;
        const reply = await gateway.call({ type: 'profile-start', intervalUs });
        if (reply.type === 'done' && reply.error) throw new Error(reply.error);
      }
      return snapshot;
    };
  };
  const profilePhase = async (name: string, target: RequestSpec) => {
    const file = join(RESULTS_DIR, `gateway-${name.replace(/[^a-z0-9]+/gi, '-')}.cpuprofile`);
    const phase = await measure(`${name}, gateway, CPU profile`, { spec: () => target, warmupMs: D.warm / 2, durationMs: D.profile, cpu: profilingCpu(200) });
    const reply = await gateway.call({ type: 'profile-stop', file });
    if (reply.type === 'done' && reply.error) throw new Error(reply.error);
    const summary = summarize(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, 25);
    profiles.push(formatSummary(`Gateway CPU profile, ${name} (${int(phase.rps)} req/s while profiling, ${cpuCell(phase.cpu, false)} CPU/req; ${relative(PROJECT_ROOT, file)})`, summary, phase.result.count));
  };
  // The chunk phase under a fine profile (100 µs): the gateway's busy stretches over 1 ms (in which no
  // chunk can be forwarded), and which of them the late chunks waited behind.
  const profileChunks = async (): Promise<string> => {
    const file = join(RESULTS_DIR, 'gateway-chunks.cpuprofile');
    const chunks: Array<[number, number]> = [];
    await chunkPhase('gateway', { snapshot: profilingCpu(100), chunks });
    const reply = await gateway.call({ type: 'profile-stop', file });
    if (reply.type === 'done' && reply.error) throw new Error(reply.error);
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    const tasks = longTasks(profile, TARGETS.chunkDelayMs);
    // This process's performance.now() (ms) on the machine's monotonic clock (µs), which V8's profiles use.
    const monotonicUs = (at: number) => at * 1000 + (Number(process.hrtime.bigint() / 1000n) - performance.now() * 1000);
    const inWindow = chunks
      .map(([emitted, arrived]) => [monotonicUs(emitted), monotonicUs(arrived), arrived - emitted - chunkBaseline] as const)
      .filter(([emitted]) => emitted >= profile.startTime && emitted <= profile.endTime);
    const late = inWindow.filter(([, , extra]) => extra > TARGETS.chunkDelayMs);
    const behind = new Map<LongTask, number>();
    let explained = 0;
    for (const [emitted, arrived] of late) {
      const task = tasks.find((t) => t.startUs < arrived && t.startUs + t.ms * 1000 > emitted);
      if (!task) continue;
      explained += 1;
      behind.set(task, (behind.get(task) ?? 0) + 1);
    }
    const busiest = [...tasks].sort((a, b) => b.ms - a.ms).slice(0, 15);
    return [
      `### Gateway busy stretches during the chunk phase (100 µs samples; ${relative(PROJECT_ROOT, file)})`,
      '',
      `${int(tasks.length)} stretches over ${TARGETS.chunkDelayMs} ms (${ms(tasks.reduce((sum, t) => sum + t.ms, 0))} in all) in ${ms((profile.endTime - profile.startTime) / 1000)}; ${int(late.length)} of ${int(inWindow.length)} chunks over ${TARGETS.chunkDelayMs} ms late, ${int(explained)} of them waiting behind one. The longest, with the functions of most self time in them (ms) and the late chunks behind each:`,
      '',
      '| length | late chunks | what ran |',
      '|---:|---:|---|',
      ...busiest.map((t) => `| ${ms(t.ms)} | ${int(behind.get(t) ?? 0)} | ${t.top.map((entry) => `\`${entry}\``).join(', ')} |`),
      '',
    ].join('\n');
  };
  if (PROFILE) {
    await profilePhase('non-streaming', specs.gatewayJson);
    await profilePhase('streaming', specs.gatewaySse);
    profiles.push(await profileChunks());
  }

  // Optional what-ifs (analysis only, not results): the same gateway (1) with a key cache that does not
  // expire during the run, so no request waits for a key lookup; (2) additionally with the ledger's
  // DynamoDB work (holds, leases, the records' pages) stubbed out (accounting off). Together they show how much of the cost and latency the
  // DynamoDB round trips account for, and what the gateway's own code costs.
  const whatIfColumns: Array<{ label: string; sat: Measured; paced: Measured; sse: Measured; chunks: Awaited<ReturnType<typeof chunkPhase>> }> = [];
  if (WHAT_IF) {
    const ask = async (message: WithoutId<ToGateway>) => {
      const reply = await gateway.call(message);
      if (reply.type === 'done' && reply.error) throw new Error(reply.error);
    };
    const scenario = async (label: string) => {
      const sat = await measure(`WHAT-IF ${label}: non-streaming, gateway, throughput`, { spec: () => specs.gatewayJson, warmupMs: D.warm / 2, durationMs: D.streamSat, cpu });
      const paced = await measure(`WHAT-IF ${label}: non-streaming, gateway, latency`, { spec: () => specs.gatewayJson, warmupMs: D.warm / 2, durationMs: D.paced, rate });
      const sse = await measure(`WHAT-IF ${label}: streaming, gateway, latency`, { spec: () => specs.gatewaySse, warmupMs: D.warm / 2, durationMs: D.paced, rate });
      const chunks = await chunkPhase('gateway');
      whatIfColumns.push({ label, sat, paced, sse, chunks });
    };
    try {
      await ask({ type: 'key-cache-ttl', ms: 3_600_000 });
      await scenario('key cache held for the run');
      await ask({ type: 'stub-ledger', on: true });
      await scenario('key cache held + no accounting writes');
      if (PROFILE) await profilePhase('non-streaming, key cache held, accounting stubbed', specs.gatewayJson);
    } finally {
      await ask({ type: 'stub-ledger', on: false });
      await ask({ type: 'key-cache-ttl', ms: null });
    }
  }
  const loadAfter = os.loadavg();

  // 4. The report.
  const added = (gateway: Distribution, direct: Distribution, p: 'p50' | 'p90' | 'p99') => gateway[p] - direct[p];
  const addedP50 = added(gatewayJsonPaced.latency, directJsonPaced.latency, 'p50');
  const addedP99 = added(gatewayJsonPaced.latency, directJsonPaced.latency, 'p99');
  const addedTtfbP50 = added(gatewaySsePaced.ttfb, directSsePaced.ttfb, 'p50');
  const addedTtfbP99 = added(gatewaySsePaced.ttfb, directSsePaced.ttfb, 'p99');
  const addedAudioP50 = added(gatewaySpeechPaced.ttfb, directSpeechPaced.ttfb, 'p50');
  const addedAudioP99 = added(gatewaySpeechPaced.ttfb, directSpeechPaced.ttfb, 'p99');
  const allPhases = [directJsonSat, gatewayJsonSat, directJsonPaced, gatewayJsonPaced, directSsePaced, gatewaySsePaced, directSseSat, gatewaySseSat, directSpeechPaced, gatewaySpeechPaced, plain4k, guarded4k, chunksDirect.phase, chunksPassThrough.phase, chunksGateway.phase];
  const guardrailAddedP50 = guarded4k.latency.p50 - plain4k.latency.p50;
  const errors = allPhases.reduce((sum, phase) => sum + phase.result.errors, 0);
  const composition = bundleComposition(bundle);

  const rows: Row[] = [
    { metric: 'Inference bundle size (dist/inference/index.mjs, same esbuild options as the CDK asset)', value: `${int(bundle.bytes)} B (${formatBytes(bundle.bytes)}): ${bundleMargin(bundle.bytes)}; source map ${formatBytes(bundle.mapBytes)} beside it`, target: `≤ 1 MB (${int(TARGETS.bundleBytes)} B)`, pass: bundle.bytes <= TARGETS.bundleBytes },
    { metric: `Cold import, as deployed (\`--enable-source-maps\`), median of ${COLD_IMPORT_RUNS}`, value: `${ms(coldDeployed)} (min ${ms(Math.min(...imports.deployed!.map((r) => r.importMs)))}, max ${ms(Math.max(...imports.deployed!.map((r) => r.importMs)))})`, target: `≤ ${TARGETS.coldImportMs} ms`, pass: coldDeployed <= TARGETS.coldImportMs },
    { metric: `Cold import without source maps, median of ${COLD_IMPORT_RUNS}`, value: ms(coldPlain) },
    { metric: 'Non-streaming throughput, gateway (closed loop)', value: `${int(gatewayJsonSat.rps)} req/s`, target: `≥ ${int(TARGETS.nonStreamingRps)} req/s`, pass: gatewayJsonSat.rps >= TARGETS.nonStreamingRps },
    { metric: 'Non-streaming throughput, simulator direct', value: `${int(directJsonSat.rps)} req/s` },
    { metric: 'Non-streaming latency at saturation, gateway p50 / p90 / p99', value: trio(gatewayJsonSat.latency) },
    { metric: `Non-streaming latency at ${rate} req/s, direct p50 / p90 / p99`, value: trio(directJsonPaced.latency) },
    { metric: `Non-streaming latency at ${rate} req/s, gateway p50 / p90 / p99`, value: trio(gatewayJsonPaced.latency) },
    { metric: 'Added latency p50 (gateway − direct)', value: ms(addedP50), target: `≤ ${TARGETS.addedP50Ms} ms`, pass: addedP50 <= TARGETS.addedP50Ms },
    { metric: 'Added latency p90', value: ms(added(gatewayJsonPaced.latency, directJsonPaced.latency, 'p90')) },
    { metric: 'Added latency p99', value: ms(addedP99), target: `≤ ${TARGETS.addedP99Ms} ms`, pass: addedP99 <= TARGETS.addedP99Ms },
    { metric: `Streaming TTFB at ${rate} req/s, direct p50 / p90 / p99`, value: trio(directSsePaced.ttfb) },
    { metric: `Streaming TTFB at ${rate} req/s, gateway p50 / p90 / p99`, value: trio(gatewaySsePaced.ttfb) },
    { metric: 'Added time to first byte p50', value: ms(addedTtfbP50), target: `≤ ${TARGETS.addedP50Ms} ms`, pass: addedTtfbP50 <= TARGETS.addedP50Ms },
    { metric: 'Added time to first byte p99', value: ms(addedTtfbP99), target: `≤ ${TARGETS.addedP99Ms} ms`, pass: addedTtfbP99 <= TARGETS.addedP99Ms },
    { metric: 'Streaming total time, direct / gateway p50', value: `${ms(directSsePaced.latency.p50)} / ${ms(gatewaySsePaced.latency.p50)}` },
    { metric: 'Streaming throughput, gateway / direct (closed loop)', value: `${int(gatewaySseSat.rps)} / ${int(directSseSat.rps)} req/s` },
    { metric: `Speech: time to first audio byte at ${speechRate} req/s (${SPEECH_CHARS}-character text, MP3), direct p50 / p90 / p99`, value: trio(directSpeechPaced.ttfb) },
    { metric: `Speech: time to first audio byte at ${speechRate} req/s, gateway p50 / p90 / p99`, value: trio(gatewaySpeechPaced.ttfb) },
    { metric: 'Added time to first audio byte p50 (gateway − simulator)', value: ms(addedAudioP50), target: `≤ ${TARGETS.addedAudioTtfbMs} ms`, pass: addedAudioP50 <= TARGETS.addedAudioTtfbMs },
    { metric: 'Non-streaming latency with a 4 KB prompt at the paced rate, gateway p50 / p99: without a guardrail; with one guardrail of 20 patterns (7 built-ins, 13 patterns)', value: `${ms(plain4k.latency.p50)} / ${ms(plain4k.latency.p99)}; ${ms(guarded4k.latency.p50)} / ${ms(guarded4k.latency.p99)}` },
    { metric: 'Added latency of one guardrail of 20 patterns on a 4 KB prompt, p50 (with − without)', value: ms(guardrailAddedP50), target: `≤ ${TARGETS.guardrailAddedMs} ms`, pass: guardrailAddedP50 <= TARGETS.guardrailAddedMs },
    { metric: 'Added time to first audio byte p99', value: ms(addedAudioP99) },
    { metric: 'Speech total time (whole MP3), direct / gateway p50', value: `${ms(directSpeechPaced.latency.p50)} / ${ms(gatewaySpeechPaced.latency.p50)}` },
    { metric: `Chunk forwarding: extra delay per chunk, p50 / p99 / max (${int(extra.count)} chunks, ${CHUNK_DELAY_MS} ms apart)`, value: `${ms(extra.p50)} / ${ms(extra.p99)} / ${ms(extra.max)}; ${int(overTarget)} chunk(s) over ${TARGETS.chunkDelayMs} ms`, target: `every chunk ≤ ${TARGETS.chunkDelayMs} ms`, pass: extra.max <= TARGETS.chunkDelayMs && chunksGateway.missing === 0 },
    { metric: 'Gateway garbage-collection pauses during the chunk phase: count, total, max; over 1 ms (of them full collections)', value: chunksGateway.phase.cpu ? `${int(chunksGateway.phase.cpu.gc.count)}, ${ms(chunksGateway.phase.cpu.gc.totalMs)}, ${ms(chunksGateway.phase.cpu.gc.maxMs)}; ${int(chunksGateway.phase.cpu.gc.overOneMs)} (${int(chunksGateway.phase.cpu.gc.majorOverOneMs)})` : 'n/a' },
    { metric: 'Gateway event-loop delay during the chunk phase p50 / p99 / max', value: chunksGateway.phase.cpu ? `${ms(chunksGateway.phase.cpu.loopDelay.p50)} / ${ms(chunksGateway.phase.cpu.loopDelay.p99)} / ${ms(chunksGateway.phase.cpu.loopDelay.max)}` : 'n/a' },
    { metric: 'Chunk delay upstream → client p50 / p99 / max, direct; via gateway', value: `${ms(chunksDirect.delays.p50)} / ${ms(chunksDirect.delays.p99)} / ${ms(chunksDirect.delays.max)}; ${ms(chunksGateway.delays.p50)} / ${ms(chunksGateway.delays.p99)} / ${ms(chunksGateway.delays.max)}` },
    { metric: `Chunks over ${TARGETS.chunkDelayMs} ms late without the gateway (direct run, same baseline): the measuring process's own floor`, value: `${int(overTargetDirect)} of ${int(chunksDirect.raw.length)}` },
    { metric: `Chunks over ${TARGETS.chunkDelayMs} ms late through a pass-through proxy (bench/pass-through.ts: node:http, a process of its own, nothing parsed; same baseline): what one more process adds on this machine, a reference beside the gateway's count`, value: `${int(overTargetPassThrough)} of ${int(chunksPassThrough.raw.length)} (extra p99 / max ${ms(chunksPassThrough.delays.p99 - chunkBaseline)} / ${ms(chunksPassThrough.delays.max - chunkBaseline)})` },
    { metric: 'Gateway CPU per request, non-streaming (at saturation; the request path: the gateway process, the meter aggregator being a process of its own)', value: cpuCell(gatewayJsonSat.cpu, true), target: `≤ ${TARGETS.gatewayCpuUs} µs`, pass: (gatewayJsonSat.cpu?.gatewayUs ?? Number.POSITIVE_INFINITY) <= TARGETS.gatewayCpuUs },
    { metric: `Gateway CPU per request, non-streaming (at ${rate} req/s)`, value: cpuCell(gatewayJsonPaced.cpu, false) },
    { metric: 'Gateway CPU per request, streaming (at saturation)', value: cpuCell(gatewaySseSat.cpu, true) },
    { metric: `Meter aggregator process CPU per request, non-streaming, at saturation / at ${rate} req/s (a function of its own on AWS)`, value: `${us(gatewayJsonSat.cpu?.aggregatorUs)} / ${us(gatewayJsonPaced.cpu?.aggregatorUs)}` },
    { metric: 'DynamoDB Local CPU per request, non-streaming (separate process)', value: `${us(gatewayJsonSat.cpu?.dynamodbUs)}; ${(gatewayJsonSat.cpu?.dynamodbCores ?? Number.NaN).toFixed(2)} cores busy`, target: `≤ ${TARGETS.dynamodbCpuUs} µs`, pass: (gatewayJsonSat.cpu?.dynamodbUs ?? Number.POSITIVE_INFINITY) <= TARGETS.dynamodbCpuUs },
    { metric: 'Machine CPU during the non-streaming gateway throughput phase (both cores)', value: gatewayJsonSat.cpu?.machine ? `${pct(gatewayJsonSat.cpu.machine.busy)} busy, ${pct(gatewayJsonSat.cpu.machine.iowait)} iowait, ${pct(gatewayJsonSat.cpu.machine.steal)} steal` : 'n/a' },
    { metric: 'Simulator / load generator CPU per request, non-streaming', value: `${us(gatewayJsonSat.cpu?.simulatorUs)} / ${us(gatewayJsonSat.cpu?.benchUs)}` },
    { metric: `Meter aggregator lag behind the replies (page written → applied), p50 / p99 / max, at ${rate} req/s`, value: `${ms(pacedLag.p50)} / ${ms(pacedLag.p99)} / ${ms(pacedLag.max)} (${int(pacedLag.count)} pages)`, target: 'p99 ≤ 1 s', pass: pacedLag.count > 0 && pacedLag.p99 <= 1000 },
    { metric: 'Meter aggregator lag, p50 / p99 / max, at saturation (non-streaming throughput phase: both cores busy)', value: `${ms(aggregatorLag.p50)} / ${ms(aggregatorLag.p99)} / ${ms(aggregatorLag.max)} (${int(aggregatorLag.count)} pages)` },
    { metric: 'Gateway RSS after the streaming phase', value: `${((gatewaySseSat.cpu?.rss ?? 0) / 1024 / 1024).toFixed(0)} MiB` },
    { metric: 'Failed requests (any phase)', value: int(errors), target: '0', pass: errors === 0 },
  ];
  const whatIfTable = () => {
    const baseline = { label: 'as measured above', sat: gatewayJsonSat, paced: gatewayJsonPaced, sse: gatewaySsePaced, chunks: chunksGateway };
    const columns = [baseline, ...whatIfColumns];
    const chunkCell = (chunks: typeof chunksGateway) => {
      const d = distribution(chunks.raw.map((value) => value - chunkBaseline));
      return `${ms(d.p50)} / ${ms(d.p99)} / ${ms(d.max)} (${int(countLate(chunks.raw, chunkBaseline))} over ${TARGETS.chunkDelayMs} ms)`;
    };
    const line = (metric: string, cell: (column: typeof baseline) => string) => `| ${metric} | ${columns.map(cell).join(' | ')} |`;
    return [
      '### What-if (analysis only, not results): key cache held for the run; then also no accounting writes (holds, leases, pages)',
      '',
      `| Metric | ${columns.map((column) => column.label).join(' | ')} |`,
      `|---|${columns.map(() => '---').join('|')}|`,
      line('Non-streaming throughput, gateway', (c) => `${int(c.sat.rps)} req/s`),
      line('Gateway CPU per request (saturation)', (c) => cpuCell(c.sat.cpu, true)),
      line('DynamoDB Local CPU per request; machine busy / iowait', (c) => `${us(c.sat.cpu?.dynamodbUs)}; ${pct(c.sat.cpu?.machine?.busy)} / ${pct(c.sat.cpu?.machine?.iowait)}`),
      line('Latency at saturation p50 / p99', (c) => `${ms(c.sat.latency.p50)} / ${ms(c.sat.latency.p99)}`),
      line(`Added latency p50 / p99 at ${rate} req/s`, (c) => `${ms(c.paced.latency.p50 - directJsonPaced.latency.p50)} / ${ms(c.paced.latency.p99 - directJsonPaced.latency.p99)}`),
      line(`Added TTFB p50 / p99 at ${rate} req/s`, (c) => `${ms(c.sse.ttfb.p50 - directSsePaced.ttfb.p50)} / ${ms(c.sse.ttfb.p99 - directSsePaced.ttfb.p99)}`),
      line('Chunk forwarding extra delay p50 / p99 / max', (c) => chunkCell(c.chunks)),
      line('Gateway event-loop delay in the chunk phase p99 / max', (c) => (c.chunks.phase.cpu ? `${ms(c.chunks.phase.cpu.loopDelay.p99)} / ${ms(c.chunks.phase.cpu.loopDelay.max)}` : 'n/a')),
      '',
    ].join('\n');
  };
  const missed = rows.filter((row) => row.pass === false);
  const cpuModel = os.cpus()[0]?.model ?? 'unknown CPU';
  const machine = `${code}; ${os.cpus().length} cores, ${cpuModel}, ${(os.totalmem() / 1024 ** 3).toFixed(0)} GB RAM, Node ${process.version}, ${os.type()} ${os.release()}; load average ${loadBefore.map((v) => v.toFixed(2)).join(' ')} before, ${loadAfter.map((v) => v.toFixed(2)).join(' ')} after`;
  const notes = [
    `- ${CONNECTIONS} keep-alive connections from one load-generator process (node:http), loopback only; gateway = \`startLocalRuntime\` (DynamoDB Local on disk, a regular API key created through the management API; every request reserves its maximum cost from the process's budget lease in memory, or with an exact hold when no lease covers it, and its generation record goes into a page that the meter aggregator, fed from the table's stream, applies to the meters) in its own process, run as \`npm start\` runs it: bundled by esbuild first (bin/local/bundle.mjs), source maps on; simulator in its own process with no delays.`,
    `- Throughput: closed loop (a new request as soon as the previous one on the connection ends), ${D.warm} ms warm-up, then ${D.gatewaySat / 1000} s (gateway) / ${D.directSat / 1000} s (direct). Latency and TTFB: the same ${MESSAGE_CHARS}-character message paced at ${rate} req/s in total (a quarter of the gateway's throughput, at most ${PACED_RATE_MAX}), so the figures are per-request cost, not queueing; "added" = gateway percentile − direct percentile. Latency under saturation is shown for reference only (at ${CONNECTIONS} connections it is queueing: ≈ ${CONNECTIONS} / throughput).`,
    `- Chunk forwarding: an in-process, timestamping copy of the simulator's OpenAI chat stream (same parsing and frames, one chunk every ${CHUNK_DELAY_MS} ms); per content chunk, arrival at the client − moment the upstream wrote it; "extra delay" = that via the gateway − the direct median (${ms(chunkBaseline)}), i.e. what the gateway's hop adds.`,
    '- CPU: user + system time over the measured window ÷ requests. Gateway: the process (process.cpuUsage over IPC); the meter aggregator, which on AWS is a function of its own, is a process of its own (its process.cpuUsage over IPC); both figures are shown. V8\'s garbage-collection helpers and libuv\'s pool serve the whole process and count as the request path\'s. At saturation this is the cost of a request, at a paced load it also carries the idle-time work V8 does between requests. Event-loop utilization from performance.eventLoopUtilization. DynamoDB Local and the simulator are separate processes (from /proc), the load generator is this process.',
    `- Cold import: a fresh \`node\` per run with a minimal \`awslambda\` global, timing \`await import(bundle)\` inside the process; Node ${process.version} here, nodejs22.x on Lambda.`,
  ];
  const bundleTop = composition.slice(0, 12).map((entry) => `${entry.source} ${formatBytes(entry.bytes)}`).join(', ');
  const report = [
    `## Gateway benchmark — ${new Date().toISOString()}`,
    '',
    `Machine: ${machine}.`,
    '',
    table(rows),
    '',
    missed.length ? `**Missed targets (${missed.length}):** ${missed.map((row) => `${row.metric} = ${row.value} (target ${row.target})`).join('; ')}.` : '**All targets met.**',
    '',
    ...notes,
    '',
    `Bundle composition (bytes in output): ${bundleTop}.`,
    '',
    ...(WHAT_IF ? [whatIfTable()] : []),
    ...(PROFILE ? profiles : []),
    `_Bench took ${((performance.now() - benchStarted) / 1000).toFixed(0)} s${QUICK ? ' (--quick)' : ''}${PROFILE || WHAT_IF ? ' (--profile / --what-if phases ran after the measured ones)' : ''}._`,
    '',
  ].join('\n');
  console.log(`\n${report}`);
  writeFileSync(join(RESULTS_DIR, 'latest.md'), report);
  log(`written to ${relative(PROJECT_ROOT, join(RESULTS_DIR, 'latest.md'))}`);
  if (missed.length) {
    console.log(`\n✗ ${missed.length} target(s) missed:`);
    for (const row of missed) console.log(`  ✗ ${row.metric}: ${row.value} (target ${row.target})`);
  } else {
    console.log('\n✓ all targets met');
  }
  return 0;
}

cleanup.runMain(main, '\nbench failed');
