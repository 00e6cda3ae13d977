// npm start's meter aggregator in a process of its own (aggregator-worker.ts): the stream feeder and the
// aggregator's handler get their own event loop and heap, as on AWS they are their own function. In the
// request thread they cost about 90 µs of CPU per request at saturation, and their batches (reading the
// stream, decoding pages, building transactions) and their garbage delayed the replies queued behind them;
// as a worker thread, its heap was the gateway process's memory too. A process that dies is started again
// (its stream checkpoints are on disk, a page applied twice is refused by its marker), unless it keeps dying;
// meanwhile pages wait in the stream and requests are served as before.
import { fork, type ChildProcess } from 'node:child_process';
import { localModule, lowerPriority } from './child.js';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { PartHealth } from '../../lambdas/app/system-operations.js';

export interface AggregatorWorkerData {
  endpoint: string;
  tableName: string;
  pollMs: number;
  checkpointFile: string;
  deadLetterFile: string;
}

/** A process's CPU time so far, µs. */
export interface ThreadCpu {
  user: number;
  system: number;
}

export type ToAggregator =
  | { type: 'drain'; id: number; timeoutMs: number }
  | { type: 'cpu'; id: number }
  | { type: 'stop' };

export type FromAggregator =
  | { type: 'ready' }
  | { type: 'failed'; error: string }
  | { type: 'log'; line: string }
  | { type: 'applied'; lagsMs: number[] }
  | { type: 'drained'; id: number; drained: boolean }
  | { type: 'cpu'; id: number; cpu: ThreadCpu | undefined }
  | { type: 'stopped' };

export interface AggregatorProcessOptions extends AggregatorWorkerData {
  /** Where the process's log lines (and its stdout and stderr) go (the runtime's log sink). */
  log: (line: string) => void;
  /** How often the process is started again when it dies within RESTART_WINDOW_MS before it is left down (default 3). */
  restarts?: number;
  /** The module the process runs (a file URL; default aggregator-worker.ts): tests run stand-ins that misbehave. */
  module?: string;
}

export interface AggregatorProcess {
  /** Resolves true once every page written before the call has been applied (or dead-lettered); false after `timeoutMs`. */
  drain(options: { timeoutMs: number }): Promise<boolean>;
  /** Stops reading the stream; a batch being applied gets the feeder's 5 s to finish. */
  stop(): Promise<void>;
  /** The lags (page written → applied, ms) of the pages applied since the last call, oldest first. */
  takeLags(): number[];
  /** The process's CPU time so far (undefined while it is down). */
  cpu(): Promise<ThreadCpu | undefined>;
  health(): PartHealth;
}

/** How long the process may take to load the handlers (through tsx) and start. */
const START_TIMEOUT_MS = 120_000;
/** After a stop request, how long the feeder gets (its own limit is 5 s) before the process is killed. */
const STOP_TIMEOUT_MS = 7000;
const RESTART_WINDOW_MS = 60_000;
const DEFAULT_RESTARTS = 3;
/** Once the process has died too often, how long until it is started again. */
const RETRY_DOWN_MS = 60_000;
/** Lags kept for takeLags() between two calls (the newest). */
const MAX_LAGS = 100_000;

/** The module the process runs by default. */
function defaultModule(): string {
  return pathToFileURL(localModule('./aggregator-worker.ts')).href;
}

export async function startAggregatorProcess(options: AggregatorProcessOptions): Promise<AggregatorProcess> {
  const { log, restarts = DEFAULT_RESTARTS, module: moduleOverride, ...data } = options;
  const module = moduleOverride ?? defaultModule();
  let lags: number[] = [];
  let nextId = 1;
  const pending = new Map<number, (value: boolean | ThreadCpu | undefined) => void>();
  let status: PartHealth['status'] = 'ok';
  let stopping = false;
  const deaths: number[] = [];

  /** A process being started (not ready yet): stop() kills it. */
  let starting: ChildProcess | undefined;
  /** The wait before the next start once the process has died too often: stop() cancels it. */
  let retryTimer: NodeJS.Timeout | undefined;

  const spawn = () => new Promise<ChildProcess>((resolve, reject) => {
    // Not the host's flags (Jest's, the bench's): tsx for the TypeScript module. The environment the runtime
    // set up (TABLE_NAME, DYNAMODB_ENDPOINT …) as this module sees it, which under Jest is not the process's own.
    const worker = fork(fileURLToPath(module), [], {
      // A heap limit below V8's default makes it grow the heap by a smaller factor (see BATCH_RUNNER_NODE_FLAGS).
      execArgv: ['--import', 'tsx', '--max-old-space-size=1024'],
      env: { ...process.env, AGGREGATOR_WORKER_DATA: JSON.stringify(data) },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    // Behind the request path for the CPU (see BACKGROUND_NICENESS): its lag has room (p99 under 0.3 s of 1 s).
    if (worker.pid) lowerPriority(worker.pid);
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
      const lines = output.split('\n');
      output = lines.pop()!;
      for (const line of lines) {
        if (line.trim() === '') continue;
        lastError = `${lastError}\n${line}`.slice(-2000).trim();
        log(line);
      }
    };
    worker.stdout!.on('data', collect);
    worker.stderr!.on('data', collect);
    starting = worker;
    let ready = false;
    // A start given up on (timed out, failed, or stopped meanwhile): a late `ready` or exit changes nothing.
    let abandoned = false;
    let lastError = '';
    const giveUp = (error: Error) => {
      if (abandoned || ready) return;
      abandoned = true;
      clearTimeout(timer);
      if (starting === worker) starting = undefined;
      reject(error);
      worker.kill('SIGKILL');
    };
    const timer = setTimeout(() => giveUp(new Error(`the meter aggregator process did not start within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
    worker.on('message', (message: FromAggregator) => {
      switch (message.type) {
        case 'ready':
          if (abandoned) return;
          ready = true;
          clearTimeout(timer);
          if (starting === worker) starting = undefined;
          resolve(worker);
          return;
        case 'failed':
          giveUp(new Error(`the meter aggregator process failed to start: ${message.error}`));
          return;
        case 'log':
          log(message.line);
          return;
        case 'applied':
          lags.push(...message.lagsMs);
          if (lags.length > MAX_LAGS) lags = lags.slice(-MAX_LAGS);
          return;
        case 'drained':
          settle(message.id, message.drained);
          return;
        case 'cpu':
          settle(message.id, message.cpu);
          return;
        case 'stopped':
          return;
      }
    });
    worker.on('error', (error) => {
      lastError = error.stack ?? error.message;
      log(`the meter aggregator process failed: ${lastError}`);
    });
    worker.once('exit', (exitCode, signal) => {
      clearTimeout(timer);
      const code = exitCode ?? (signal ? `signal ${signal}` : undefined);
      // Whatever it was asked and did not answer: not drained, no CPU figure.
      for (const id of [...pending.keys()]) settle(id, undefined);
      if (!ready) {
        giveUp(new Error(`the meter aggregator process exited (code ${code}) during start-up${lastError ? `: ${lastError}` : ''}`));
        return;
      }
      if (worker === current) current = undefined;
      if (!stopping && !abandoned) void restart(code);
    });
  });

  let current: ChildProcess | undefined;
  /**
   * A process that died is started again at once, up to `restarts` times a minute; beyond that, and after a
   * start that failed, once a minute for as long as the process runs: pages wait in the stream (a day on
   * DynamoDB Local, as on AWS), so the aggregator must come back, and /health says it is down meanwhile.
   */
  const restart = async (code: number | string | undefined) => {
    if (stopping) return;
    const now = Date.now();
    deaths.push(now);
    while (deaths.length > 0 && deaths[0]! < now - RESTART_WINDOW_MS) deaths.shift();
    if (deaths.length > restarts) {
      status = 'down';
      log(`the meter aggregator process died ${deaths.length} times in ${RESTART_WINDOW_MS / 1000} s${code === undefined ? '' : ` (last exit code ${code})`}; starting it again in ${RETRY_DOWN_MS / 1000} s. Pages wait in the stream meanwhile.`);
      retryTimer = setTimeout(() => {
        retryTimer = undefined;
        deaths.length = 0;
        void restart(undefined);
      }, RETRY_DOWN_MS);
      retryTimer.unref();
      return;
    }
    status = 'restarting';
    log(code === undefined ? 'starting the meter aggregator process again' : `the meter aggregator process exited (code ${code}); starting it again`);
    try {
      const next = await spawn();
      if (stopping) {
        await kill(next);
        return;
      }
      current = next;
      status = 'ok';
    } catch (error) {
      if (stopping) return;
      log(String(error instanceof Error ? error.message : error));
      // A failed start counts as a death: the next try waits once the budget is spent.
      void restart(undefined);
    }
  };

  current = await spawn();

  function settle(id: number, value: boolean | ThreadCpu | undefined): void {
    const resolve = pending.get(id);
    pending.delete(id);
    resolve?.(value);
  }

  /** Asks the process; `fallback` if it is down, or after `timeoutMs`. */
  function ask<T extends boolean | ThreadCpu | undefined>(message: (id: number) => ToAggregator, timeoutMs: number, fallback: T): Promise<T> {
    const worker = current;
    if (!worker || !worker.connected) return Promise.resolve(fallback);
    const id = nextId++;
    return new Promise<T>((resolve) => {
      const timer = setTimeout(() => settle(id, fallback), timeoutMs);
      pending.set(id, (value) => {
        clearTimeout(timer);
        resolve((value === undefined ? fallback : value) as T);
      });
      worker.send(message(id));
    });
  }

  let stopped: Promise<void> | undefined;
  return {
    // The process's own drain has the timeout; the host's, a little later, covers one that does not answer.
    drain: ({ timeoutMs }) => ask((id) => ({ type: 'drain', id, timeoutMs }), timeoutMs + 1000, false),
    cpu: () => ask<ThreadCpu | undefined>((id) => ({ type: 'cpu', id }), 1000, undefined),
    takeLags: () => {
      const taken = lags;
      lags = [];
      return taken;
    },
    health: () => (status === 'ok'
      ? { status, required: false }
      : { status, required: false, message: status === 'restarting' ? 'the meter aggregator is restarting' : 'the meter aggregator is not running: pages wait in the stream, and meters lag, until it is started again' }),
    stop: () => {
      stopped ??= (async () => {
        stopping = true;
        clearTimeout(retryTimer);
        // A process still starting (a restart) is not waited for.
        const spawned = starting;
        starting = undefined;
        if (spawned) await kill(spawned);
        const worker = current;
        current = undefined;
        if (!worker) return;
        const exited = worker.exitCode !== null || worker.signalCode !== null ? Promise.resolve() : new Promise<void>((resolve) => worker.once('exit', () => resolve()));
        const answered = new Promise<void>((resolve) => {
          worker.on('message', (message: FromAggregator) => { if (message.type === 'stopped') resolve(); });
        });
        if (worker.connected) worker.send({ type: 'stop' } satisfies ToAggregator);
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([answered, exited, new Promise<void>((resolve) => { timer = setTimeout(resolve, STOP_TIMEOUT_MS); })]);
        clearTimeout(timer);
        // Told to stop, it exits on its own once the feeder has stopped; one that does not is killed.
        await Promise.race([exited, new Promise<void>((resolve) => { timer = setTimeout(resolve, 1000); })]);
        clearTimeout(timer);
        await kill(worker);
      })();
      return stopped;
    },
  };
}

/** Kills a process at once (SIGKILL) and waits for it to be gone. */
async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await exited;
}
