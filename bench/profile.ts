// Summarizes a V8 .cpuprofile (from the gateway process during a measured phase): self and inclusive
// time per function, and self time per area (our modules, each npm package, Node internals, GC).
// Also runnable on its own: `npx tsx bench/profile.ts file.cpuprofile [top]`.
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface Row {
  name: string;
  where: string;
  ms: number;
  share: number;
}

export interface ProfileSummary {
  totalMs: number;
  idleMs: number;
  busyMs: number;
  selfTop: Row[];
  inclusiveTop: Row[];
  areas: Row[];
}

const PROJECT = fileURLToPath(new URL('../', import.meta.url));

function shortUrl(url: string): string {
  let path = url.startsWith('file://') ? fileURLToPath(url) : url;
  if (path.startsWith(PROJECT)) path = path.slice(PROJECT.length);
  return path.replace(/^node_modules\//, '');
}

/** Source maps read so far, by bundle URL (summarize and longTasks map the same profile; each reads once). */
const maps = new Map<string, { map: SourceMap; dir: string } | undefined>();

/**
 * The profile with every frame of an ES module that has a source map beside it (npm start's gateway runs from
 * bin/local/.start.mjs, the bench's from bin/local/.gateway-process.mjs) moved to its TypeScript source, so
 * areas and functions are named by the files they were written in. Frames of other files stay as they are. A
 * frame of code esbuild added (its helpers) is put on the mapped line before it.
 */
export function withSources(profile: CpuProfile): CpuProfile {
  const nodes = profile.nodes.map((node) => {
    const callFrame = toSource(node.callFrame);
    return callFrame === node.callFrame ? node : { ...node, callFrame };
  });
  return { ...profile, nodes };
}

/** One frame moved to its TypeScript source (see withSources); the frame itself when it has no source map. */
export function toSource(frame: CallFrame): CallFrame {
  const mapOf = (url: string) => {
    if (!maps.has(url)) {
      const file = url.startsWith('file://') ? fileURLToPath(url) : '';
      maps.set(url, file.endsWith('.mjs') && existsSync(`${file}.map`)
        ? { map: new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')) as ConstructorParameters<typeof SourceMap>[0]), dir: dirname(file) }
        : undefined);
    }
    return maps.get(url);
  };
  const found = frame.url ? mapOf(frame.url) : undefined;
  if (!found) return frame;
  const entry = found.map.findEntry(frame.lineNumber, frame.columnNumber) as { originalSource?: string; originalLine?: number; originalColumn?: number };
  if (!entry.originalSource) return frame;
  const source = entry.originalSource.startsWith('file://') ? entry.originalSource : pathToFileURL(resolve(found.dir, entry.originalSource)).href;
  return { ...frame, url: source, lineNumber: entry.originalLine ?? 0, columnNumber: entry.originalColumn ?? 0 };
}

/** Where a frame is, as the summaries print it: a path under the project (packages without node_modules/), and its line. */
export function frameWhere(frame: CallFrame): string {
  return frame.url ? `${shortUrl(frame.url)}:${frame.lineNumber + 1}` : ':0';
}

/** The area a frame belongs to: a package, one of our directories, a Node subsystem, or a VM state. */
export function areaOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (!url) {
    if (functionName.startsWith('(')) return functionName; // (garbage collector), (program), (idle), (root)
    return '(native / builtins)';
  }
  if (url.startsWith('node:internal/deps/undici')) return 'undici (Node fetch)';
  if (url.startsWith('node:internal/deps/')) return url.slice('node:internal/deps/'.length).split('/')[0]!;
  if (url.startsWith('node:')) {
    const rest = url.slice(5).replace(/^internal\//, '');
    const top = rest.split('/')[0]!;
    return `node:${top}`;
  }
  const path = shortUrl(url);
  const pkg = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url.startsWith('file://') ? fileURLToPath(url) : url);
  if (pkg) return pkg[1]!;
  const parts = path.split('/');
  if (parts[0] === 'lambdas' || parts[0] === 'bin') return parts.slice(0, 2).join('/');
  return parts[0] ?? path;
}

function keyOf(frame: CallFrame): string {
  return `${frame.functionName || '(anonymous)'}\u0000${shortUrl(frame.url)}:${frame.lineNumber + 1}`;
}

export function summarize(bundled: CpuProfile, top = 25): ProfileSummary {
  const profile = withSources(bundled);
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) byId.set(node.id, node);
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

  const selfUs = new Map<number, number>();
  let totalUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    const id = profile.samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
    totalUs += delta;
  }
  let idleUs = 0;
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const areas = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    if (node.callFrame.functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    const key = keyOf(node.callFrame);
    self.set(key, (self.get(key) ?? 0) + us);
    const area = areaOf(node.callFrame);
    areas.set(area, (areas.get(area) ?? 0) + us);
    // Inclusive: every distinct function on the stack gets the sample once (recursion counted once).
    const seen = new Set<string>();
    for (let current: number | undefined = id; current !== undefined; current = parent.get(current)) {
      const frame = byId.get(current)!.callFrame;
      if (frame.functionName === '(root)') break;
      const k = keyOf(frame);
      if (seen.has(k)) continue;
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + us);
    }
  }
  const busyUs = totalUs - idleUs;
  const rows = (map: Map<string, number>, limit: number, split: boolean): Row[] => [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([key, us]) => {
      const [name, where] = split ? key.split('\u0000') as [string, string] : [key, ''];
      return { name, where, ms: us / 1000, share: busyUs > 0 ? us / busyUs : 0 };
    });
  return {
    totalMs: totalUs / 1000,
    idleMs: idleUs / 1000,
    busyMs: busyUs / 1000,
    selfTop: rows(self, top, true),
    inclusiveTop: rows(inclusive, top, true),
    areas: rows(areas, top, false),
  };
}

/** A stretch of consecutive busy samples: the event loop could not run anything else meanwhile. */
export interface LongTask {
  /** Start, in the profile's clock (µs, the machine's monotonic clock), and length (ms). */
  startUs: number;
  ms: number;
  /** The functions with the most self time in it, and the outermost of ours on its stacks. */
  top: string[];
}

/**
 * The busy stretches of a profile longer than `minMs`: runs of samples that are not "(idle)". A sample
 * covers the time up to the next one, so a stretch ends at its last busy sample's successor.
 */
export function longTasks(bundled: CpuProfile, minMs = 1): LongTask[] {
  const profile = withSources(bundled);
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) byId.set(node.id, node);
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const tasks: LongTask[] = [];
  let at = profile.startTime;
  let start = -1;
  let selfUs = new Map<string, number>();
  const finish = (end: number) => {
    if (start >= 0 && end - start >= minMs * 1000) {
      const top = [...selfUs.entries()].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([key, us]) => `${key.replace('\u0000', ' ')} ${(us / 1000).toFixed(1)}`);
      tasks.push({ startUs: start, ms: (end - start) / 1000, top });
    }
    start = -1;
    selfUs = new Map();
  };
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i] ?? 0;
    const node = byId.get(profile.samples[i]!)!;
    const delta = profile.timeDeltas[i + 1] ?? 0;
    if (node.callFrame.functionName === '(idle)') {
      finish(at);
      continue;
    }
    if (start < 0) start = at;
    // Self time by function, plus the outermost frame of ours (lambdas/, bin/) as the task's "entry".
    const key = keyOf(node.callFrame);
    selfUs.set(key, (selfUs.get(key) ?? 0) + delta);
    let outer: string | undefined;
    for (let current: number | undefined = node.id; current !== undefined; current = parent.get(current)) {
      const frame = byId.get(current)!.callFrame;
      const area = areaOf(frame);
      if (area.startsWith('lambdas/') || area.startsWith('bin/')) outer = `in ${keyOf(frame)}`;
    }
    if (outer) selfUs.set(outer, (selfUs.get(outer) ?? 0) + delta);
  }
  finish(at);
  return tasks;
}

export function formatSummary(title: string, summary: ProfileSummary, requests?: number): string {
  const pct = (share: number) => `${(share * 100).toFixed(1)}%`;
  const perReq = (value: number) => (requests ? ` | ${((value * 1000) / requests).toFixed(1)}` : '');
  const head = requests ? ' | µs/req' : '';
  const sep = requests ? '|---:' : '';
  const lines = [
    `### ${title}`,
    '',
    `Sampled ${summary.totalMs.toFixed(0)} ms, busy ${summary.busyMs.toFixed(0)} ms (${pct(summary.busyMs / Math.max(1, summary.totalMs))})${requests ? `, ${requests.toLocaleString('en-US')} requests` : ''}. Shares are of busy time.`,
    '',
    '**Self time by area**',
    '',
    `| area | self ms | share${head} |`,
    `|---|---:|---:${sep}|`,
    ...summary.areas.map((row) => `| ${row.name} | ${row.ms.toFixed(0)} | ${pct(row.share)}${perReq(row.ms)} |`),
    '',
    '**Top functions by self time**',
    '',
    `| function | where | self ms | share${head} |`,
    `|---|---|---:|---:${sep}|`,
    ...summary.selfTop.map((row) => `| \`${row.name}\` | ${row.where} | ${row.ms.toFixed(0)} | ${pct(row.share)}${perReq(row.ms)} |`),
    '',
    '**Top functions by inclusive time**',
    '',
    `| function | where | total ms | share${head} |`,
    `|---|---|---:|---:${sep}|`,
    ...summary.inclusiveTop.map((row) => `| \`${row.name}\` | ${row.where} | ${row.ms.toFixed(0)} | ${pct(row.share)}${perReq(row.ms)} |`),
    '',
  ];
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: npx tsx bench/profile.ts <file.cpuprofile> [top]');
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  console.log(formatSummary(file, summarize(profile, Number(process.argv[3] ?? 30))));
}
