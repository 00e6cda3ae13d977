// What a guardrail's content filters cost: the guardrail middleware on a 4 KB prompt with one guardrail of
// 20 patterns (the 7 built-in detectors and 13 patterns of the caller's), and the detectors on a megabyte of
// hostile near-matches each (µs per KB). In process: the figures are the request path's added time.
//
//   npm run bench:guardrails [-- --quick]
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { guardrailMiddleware } from '../lambdas/inference/middleware/guardrails.js';
import { scan, type Guardrail, type GuardrailPolicy } from '../lambdas/guardrails/index.js';
import { BENCH_BUILTINS, BENCH_FILTERS, BENCH_PROMPT_4K } from './guardrail-patterns.js';
import type { GenerationCall } from '../lambdas/inference/middleware.js';
import { distribution } from './stats.js';

const QUICK = process.argv.includes('--quick');
const RUNS = QUICK ? 2_000 : 20_000;

const builtins = BENCH_BUILTINS;
const filters = BENCH_FILTERS;
const guardrail: Guardrail = {
  id: 'g1', org_id: 'o1', name: 'bench', description: null, workspace_id: null, allowed_models: null, ignored_models: null, allowed_providers: null, ignored_providers: null,
  include_byok_in_budgets: false, content_filters: filters, content_filter_builtins: builtins, created_at: '', updated_at: '',
};
const policy: GuardrailPolicy = { guardrails: new Map([['g1', guardrail]]), byKey: new Map([['k1', [guardrail]]]), byMember: new Map() };

const prompt = BENCH_PROMPT_4K;
const call = (): GenerationCall => ({
  type: 'generate',
  params: {
    request: { format: 'chat', models: ['m'], provider: undefined, routePartition: undefined, stream: false, serviceTier: null, sessionId: undefined, user: undefined, safetyIdentifier: undefined, metadata: undefined, plugins: [], echo: {}, params: { messages: [{ role: 'user', content: [{ type: 'text', text: prompt }] }] } },
    candidates: [],
  },
  caller: { orgId: 'o1', workspaceId: 'w1', keyHash: 'k1', key: {} as never },
  trace: { pipeline: [] } as never,
  deps: { guardrails: { policyFor: () => policy, invalidate: () => undefined } } as never,
});

const timings: number[] = [];
for (let i = 0; i < RUNS; i += 1) {
  const c = call();
  const start = performance.now();
  guardrailMiddleware.transformParams!(c);
  if (i >= RUNS / 10) timings.push(performance.now() - start);
}
const added = distribution(timings);

const hostile: Array<[string, string]> = [
  ['at-signs after local parts', 'a'.repeat(63) + '@'],
  ['digits that never pass Luhn', '4111 1111 1111 111 '],
  ['phone-like digits', '(555) 123-456 '],
  ['almost secrets', 'sk-short AKIA12 '],
  ['injection-like words', 'ignore all the previous '],
  ['the caller\'s (a+)+b on runs of a', 'a'.repeat(40) + ' '],
];
/** The median of 5 timed runs after 3 warm-up runs (the first runs of a scanner are not yet optimized by V8). */
const perKb = (text: string, run: () => unknown) => {
  for (let i = 0; i < 3; i += 1) run();
  const times: number[] = [];
  for (let i = 0; i < 5; i += 1) {
    const start = performance.now();
    run();
    times.push(performance.now() - start);
  }
  const ms = times.sort((a, b) => a - b)[2]!;
  return `${ms.toFixed(1)} ms (${((ms * 1000) / (text.length / 1024)).toFixed(1)} µs/KB)`;
};
const rows = hostile.map(([name, unit]) => {
  const text = unit.repeat(Math.ceil(1_000_000 / unit.length));
  return `| ${name} | ${(text.length / 1024).toFixed(0)} KB | ${perKb(text, () => scan(text, builtins, []))} | ${perKb(text, () => scan(text, [], filters))} |`;
});

const report = [
  `## Guardrail content filters — ${new Date().toISOString()}`,
  '',
  `One guardrail of 20 patterns (7 built-in detectors, 13 of the caller's) on a 4,096-character prompt, through the guardrail middleware (an email and a phone number redacted each time), ${RUNS} calls after ${RUNS / 10} of warm-up:`,
  `added time p50 ${(added.p50 * 1000).toFixed(0)} µs, p90 ${(added.p90 * 1000).toFixed(0)} µs, p99 ${(added.p99 * 1000).toFixed(0)} µs (target ≤ 200 µs)`,
  '',
  'The same 20 patterns on a megabyte of hostile near-matches each (median of 5 runs after 3 of warm-up):',
  '',
  '| Input | Size | The 7 built-ins | The 13 patterns of the caller\'s |',
  '|---|---|---|---|',
  ...rows,
].join('\n');
console.log(report);
mkdirSync(join(process.cwd(), 'bench', 'results'), { recursive: true });
writeFileSync(join(process.cwd(), 'bench', 'results', 'guardrails.md'), `${report}\n`);
