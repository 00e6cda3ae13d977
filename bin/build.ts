// `npm run build`: bundles the Lambda handlers exactly as `cdk deploy` does (bin/bundle-options.ts) into
// dist/<name>/index.mjs and prints their sizes. The bench reuses buildBundles() to measure the same bytes.
import { statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { BUNDLE_FILE, lambdaEsbuildOptions } from './bundle-options.js';

export const PROJECT_ROOT = fileURLToPath(new URL('../', import.meta.url));

/** The Lambda entry points, by bundle name (the CDK stack deploys one function per entry). */
export const LAMBDA_ENTRIES = {
  inference: 'lambdas/handlers/inference.ts',
  management: 'lambdas/handlers/management.ts',
  maintenance: 'lambdas/handlers/maintenance.ts',
  aggregator: 'lambdas/handlers/aggregator.ts',
} as const;

export type BundleName = keyof typeof LAMBDA_ENTRIES;

export interface BuiltBundle {
  name: BundleName;
  entry: string;
  /** Absolute path of dist/<name>/index.mjs. */
  file: string;
  bytes: number;
  /** The external source map beside it (not loaded at run time unless --enable-source-maps). */
  mapBytes: number;
  buildMs: number;
  /** esbuild's metafile, when asked for (it does not change the output). */
  metafile?: Metafile;
}

export async function buildBundle(name: BundleName, options: { outDir?: string; metafile?: boolean } = {}): Promise<BuiltBundle> {
  const entry = join(PROJECT_ROOT, LAMBDA_ENTRIES[name]);
  const file = join(options.outDir ?? join(PROJECT_ROOT, 'dist'), name, BUNDLE_FILE);
  const started = performance.now();
  const result = await build({ ...lambdaEsbuildOptions(entry, file), absWorkingDir: PROJECT_ROOT, metafile: options.metafile ?? false });
  const buildMs = performance.now() - started;
  let mapBytes = 0;
  try {
    mapBytes = statSync(`${file}.map`).size;
  } catch {
    // no source map
  }
  return { name, entry: LAMBDA_ENTRIES[name], file, bytes: statSync(file).size, mapBytes, buildMs, ...(result.metafile ? { metafile: result.metafile } : {}) };
}

export async function buildBundles(names: readonly BundleName[] = Object.keys(LAMBDA_ENTRIES) as BundleName[]): Promise<BuiltBundle[]> {
  const built: BuiltBundle[] = [];
  for (const name of names) built.push(await buildBundle(name));
  return built;
}

export function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(2)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`;
}

/** Bytes each npm package (or our own top-level directory) contributes to a bundle's output. */
export function bundleComposition(bundle: BuiltBundle): Array<{ source: string; bytes: number }> {
  const output = bundle.metafile && Object.entries(bundle.metafile.outputs).find(([path]) => path.endsWith(BUNDLE_FILE))?.[1];
  if (!output) return [];
  const totals = new Map<string, number>();
  for (const [path, { bytesInOutput }] of Object.entries(output.inputs)) {
    const pkg = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1];
    const source = pkg ?? path.split('/').slice(0, 2).join('/');
    totals.set(source, (totals.get(source) ?? 0) + bytesInOutput);
  }
  return [...totals.entries()].map(([source, bytes]) => ({ source, bytes })).sort((a, b) => b.bytes - a.bytes);
}

async function main(): Promise<void> {
  const built = await buildBundles();
  for (const bundle of built) {
    console.log(`${bundle.name.padEnd(11)} ${relative(PROJECT_ROOT, bundle.file).padEnd(28)} ${String(bundle.bytes).padStart(9)} bytes (${formatBytes(bundle.bytes)}), source map ${formatBytes(bundle.mapBytes)}, built in ${Math.round(bundle.buildMs)} ms`);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
