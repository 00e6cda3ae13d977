// Linux /proc helpers for the shutdown tests: the processes a command left behind, as a supervisor sees them.
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcessId {
  pid: number;
  /** Start time in clock ticks since boot: tells a live process from a later one that reused the pid. */
  start: string;
  command: string;
}

interface Stat {
  pid: number;
  ppid: number;
  state: string;
  start: string;
}

function stat(pid: number): Stat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may itself contain spaces or parentheses.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { pid, state: fields[0]!, ppid: Number(fields[1]), start: fields[19]! };
  } catch {
    return undefined;
  }
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim().slice(0, 1000);
  } catch {
    return '?';
  }
}

/** `root` and every process below it, now. */
export function processTree(root: number): ProcessId[] {
  const all: Stat[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const found = stat(Number(entry));
    if (found) all.push(found);
  }
  const tree: ProcessId[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    const own = all.find((entry) => entry.pid === pid);
    if (!own) continue;
    tree.push({ pid, start: own.start, command: commandOf(pid) });
    for (const child of all) if (child.ppid === pid) queue.push(child.pid);
  }
  return tree;
}

/** Whether this very process still runs (a zombie waiting to be reaped has already exited). */
export function running(id: ProcessId): boolean {
  const now = stat(id.pid);
  return now !== undefined && now.start === id.start && now.state !== 'Z' && now.state !== 'X';
}

/** The processes of `ids` still running after up to `timeoutMs`. */
export async function survivors(ids: ProcessId[], timeoutMs: number): Promise<ProcessId[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = ids.filter(running);
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** SIGKILLs each process that may still run (a test that failed must not leave a gateway or its Java behind). */
export function killAll(ids: readonly ProcessId[]): void {
  for (const proc of ids) {
    try {
      process.kill(proc.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
