// Cold import time of a bundle: a fresh `node` per run that installs the minimal `awslambda` global the
// Lambda runtime provides and times `await import(bundle)` from inside the process.
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';

const SCRIPT = `
globalThis.awslambda = {
  streamifyResponse: (handler) => handler,
  HttpResponseStream: { from: (stream) => stream },
};
const started = performance.now();
const module = await import(process.env.BENCH_BUNDLE_URL);
const importMs = performance.now() - started;
if (typeof module.handler !== 'function') throw new Error('the bundle exports no handler function');
process.stdout.write(JSON.stringify({ importMs, sinceStartMs: performance.now() }) + '\\n');
`;

export interface ImportRun {
  importMs: number;
  /** From process start (performance.timeOrigin) to the end of the import. */
  sinceStartMs: number;
}

/** The environment a deployed function's module init sees, without any AWS credentials. */
function lambdaLikeEnv(bundleFile: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME ?? tmpdir(),
    TZ: ':UTC',
    LANG: 'en_US.UTF-8',
    AWS_REGION: 'us-east-1',
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_LAMBDA_FUNCTION_NAME: 'gateway-inference',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '1024',
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
    TABLE_NAME: 'gateway',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    BENCH_BUNDLE_URL: pathToFileURL(bundleFile).href,
  };
}

export function coldImportOnce(bundleFile: string, nodeArgs: readonly string[] = []): Promise<ImportRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, '--input-type=module', '-e', SCRIPT], {
      env: lambdaLikeEnv(bundleFile),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { err += chunk.toString(); });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      const line = out.trim().split('\n').pop() ?? '';
      try {
        if (code !== 0) throw new Error(`exit ${code}`);
        resolve(JSON.parse(line) as ImportRun);
      } catch (e) {
        reject(new Error(`cold import of ${bundleFile} failed (${String(e)}):\n${err || out}`));
      }
    });
  });
}

/** `runs` cold imports for each flag set, interleaved so that machine noise hits both alike. */
export async function coldImports(bundleFile: string, runs: number, variants: Record<string, readonly string[]>): Promise<Record<string, ImportRun[]>> {
  const results: Record<string, ImportRun[]> = {};
  for (const name of Object.keys(variants)) results[name] = [];
  // One unmeasured run first: the bundle file into the page cache, as on a warm Lambda host.
  await coldImportOnce(bundleFile);
  for (let i = 0; i < runs; i++) {
    for (const [name, args] of Object.entries(variants)) results[name]!.push(await coldImportOnce(bundleFile, args));
  }
  return results;
}
