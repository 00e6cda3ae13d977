// `npm run bench:survivors`: which allocations the gateway under load promotes to the old generation. A
// scavenge's pause grows with the bytes it copies, and a streamed chunk that arrives during one waits for it;
// what it promotes is also what later full collections must free. This runs the bench's gateway process
// (bundled, as npm start runs it) in front of the simulator, puts closed-loop load on it (10 connections;
// BENCH_SURVIVORS_STREAM=1 for streamed replies) and takes a sampling heap profile that leaves out whatever
// a scavenge frees: what remains was never freed by one, so it was promoted (and is still alive, or was freed
// by a full collection), or is alive in the young generation at the end. Objects that survive one scavenge and
// die before the next are copied once but not counted. It prints the sampled bytes per request by allocating
// function and by allocation stack. Sampling counts bytes, not time, so a slow machine reads the same.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../bin/build.js';
import { Cleanup } from './children.js';
import { forkGateway, startZeroLatencySimulator } from './gateway-child.js';
import { runLoad, type RequestSpec } from './load.js';
import { frameWhere, toSource, type CallFrame } from './profile.js';

const durationMs = Number(process.env.BENCH_SURVIVORS_MS ?? 6000);
const stream = process.env.BENCH_SURVIVORS_STREAM === '1';
/** BENCH_SURVIVORS_ALL=1: every allocation sampled, those a scavenge frees included (what makes scavenges frequent). */
const all = process.env.BENCH_SURVIVORS_ALL === '1';
/**
 * BENCH_SURVIVORS_CHUNK_MS: the simulator waits this long between a stream's chunks (with
 * BENCH_SURVIVORS_STREAM=1), as in the bench's chunk phase: requests stay in flight, and what they hold
 * is what a scavenge then copies.
 */
const chunkDelayMs = Number(process.env.BENCH_SURVIVORS_CHUNK_MS ?? 0);
const cleanup = new Cleanup();
const log = (line: string) => console.error(`[survivors] ${line}`);

interface SamplingNode {
  callFrame: CallFrame;
  selfSize: number;
  id: number;
  children: SamplingNode[];
}

async function main(): Promise<void> {
  const tmp = mkdtempSync(join(os.tmpdir(), 'gateway-survivors-'));
  cleanup.addFinal('temp dir', () => rmSync(tmp, { recursive: true, force: true }));
  const simulatorUrl = (await startZeroLatencySimulator(cleanup, chunkDelayMs)).url;
  const gateway = await forkGateway({ label: 'gateway', env: { BENCH_DATA_DIR: join(tmp, 'data'), BENCH_SIMULATOR_URL: simulatorUrl }, cleanup });
  const body = Buffer.from(JSON.stringify({ model: 'simulator/echo', stream, messages: [{ role: 'user', content: 'The quick brown fox jumps over the lazy dog. '.repeat(5) }] }));
  const spec: RequestSpec = {
    url: new URL('/api/v1/chat/completions', gateway.url),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${gateway.key}` },
    body,
  };
  const load = async (ms: number, around?: { before: () => Promise<void>; after: () => Promise<void> }) => {
    const result = await runLoad({
      connections: 10, warmupMs: 500, durationMs: ms, maxRequests: 10_000_000, request: () => spec,
      ...(around ? { beforeMeasure: around.before, afterMeasure: around.after } : {}),
    });
    if (result.errors) throw new Error(`${result.errors} failed requests (${result.errorSamples.join('; ')})`);
    return result;
  };
  const call = async (message: Parameters<typeof gateway.call>[0]) => {
    const answer = await gateway.call(message);
    if (answer.type === 'done' && answer.error) throw new Error(answer.error);
  };
  // What-if (BENCH_SURVIVORS_STUB=1): no reservation or page reaches DynamoDB, so a record waits for nothing.
  if (process.env.BENCH_SURVIVORS_STUB === '1') await call({ type: 'stub-ledger', on: true });
  log('warming up');
  await load(6000);
  const file = join(tmp, 'survivors.heapprofile');
  let gc: { count: number; totalMs: number; maxMs: number } | undefined;
  const result = await load(durationMs, {
    before: async () => {
      await gateway.call({ type: 'cpu' });
      await call({ type: 'heap-sample-start', intervalBytes: 4096, all });
    },
    after: async () => {
      const cpu = await gateway.call({ type: 'cpu' });
      if (cpu.type === 'cpu') gc = cpu.gc;
      await call({ type: 'heap-sample-stop', file });
    },
  });
  const requests = result.count;
  const { head } = JSON.parse(readFileSync(file, 'utf8')) as { head: SamplingNode };
  const name = (node: SamplingNode) => `${node.callFrame.functionName || '(anonymous)'} ${frameWhere(toSource(node.callFrame))}`;
  const bySelf = new Map<string, number>();
  const byStack = new Map<string, number>();
  let total = 0;
  const walk = (node: SamplingNode, stack: string[]) => {
    const here = name(node);
    const path = [...stack, here];
    if (node.selfSize > 0) {
      total += node.selfSize;
      bySelf.set(here, (bySelf.get(here) ?? 0) + node.selfSize);
      const key = path.slice(-6).reverse().join(' ← ');
      byStack.set(key, (byStack.get(key) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child, path);
  };
  walk(head, []);
  const perRequest = (bytes: number) => (bytes / requests).toFixed(0);
  console.log(`${requests} ${stream ? 'streamed' : 'non-streamed'} requests in ${durationMs} ms; sampled ${all ? 'allocations' : 'survivors'} ${(total / 2 ** 20).toFixed(1)} MiB, ${perRequest(total)} B per request`);
  if (gc) console.log(`garbage collections in the window: ${gc.count} (one per ${(requests / Math.max(1, gc.count)).toFixed(0)} requests), ${gc.totalMs.toFixed(1)} ms in all, longest ${gc.maxMs.toFixed(2)} ms`);
  console.log('\nBy allocating function (B per request):');
  for (const [key, bytes] of [...bySelf].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.BENCH_SURVIVORS_TOP ?? 30))) console.log(`${perRequest(bytes).padStart(7)}  ${key}`);
  console.log('\nBy allocation stack (innermost first, B per request):');
  for (const [key, bytes] of [...byStack].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.BENCH_SURVIVORS_TOP ?? 25))) console.log(`${perRequest(bytes).padStart(7)}  ${key}`);
}

cleanup.runMain(main);
