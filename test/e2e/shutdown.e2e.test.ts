// Stopping `npm start` the way service managers and terminals do: SIGTERM or SIGINT to the top process,
// Ctrl-C to the whole foreground job, or the gateway process killed outright. Every process it started goes.
import { afterEach, describe, expect, it } from '@jest/globals';
import { connect } from 'node:net';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';
import { processTree, survivors, type ProcessId } from '../support/process-tree.js';

let gateway: GatewayProcess | undefined;
let started: ProcessId[] = [];

afterEach(() => {
  // A failed test must not leave a gateway (or its Java) running behind the suite.
  for (const proc of started) {
    try {
      process.kill(proc.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
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
  }, 120_000);

  it('the gateway process killed outright (SIGKILL) takes DynamoDB Local with it', async () => {
    gateway = await startGatewayProcess();
    started = processTree(gateway.child.pid!);
    expect(started.filter(isJava)).toHaveLength(1);

    process.kill(gateway.child.pid!, 'SIGKILL');

    expect(commands(await survivors(started, 15_000))).toEqual([]);
  }, 120_000);
});
