// The local gateway process runs from an esbuild bundle of its entry (the Lambda functions run from bundles
// too, theirs minified and with the packages inside), not through tsx's per-module transform: tsx compiles
// with esbuild's keepNames, which wraps every function and class the code creates in a call that redefines
// its `name` (a closure made per request pays it each time), and keeps every module boundary. Our own code
// goes into one ES module; packages stay in node_modules and load as they would under tsx. Plain
// JavaScript, so that it runs before any TypeScript loader: `npm start` (bin/start.mjs) and the bench's
// gateway process use it.
//
// The bundle is written beside this file (bin/local/.<entry>.mjs and its source map, git-ignored), so the
// paths local modules resolve relative to themselves (child processes' entry files) still land in
// bin/local. Concurrent builds (test workers starting gateways at once) each write a file of their own and
// rename it into place: a process never imports a half-written bundle.
import { renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// esbuild's synchronous API otherwise runs a worker thread that keeps an `esbuild --service` child process
// (about 60 MB) alive for the life of the process that built: the gateway's. Without worker threads each
// build is one short-lived esbuild process. The setting is read when esbuild loads, and put back after.
const workerThreads = process.env.ESBUILD_WORKER_THREADS;
process.env.ESBUILD_WORKER_THREADS = '0';
const { buildSync } = await import('esbuild');
if (workerThreads === undefined) delete process.env.ESBUILD_WORKER_THREADS;
else process.env.ESBUILD_WORKER_THREADS = workerThreads;

const HERE = dirname(fileURLToPath(import.meta.url));

/** Where the bundle of `entry` goes. */
export function localBundlePath(entry) {
  return join(HERE, `.${basename(entry).replace(/\.ts$/, '')}.mjs`);
}

/**
 * Bundles `entry` (a path to a TypeScript file) and returns the bundle's path. Run it with
 * `--enable-source-maps`, so stack traces name the TypeScript files and lines (as tsx's did).
 */
export function bundleLocal(entry) {
  const outfile = localBundlePath(entry);
  const result = buildSync({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: `node${process.versions.node.split('.')[0]}`,
    packages: 'external',
    sourcemap: true,
    // Stack traces need the mappings, not the sources (as the Lambda bundles): a third of the map's bytes.
    sourcesContent: false,
    outfile,
    write: false,
    logLevel: 'warning',
  });
  const unique = `.${process.pid}.${Date.now()}.tmp`;
  // The map first: the bundle that names it is renamed into place last.
  const isMap = (file) => file.path.endsWith('.map');
  for (const file of [...result.outputFiles.filter(isMap), ...result.outputFiles.filter((file) => !isMap(file))]) {
    writeFileSync(file.path + unique, file.contents);
    renameSync(file.path + unique, file.path);
  }
  return outfile;
}
