// npm start's parts that run as processes of their own (the simulator, the batch runner, the S3, SQS and KMS
// stand-ins; the meter aggregator has its own host, aggregator-process.ts), as on AWS they are their own
// functions or services: each gets its own heap and event loop, and the memory each needs is its
// own (the bench reports each process's peak). The parent forks a TypeScript entry through tsx with an IPC
// channel; the child says `ready` (with what the parent needs to know, such as its URL) or `failed`, answers
// questions by id, and exits when told to stop or when its parent goes (however the parent ended).
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setPriority } from 'node:os';

/** What a child sends. `answer` replies to a question (by its id); anything else goes to the parent's onMessage. */
export type FromChild =
  | { type: 'ready'; info: unknown }
  | { type: 'failed'; error: string }
  | { type: 'answer'; id: number; value: unknown }
  | { type: string; [field: string]: unknown };

export interface ChildOptions {
  /** For messages: "the batch runner". */
  name: string;
  /** The TypeScript module the child runs (an absolute path). */
  entry: string;
  env: NodeJS.ProcessEnv;
  /** V8 flags of the child (its heap limits). */
  nodeFlags?: string[];
  /** Where the child's stdout and stderr lines go. */
  output: (line: string) => void;
  onMessage?: (message: FromChild) => void;
  startTimeoutMs?: number;
  /** Work that can wait (the batch runner): it runs behind the request path for the CPU (BACKGROUND_NICENESS). */
  background?: boolean;
}

/**
 * The scheduling priority (nice value) of npm start's background processes, the meter aggregator and the
 * batch runner: on AWS they are functions on machines of their own; here they share the cores with the
 * process that serves requests, and their bursts (a stream batch applied, a shard of items) delayed its
 * replies. Measured with `npm run bench` (two runs each, 2 cores): added latency p99 3.42 and 4.40 ms against
 * 5.66 and 13.1 ms at the normal priority, time to first byte p99 12.4 and 19.3 against 21.4 and 30.0 ms,
 * chunks over 1 ms late 58 and 57 against 96 and 124, at the same throughput and aggregator lag (p99 < 0.3 s).
 */
export const BACKGROUND_NICENESS = 10;

/** Lowers a process's scheduling priority to BACKGROUND_NICENESS (where the OS lets it; nothing otherwise). */
export function lowerPriority(pid: number): void {
  try {
    setPriority(pid, BACKGROUND_NICENESS);
  } catch {
    // Not permitted or not supported here: it runs at the normal priority.
  }
}

export interface Child<Info> {
  readonly info: Info;
  readonly pid: number;
  /** Asks the child (`{...message, id}`); `fallback` if it does not answer within `timeoutMs` or exits first. */
  ask<T>(message: { type: string; [field: string]: unknown }, timeoutMs: number, fallback: T): Promise<T>;
  /** Resolves when the child exits, with its code or signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Asks it to stop (`{type:'stop'}`), then kills it if it has not exited within `timeoutMs`. */
  stop(timeoutMs: number): Promise<void>;
}

const DEFAULT_START_TIMEOUT_MS = 120_000;

/** A module of bin/local as a path (these files are ES modules under tsx, CommonJS-transformed under Jest). */
export function localModule(file: string): string {
  const from = (import.meta as { url?: string }).url ?? pathToFileURL(__filename).href;
  return fileURLToPath(new URL(file, from));
}

export function startChild<Info>(options: ChildOptions): Promise<Child<Info>> {
  const child: ChildProcess = fork(options.entry, [], {
    // Not the host's flags (Jest's, the bench's): tsx for the TypeScript entry, and the child's own V8 limits.
    execArgv: ['--import', 'tsx', ...(options.nodeFlags ?? [])],
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    // Bigints and Maps cross as they are (records carry bigint money).
    serialization: 'advanced',
  });
  if (options.background && child.pid) lowerPriority(child.pid);
  // A failed spawn, kill or send: said, never thrown at the gateway (a start that has not finished fails).
  let spawnError: Error | undefined;
  child.on('error', (error) => {
    spawnError = error;
    options.output(`${options.name}: ${error.message}`);
  });
  // Each stream's output line by line (a line split across chunks is kept until its end arrives).
  const tails = { stdout: '', stderr: '' };
  const lines = (stream: keyof typeof tails) => (chunk: Buffer) => {
    const parts = (tails[stream] + chunk.toString()).split('\n');
    tails[stream] = parts.pop()!;
    for (const line of parts) if (line.trim() !== '') options.output(line);
  };
  child.stdout!.on('data', lines('stdout'));
  child.stderr!.on('data', lines('stderr'));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => {
    for (const stream of ['stdout', 'stderr'] as const) {
      if (tails[stream].trim() !== '') options.output(tails[stream]);
      tails[stream] = '';
    }
    resolve({ code, signal });
  }));
  const pending = new Map<number, (value: unknown) => void>();
  let nextId = 1;
  void exited.then(() => {
    for (const [id, settle] of pending) {
      pending.delete(id);
      settle(undefined);
    }
  });

  return new Promise<Child<Info>>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => fail(new Error(`${options.name} did not start within ${(options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS) / 1000} s`)), options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS);
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    void exited.then(({ code, signal }) => fail(new Error(`${options.name} exited (${signal ?? `code ${code}`}) during start-up${spawnError ? `: ${spawnError.message}` : ''}`)));
    // Not started at all (no process to exit): the start fails with why.
    child.once('error', (error) => {
      if (child.pid === undefined) fail(error);
    });
    child.on('message', (message: FromChild) => {
      if (message.type === 'ready' && !settled) {
        settled = true;
        clearTimeout(timer);
        resolve({
          info: (message as { info: Info }).info,
          pid: child.pid!,
          exited,
          ask: <T>(question: { type: string; [field: string]: unknown }, timeoutMs: number, fallback: T) => {
            if (child.exitCode !== null || child.signalCode !== null || !child.connected) return Promise.resolve(fallback);
            const id = nextId++;
            return new Promise<T>((done) => {
              const timeout = setTimeout(() => {
                pending.delete(id);
                done(fallback);
              }, timeoutMs);
              pending.set(id, (value) => {
                clearTimeout(timeout);
                done(value === undefined ? fallback : value as T);
              });
              child.send({ ...question, id });
            });
          },
          async stop(timeoutMs) {
            if (child.exitCode === null && child.signalCode === null) {
              if (child.connected) child.send({ type: 'stop' });
              const timeout = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
              await exited;
              clearTimeout(timeout);
            }
          },
        });
      } else if (message.type === 'failed') fail(new Error(`${options.name} failed to start: ${(message as { error: string }).error}`));
      else if (message.type === 'answer') {
        const { id, value } = message as { id: number; value: unknown };
        const settle = pending.get(id);
        pending.delete(id);
        settle?.(value);
      } else options.onMessage?.(message);
    });
  });
}

/** The child's side of the channel. */
export interface ParentChannel {
  send(message: { type: string; [field: string]: unknown }): void;
  /** Answers each question of this type with what `handler` returns (or resolves to). */
  answer(type: string, handler: (message: Record<string, unknown>) => unknown): void;
  ready(info: unknown): void;
  failed(error: unknown): void;
  /** Called once when the parent says stop or goes away; the child exits when it resolves. */
  onStop(handler: () => Promise<void>): void;
}

export function parentChannel(): ParentChannel {
  if (!process.send) throw new Error('this module runs as a child of npm start (bin/local/child.ts), with an IPC channel');
  const send = (message: unknown) => {
    if (process.connected) process.send!(message);
  };
  const handlers = new Map<string, (message: Record<string, unknown>) => unknown>();
  let stopHandler: () => Promise<void> = async () => undefined;
  let stopping = false;
  // Exits once every message sent before is on its way (a message's callback runs once it is written).
  const exit = (code: number) => {
    if (process.connected) process.send!({ type: 'bye' }, () => process.exit(code));
    else process.exit(code);
  };
  const stop = () => {
    if (stopping) return;
    stopping = true;
    stopHandler().then(() => exit(0), (error: unknown) => {
      console.error(error);
      exit(1);
    });
  };
  process.on('message', (message: Record<string, unknown>) => {
    if (message.type === 'stop') return stop();
    const handler = handlers.get(message.type as string);
    if (!handler) return;
    void Promise.resolve().then(() => handler(message)).then(
      (value) => send({ type: 'answer', id: message.id, value }),
      (error: unknown) => {
        console.error(error);
        send({ type: 'answer', id: message.id, value: undefined });
      },
    );
  });
  // A stray rejected promise is a bug to log (the parent shows this process's stderr), not a reason to die.
  process.on('unhandledRejection', (reason) => console.error('unhandled rejection:', reason instanceof Error ? reason.stack : reason));
  // The parent went (it exited, was killed, crashed): nothing is left to serve. A stop that hangs does not
  // leave this process behind.
  process.on('disconnect', () => {
    setTimeout(() => process.exit(1), 30_000).unref();
    stop();
  });
  // Signals are the parent's to handle (Ctrl-C, or a service manager's SIGTERM, reaches the whole process
  // group): it tells this one to stop once what depends on it has drained.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => undefined);
  return {
    send,
    answer: (type, handler) => handlers.set(type, handler),
    ready: (info) => send({ type: 'ready', info }),
    failed: (error) => send({ type: 'failed', error: error instanceof Error ? error.stack ?? error.message : String(error) }),
    onStop: (handler) => { stopHandler = handler; },
  };
}

/** A child kept running: started again when it dies, unless it keeps dying (then once a minute). */
export interface Supervised<Info> {
  /** The child now running; undefined while it is restarting or down. */
  current(): Child<Info> | undefined;
  /** Stops the child (as stop() does) and starts a new one: not a death. */
  restart(timeoutMs: number): Promise<void>;
  status(): 'ok' | 'restarting' | 'down';
  stop(timeoutMs: number): Promise<void>;
}

const RESTART_WINDOW_MS = 60_000;
const RETRY_DOWN_MS = 60_000;

export async function supervise<Info>(
  start: () => Promise<Child<Info>>,
  options: {
    name: string;
    log: (line: string) => void;
    restarts?: number;
    /** Run with each child that has started, before it is current (a throw stops that child: it counts as a death). */
    onStart?: (child: Child<Info>) => void | Promise<void>;
    /** Run before each restart (not the first start). */
    beforeRestart?: () => Promise<unknown>;
    /** Said when it is started again. */
    restartNote?: string;
  },
): Promise<Supervised<Info>> {
  const restarts = options.restarts ?? 3;
  const deaths: number[] = [];
  let status: 'ok' | 'restarting' | 'down' = 'ok';
  let stopping = false;
  /** The stop's deadline for a child that finishes starting after the stop began. */
  let stopTimeoutMs = 5000;
  let retry: NodeJS.Timeout | undefined;
  let current: Child<Info> | undefined;
  let starting: Promise<unknown> | undefined;

  /** A child stopped on purpose to be replaced (restart()): its exit is not a death. */
  let replacing: Child<Info> | undefined;
  const watch = (child: Child<Info>) => {
    void child.exited.then(({ code, signal }) => {
      if (current === child) current = undefined;
      if (stopping || replacing === child) return;
      options.log(`${options.name} exited unexpectedly (${signal ?? `code ${code}`})`);
      void restart();
    });
  };
  const launch = async () => {
    const child = await start();
    try {
      await options.onStart?.(child);
    } catch (error) {
      await child.stop(5000);
      throw error;
    }
    if (stopping) {
      await child.stop(stopTimeoutMs);
      return;
    }
    current = child;
    status = 'ok';
    watch(child);
  };
  const restart = async () => {
    const now = Date.now();
    deaths.push(now);
    while (deaths.length > 0 && deaths[0]! < now - RESTART_WINDOW_MS) deaths.shift();
    if (deaths.length > restarts) {
      status = 'down';
      options.log(`${options.name} died ${deaths.length} times in ${RESTART_WINDOW_MS / 1000} s; starting it again in ${RETRY_DOWN_MS / 1000} s`);
      retry = setTimeout(() => {
        retry = undefined;
        deaths.length = 0;
        void restart();
      }, RETRY_DOWN_MS);
      retry.unref();
      return;
    }
    status = 'restarting';
    try {
      await (starting = (async () => {
        await options.beforeRestart?.().catch(() => undefined);
        if (!stopping) await launch();
      })());
      if (!stopping) options.log(`${options.name} restarted${options.restartNote ? ` (${options.restartNote})` : ''}`);
    } catch (error) {
      if (stopping) return;
      options.log(String(error instanceof Error ? error.message : error));
      void restart();
    }
  };

  await (starting = launch());
  return {
    current: () => current,
    async restart(timeoutMs) {
      const child = current;
      if (!child || stopping) return;
      replacing = child;
      status = 'restarting';
      await child.stop(timeoutMs);
      if (stopping) return;
      try {
        await (starting = launch());
      } catch (error) {
        options.log(String(error instanceof Error ? error.message : error));
        void restart();
      }
    },
    status: () => status,
    async stop(timeoutMs) {
      stopping = true;
      stopTimeoutMs = timeoutMs;
      clearTimeout(retry);
      await starting?.catch(() => undefined);
      await current?.stop(timeoutMs);
    },
  };
}
