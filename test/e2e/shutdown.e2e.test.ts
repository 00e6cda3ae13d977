// Stopping `npm start` the way service managers and terminals do: SIGTERM or SIGINT to the top process,
// Ctrl-C to the whole foreground job, or the gateway process killed outright. Every process it started goes.
import { afterEach, describe, expect, it } from '@jest/globals';
import { connect } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { OpenRouter } from '@openrouter/sdk';
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { generateKeyText } from '../../lambdas/keys/key-format.js';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';
import { killAll, processTree, survivors, type ProcessId } from '../support/process-tree.js';

let gateway: GatewayProcess | undefined;
let started: ProcessId[] = [];

afterEach(() => {
  killAll(started);
  started = [];
  gateway = undefined;
});

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}

const commands = (list: ProcessId[]) => list.map((proc) => proc.command.slice(0, 160));
const isJava = (proc: ProcessId) => /^java .*DynamoDBLocal\.jar/.test(proc.command);

describe('npm start stopped by a supervisor', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('%s to the npm process stops every process below it and closes the port', async (signal) => {
    gateway = await startGatewayProcess({}, { viaNpm: true });
    started = processTree(gateway.child.pid!);
    expect(started.filter(isJava)).toHaveLength(1);
    const port = Number(new URL(gateway.url).port);

    process.kill(gateway.child.pid!, signal);

    expect(commands(await survivors(started, 15_000))).toEqual([]);
    expect(await portOpen(port)).toBe(false);
  }, 120_000);

  it('Ctrl-C (SIGINT to the whole foreground job) stops everything', async () => {
    gateway = await startGatewayProcess({}, { viaNpm: true, ownProcessGroup: true });
    started = processTree(gateway.child.pid!);
    const port = Number(new URL(gateway.url).port);

    process.kill(-gateway.child.pid!, 'SIGINT');

    expect(commands(await survivors(started, 15_000))).toEqual([]);
    expect(await portOpen(port)).toBe(false);
    // npm passes the signal on, so the gateway gets it twice at once: one stop, a graceful one.
    expect(gateway.output()).toContain('SIGINT: stopping the gateway');
    expect(gateway.output()).not.toContain('again: exiting now');
  }, 120_000);

  it('the same signal twice at once (the process group\'s and npm\'s copy of it) is one graceful stop', async () => {
    gateway = await startGatewayProcess({}, { viaNpm: true, ownProcessGroup: true });
    started = processTree(gateway.child.pid!);
    const node = started.find((proc) => proc.pid !== gateway!.child.pid && /start\.mjs|bin\/start/.test(proc.command));
    expect(node).toBeDefined();

    process.kill(node!.pid, 'SIGTERM');
    process.kill(node!.pid, 'SIGTERM');

    expect(commands(await survivors(started, 15_000))).toEqual([]);
    expect(gateway.output()).toContain('SIGTERM: stopping the gateway');
    expect(gateway.output()).not.toContain('again: exiting now');
  }, 120_000);

  it('npm killed outright (SIGKILL): the gateway notices its parent is gone and stops everything', async () => {
    gateway = await startGatewayProcess({}, { viaNpm: true });
    started = processTree(gateway.child.pid!);
    const port = Number(new URL(gateway.url).port);

    process.kill(gateway.child.pid!, 'SIGKILL');

    expect(commands(await survivors(started, 15_000))).toEqual([]);
    expect(await portOpen(port)).toBe(false);
  }, 120_000);

  it('the gateway process killed outright (SIGKILL) takes DynamoDB Local with it', async () => {
    gateway = await startGatewayProcess();
    started = processTree(gateway.child.pid!);
    expect(started.filter(isJava)).toHaveLength(1);

    process.kill(gateway.child.pid!, 'SIGKILL');

    expect(commands(await survivors(started, 15_000))).toEqual([]);
  }, 120_000);
});

describe('SIGTERM with a request in flight', () => {
  const ADMIN_KEY = generateKeyText();
  const TEXT = 'A reply long enough to stream in many small pieces while the gateway is asked to stop.';

  async function userClient(target: GatewayProcess): Promise<OpenAI> {
    const admin = new OpenRouter({ apiKey: ADMIN_KEY, serverURL: target.baseUrl, retryConfig: { strategy: 'none' } });
    const { key } = await admin.apiKeys.create({ requestBody: { name: 'shutdown' } });
    return new OpenAI({ apiKey: key, baseURL: target.baseUrl, maxRetries: 0 });
  }

  /** Restarts on the same data directory: the generation is recorded and charged, and nothing is held. */
  async function expectSettledAfterRestart(id: string): Promise<void> {
    gateway = await startGatewayProcess({ GATEWAY_DATA_DIR: gateway!.dataDir, GATEWAY_ADMIN_KEY: ADMIN_KEY });
    started = processTree(gateway.child.pid!);
    expect(await heldItems(gateway)).toEqual([]);
    const record = await fetch(`${gateway.baseUrl}/generation?id=${id}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(record.status).toBe(200);
    expect(((await record.json()) as { data: { total_cost: number } }).data.total_cost).toBeGreaterThan(0);
    expect(await gateway.stop('SIGTERM')).toBe(0);
  }

  async function heldItems(target: GatewayProcess): Promise<unknown[]> {
    const { dynamodb_endpoint: endpoint } = JSON.parse(readFileSync(join(target.dataDir, 'runtime.json'), 'utf8')) as { dynamodb_endpoint: string };
    const client = new DynamoDBClient({ endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    try {
      const scan = await client.send(new ScanCommand({ TableName: 'gateway', FilterExpression: 'begins_with(pk, :hold)', ExpressionAttributeValues: { ':hold': { S: 'HOLD#' } } }));
      return scan.Items ?? [];
    } finally {
      client.destroy();
    }
  }

  it('lets a stream that finishes within the grace period complete, settles it, then exits', async () => {
    gateway = await startGatewayProcess({ GATEWAY_ADMIN_KEY: ADMIN_KEY, SIMULATOR_CHUNK_DELAY_MS: '150', GATEWAY_SHUTDOWN_GRACE_MS: '10000' });
    started = processTree(gateway.child.pid!);
    const openai = await userClient(gateway);
    const stream = await openai.chat.completions.create({ model: 'simulator/echo', stream: true, messages: [{ role: 'user', content: TEXT }] });
    let text = '';
    let finish: string | null = null;
    let id = '';
    let exit: Promise<number | null> | undefined;
    for await (const chunk of stream) {
      id = chunk.id;
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      // The first piece has arrived: the stream is in flight.
      exit ??= gateway.stop('SIGTERM');
    }
    expect(text).toBe(TEXT);
    expect(finish).toBe('stop');
    expect(await exit).toBe(0);

    // Settled before the store stopped: its record is there and nothing is held.
    await expectSettledAfterRestart(id);
  }, 180_000);

  it('does not wait past the grace period: a stream still going ends with a 503 error event, settled, then the process exits', async () => {
    gateway = await startGatewayProcess({ GATEWAY_ADMIN_KEY: ADMIN_KEY, SIMULATOR_CHUNK_DELAY_MS: '4000', GATEWAY_SHUTDOWN_GRACE_MS: '300' });
    started = processTree(gateway.child.pid!);
    const openai = await userClient(gateway);
    const stream = await openai.chat.completions.create({ model: 'simulator/echo', stream: true, messages: [{ role: 'user', content: TEXT }] });
    const iterator = stream[Symbol.asyncIterator]();
    const first = await iterator.next();
    const id = (first.value as { id: string }).id;
    const stoppedAt = Date.now();
    const exit = gateway.stop('SIGTERM');
    // The openai client raises a chunk that carries `error` as an APIError.
    let failure: { status?: number; message: string } | undefined;
    let finished = false;
    try {
      while (!(await iterator.next()).done) { /* the pieces before the shutdown */ }
      finished = true;
    } catch (err) {
      failure = err as { status?: number; message: string };
    }
    expect(await exit).toBe(0);
    expect(finished).toBe(false);
    expect(failure?.message).toMatch(/shutting down/);
    // 300 ms of grace, then settling (3 s, at most 10 s more), then DynamoDB Local's stop: far less than the reply's ~45 s.
    expect(Date.now() - stoppedAt).toBeLessThan(20_000);
    expect(commands(await survivors(started, 10_000))).toEqual([]);

    // The partial stream was settled before the store stopped: recorded as an error, charged, nothing held.
    await expectSettledAfterRestart(id);
  }, 180_000);
});
