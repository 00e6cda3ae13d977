// Child-process lifecycle for the bench: start, wait for a line, stop, and clean up everything on any
// exit path (normal end, error, Ctrl-C, SIGTERM).
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

export interface Child {
  name: string;
  process: ChildProcess;
  /** The last lines of its stdout and stderr, for error messages. */
  output(): string;
}

export function startChild(name: string, command: string, args: string[], options: SpawnOptions): Child {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
  return { name, process: child, output: keepOutput(child) };
}

/** Keeps the last 200 chunks of the child's stdout and stderr; the function returns them, for error messages. */
export function keepOutput(child: ChildProcess): () => string {
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(chunk.toString());
    if (lines.length > 200) lines.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return () => lines.join('');
}

/** Resolves with the first match of `pattern` in the child's stdout. */
export function waitForOutput(child: Child, pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const done = (err?: Error, match?: RegExpExecArray) => {
      clearTimeout(timer);
      child.process.stdout?.off('data', onData);
      child.process.off('exit', onExit);
      if (err) reject(err);
      else resolve(match!);
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = pattern.exec(seen);
      if (match) done(undefined, match);
    };
    const onExit = (code: number | null, signal: string | null) => done(new Error(`${child.name} exited (${code ?? signal}) during start-up:\n${child.output()}`));
    const timer = setTimeout(() => done(new Error(`${child.name} did not start within ${timeoutMs} ms:\n${child.output()}`)), timeoutMs);
    child.process.stdout?.on('data', onData);
    child.process.once('exit', onExit);
  });
}

export function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** SIGTERM, then SIGKILL after the grace period; resolves when the process has exited. */
export function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (!isRunning(child)) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/**
 * Stops a gateway process the bench forked: asks it over IPC (`stop`, so it stops its own children), SIGKILLs
 * it after `graceMs`, then kills whatever it had started that is still alive (DynamoDB Local, its children).
 */
export async function stopGatewayChild(child: ChildProcess, stop: object, graceMs = 8000): Promise<void> {
  const family = child.pid === undefined ? [] : descendants(child.pid);
  if (isRunning(child)) {
    if (child.connected) child.send(stop);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => { child.kill('SIGKILL'); resolve(); }, graceMs);
      child.once('exit', () => { clearTimeout(timer); resolve(); });
    });
  }
  for (const pid of family) killQuietly(pid);
}

/** Pids of every live descendant of `pid` (Linux /proc; empty elsewhere). */
export function descendants(pid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const parentOf = new Map<number, number>();
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may contain spaces and parentheses, so split after the last ')'.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parentOf.set(Number(entry), Number(fields[1]));
    } catch {
      // gone meanwhile
    }
  }
  const result: number[] = [];
  const frontier = [pid];
  while (frontier.length) {
    const current = frontier.pop()!;
    for (const [child, parent] of parentOf) {
      if (parent === current) {
        result.push(child);
        frontier.push(child);
      }
    }
  }
  return result;
}

/** CPU time (user + system, µs) a process has used so far, from /proc/<pid>/stat; undefined if unavailable. */
export function processCpuMicros(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After "(comm) ": state(0) ppid(1) … utime(11) stime(12), in clock ticks (USER_HZ, 100 on Linux).
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * 10_000 : undefined;
  } catch {
    return undefined;
  }
}

export function killQuietly(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/**
 * Cleanup steps run once, last-registered first, on normal completion, on error and on SIGINT/SIGTERM.
 * `syncKill` pids are also SIGKILLed from the `exit` handler if the async steps never ran.
 */
export class Cleanup {
  private readonly steps: Array<{ label: string; run: () => unknown }> = [];
  private readonly pids = new Set<number>();
  private readonly finalSteps: Array<() => void> = [];
  private running: Promise<void> | undefined;

  add(label: string, run: () => unknown): void {
    this.steps.push({ label, run });
  }

  /** A synchronous step that must run however the process exits (e.g. removing a temp dir). */
  addFinal(label: string, run: () => void): void {
    this.finalSteps.push(run);
    this.add(label, run);
  }

  /** A process to SIGKILL on exit if it is still alive then (e.g. DynamoDB Local's Java). */
  killOnExit(pid: number | undefined): void {
    if (pid !== undefined) this.pids.add(pid);
  }

  run(): Promise<void> {
    this.running ??= (async () => {
      for (const step of [...this.steps].reverse()) {
        try {
          await step.run();
        } catch (err) {
          console.error(`cleanup (${step.label}) failed: ${String(err)}`);
        }
      }
      for (const pid of this.pids) killQuietly(pid);
    })();
    return this.running;
  }

  private runFinal(): void {
    for (const pid of this.pids) killQuietly(pid);
    for (const step of this.finalSteps.splice(0)) {
      try {
        step();
      } catch {
        // best effort
      }
    }
  }

  /**
   * A bench's entry: installs the signal handlers, runs `main`, and cleans up however it ends; a failure is
   * printed (after `failure`, when given) and exits 1, a number `main` resolves with is the exit code.
   */
  runMain(main: () => Promise<number | void>, failure?: string): void {
    this.installHandlers();
    main().then(
      async (code) => {
        await this.run();
        if (typeof code === 'number') process.exit(code);
      },
      async (err: unknown) => {
        const text = err instanceof Error ? err.stack ?? err.message : String(err);
        console.error(failure ? `${failure}: ${text}` : text);
        await this.run();
        process.exit(1);
      },
    );
  }

  installHandlers(): void {
    let signalledAt: number | undefined;
    const onSignal = (signal: NodeJS.Signals) => {
      if (signalledAt !== undefined) {
        // The same Ctrl-C often arrives twice (the terminal signals the whole process group and tsx relays
        // it too): ignore repeats for a moment; a later second Ctrl-C stops waiting for a graceful stop.
        if (Date.now() - signalledAt < 2000) return;
        this.runFinal();
        process.exit(130);
      }
      signalledAt = Date.now();
      console.error(`\n${signal}: stopping the bench's processes…`);
      void this.run().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    process.on('exit', () => this.runFinal());
  }
}

export interface MachineCpu {
  /** Jiffies per state, summed over all CPUs (Linux /proc/stat). */
  busy: number;
  idle: number;
  iowait: number;
  steal: number;
}

/** Machine-wide CPU counters from /proc/stat; undefined elsewhere. */
export function machineCpu(): MachineCpu | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number) as number[];
    return { busy: user! + nice! + system! + irq! + softirq!, idle: idle!, iowait: iowait!, steal: steal ?? 0 };
  } catch {
    return undefined;
  }
}
