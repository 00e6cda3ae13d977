// The bench's gateway process (bench/gateway-process.ts: npm start's runtime with a benchmark key), forked
// and spoken to over IPC. `npm run bench` runs it as npm start does (bundled first, bin/local/bundle.mjs);
// `npm run bench:ab` runs it either way, to compare the two.
import { fork, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROJECT_ROOT } from '../bin/build.js';
import { bundleLocal } from '../bin/local/bundle.mjs';
import { keepOutput, startChild, stopChild, stopGatewayChild, waitForOutput, type Cleanup } from './children.js';
import type { FromGateway, ToGateway } from './gateway-process.js';

export type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;

export interface GatewayChild {
  url: string;
  key: string;
  /** A key with one guardrail of 20 patterns (bench/guardrail-patterns.ts). */
  guardedKey: string;
  child: ChildProcess;
  dynamodbPid: number | undefined;
  /** Sends a request over IPC; resolves with its answer (a `done` with an error once the process is gone). */
  call(message: WithoutId<ToGateway>): Promise<FromGateway>;
  /** Its last 200 chunks of output. */
  output(): string;
}

export interface GatewayChildOptions {
  /** Names it in errors and in the cleanup. */
  label: string;
  /** `bundle` (as npm start runs it; the default) or `tsx` (each module transformed as it loads). */
  variant?: 'bundle' | 'tsx';
  /**
   * Another checkout of the project (a git worktree of an earlier commit, with its node_modules) whose
   * gateway process runs instead of this one's, bundled by its own bin/local/bundle.mjs (bench:ab).
   */
  root?: string;
  /** On top of this process's environment (BENCH_DATA_DIR, BENCH_SIMULATOR_URL …). */
  env: NodeJS.ProcessEnv;
  cleanup: Cleanup;
  /** A command that runs node (its path follows these words), e.g. valgrind and its options (bench:instructions). */
  wrapper?: string[];
  /** How long it may take to say it is ready (ms; 120 s unless given). */
  startTimeoutMs?: number;
}

export async function forkGateway(options: GatewayChildOptions): Promise<GatewayChild> {
  const { label, cleanup } = options;
  const root = options.root ?? PROJECT_ROOT;
  const entry = join(root, 'bench', 'gateway-process.ts');
  const tsx = options.variant === 'tsx';
  // Another checkout bundles with its own bundler; one from before the bundle (run through tsx) has none.
  const bundle = async (path: string) => options.root === undefined ? bundleLocal(path) : ((await import(pathToFileURL(join(root, 'bin', 'local', 'bundle.mjs')).href)) as { bundleLocal: typeof bundleLocal }).bundleLocal(path);
  // npm start's 32 MB semi-spaces (a busy gateway scavenges less often), unless BENCH_GATEWAY_NODE_FLAGS (as
  // for bench:batch) gives the gateway's node flags instead, space-separated (e.g.
  // `--max-semi-space-size=32 --trace-gc-nvp`), or commas; `options.env` may set it for one gateway (bench:ab's
  // BENCH_AB_ENV_B). BENCH_GATEWAY_OUTPUT: a file that gets a copy of everything the gateway prints (V8's
  // traces go to stdout).
  const nodeFlags = (options.env.BENCH_GATEWAY_NODE_FLAGS ?? process.env.BENCH_GATEWAY_NODE_FLAGS)?.split(/[ ,]/).filter(Boolean) ?? ['--max-semi-space-size=32'];
  const execArgv = [...nodeFlags, ...(tsx ? ['--import', 'tsx'] : ['--enable-source-maps'])];
  const wrapper = options.wrapper ?? [];
  const child = fork(tsx ? entry : await bundle(entry), [], {
    cwd: root,
    ...(wrapper.length > 0 ? { execPath: wrapper[0]!, execArgv: [...wrapper.slice(1), process.execPath, ...execArgv] } : { execArgv }),
    env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const output = keepOutput(child);
  const copyTo = process.env.BENCH_GATEWAY_OUTPUT;
  if (copyTo) {
    const file = createWriteStream(copyTo, { flags: 'a' });
    child.stdout?.on('data', (chunk: Buffer) => file.write(chunk));
    child.stderr?.on('data', (chunk: Buffer) => file.write(chunk));
    child.once('exit', () => file.end());
  }

  cleanup.add(label, () => stopGatewayChild(child, { type: 'stop', id: 0 } satisfies ToGateway));

  let nextId = 1;
  const pending = new Map<number, (message: FromGateway) => void>();
  const started = await new Promise<Extract<FromGateway, { type: 'ready' }>>((resolve, reject) => {
    const startTimeoutMs = options.startTimeoutMs ?? 120_000;
    const timer = setTimeout(() => reject(new Error(`${label} did not start within ${startTimeoutMs / 1000} s:\n${output()}`)), startTimeoutMs);
    child.on('message', (message: FromGateway) => {
      if (message.type === 'ready') {
        clearTimeout(timer);
        resolve(message);
      } else if (message.type === 'failed') {
        clearTimeout(timer);
        reject(new Error(`${label} failed to start: ${message.error}\n${output()}`));
      } else {
        pending.get(message.id)?.(message);
        pending.delete(message.id);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited (${code ?? signal}) during start-up:\n${output()}`));
    });
  });
  cleanup.killOnExit(started.dynamodbPid);
  child.on('exit', (code, signal) => {
    for (const resolve of pending.values()) resolve({ type: 'done', id: -1, error: `${label} exited (${code ?? signal})` });
    pending.clear();
  });
  return {
    url: started.url,
    key: started.key,
    guardedKey: started.guardedKey,
    dynamodbPid: started.dynamodbPid,
    child,
    output,
    call(message) {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        if (!child.connected) {
          reject(new Error(`${label} is not running:\n${output()}`));
          return;
        }
        pending.set(id, resolve);
        child.send({ ...message, id } as ToGateway);
      });
    },
  };
}

/**
 * The upstream simulator with no delays (or `chunkDelayMs` between a stream's chunks), as a process of its
 * own (stopped by `cleanup`): its URL and pid.
 */
export async function startZeroLatencySimulator(cleanup: Cleanup, chunkDelayMs = 0): Promise<{ url: string; pid: number | undefined }> {
  const simulator = startChild('simulator', process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, 'bin', 'simulator.ts')], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, SIMULATOR_PORT: '0', SIMULATOR_CHUNK_DELAY_MS: String(chunkDelayMs), SIMULATOR_FIRST_BYTE_DELAY_MS: '0' },
  });
  cleanup.add('simulator', () => stopChild(simulator.process));
  const url = (await waitForOutput(simulator, /listening on (http:\/\/127\.0\.0\.1:\d+)/, 30_000))[1]!;
  return { url, pid: simulator.process.pid };
}
