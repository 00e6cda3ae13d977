// Starts `npm start`'s entry point (bin/start.mjs: bin/start.ts bundled, then run) as a real child process and waits for its "listening" line.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface GatewayProcess {
  url: string;
  baseUrl: string;
  dataDir: string;
  child: ChildProcess;
  output: () => string;
  /** Sends the signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface GatewayProcessOptions {
  /** Run `npm start` itself, as a service manager would, instead of node on the entry point. */
  viaNpm?: boolean;
  /** Its own process group, as a terminal's foreground job: signal it all with process.kill(-pid, …) (Ctrl-C). */
  ownProcessGroup?: boolean;
  timeoutMs?: number;
}

export async function startGatewayProcess(env: Record<string, string> = {}, timeoutOrOptions: number | GatewayProcessOptions = {}): Promise<GatewayProcess> {
  const options = typeof timeoutOrOptions === 'number' ? { timeoutMs: timeoutOrOptions } : timeoutOrOptions;
  // Generous: on a slow, shared host under the full suite (two test files at once, each with its DynamoDB Local
  // and gateway), a start has taken over a minute.
  const timeoutMs = options.timeoutMs ?? 120_000;
  const dataDir = env.GATEWAY_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'gateway-e2e-'));
  const [command, args] = options.viaNpm
    ? ['npm', ['start', '--silent']]
    : [process.execPath, ['--enable-source-maps', 'bin/start.mjs']];
  const child = spawn(command, args, {
    cwd: process.cwd(),
    env: { ...process.env, PORT: '0', GATEWAY_DATA_DIR: dataDir, npm_config_update_notifier: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.ownProcessGroup === true,
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start in ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const check = () => {
      const match = /listening on (http:\/\/[^\s/]+)\/api\/v1/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code} during start-up:\n${output}`));
    });
  });
  return {
    url,
    baseUrl: `${url}/api/v1`,
    dataDir,
    child,
    output: () => output,
    stop: (signal = 'SIGTERM') => new Promise((resolve) => {
      reportUnexpectedErrors(output);
      // Already gone (a signal ends it with exitCode null): its 'exit' has been emitted and will not be again.
      if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
      child.once('exit', (code) => resolve(code));
      child.kill(signal);
    }),
  };
}

/**
 * Writes the gateway's error lines to the test runner's stderr (a 500, a store that was busy, a failed step,
 * a crash), so that a failure seen only in CI can be traced. An upstream's failure (the simulator told to
 * fail: an UpstreamError) is left out.
 */
function reportUnexpectedErrors(output: string): void {
  const lines = output.split('\n').filter((line) => line.startsWith('{"level":"error"') && !line.includes('"name":"UpstreamError"'));
  if (lines.length === 0) return;
  const shown = lines.slice(0, 5).map((line) => (line.length > 2000 ? `${line.slice(0, 2000)}…` : line));
  process.stderr.write(`gateway process logged ${lines.length} unexpected error line(s):\n${shown.join('\n')}\n`);
}
