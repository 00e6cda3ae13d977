// npm start's meter aggregator process (bin/local/aggregator-process.ts): what its host does with the
// process's messages, and a process that dies. The real worker module, applying pages from DynamoDB Local's stream, is
// exercised by every runtime and end-to-end test; here a stand-in (test/support/aggregator-stand-in.ts).
import { afterEach, describe, expect, it } from '@jest/globals';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { startAggregatorProcess, type AggregatorProcess } from '../../bin/local/aggregator-process.js';
import { waitFor } from '../support/wait.js';

const STAND_IN = pathToFileURL(join(process.cwd(), 'test', 'support', 'aggregator-stand-in.ts')).href;
const settings = { endpoint: 'http://127.0.0.1:1', tableName: 'gateway', pollMs: 250, checkpointFile: '/nonexistent/c.json', deadLetterFile: '/nonexistent/d.jsonl' };
let thread: AggregatorProcess | undefined;

afterEach(async () => {
  await thread?.stop();
  thread = undefined;
  delete process.env.STAND_IN_EXIT;
  delete process.env.STAND_IN_READY_MS;
});

describe('meter aggregator process', () => {
  it('forwards its log lines, collects page lags, answers drains and CPU, and stops', async () => {
    const lines: string[] = [];
    thread = await startAggregatorProcess({ ...settings, module: STAND_IN, log: (line) => lines.push(line) });
    // The log line and the lags come as two messages, each in its own turn of the event loop.
    const lags: number[] = [];
    await waitFor(() => {
      lags.push(...thread!.takeLags());
      return lines.length > 0 && lags.length >= 2;
    }, { timeoutMs: 10_000, what: 'a log line and two lags' });
    expect(lines).toEqual(['stand-in started']);
    expect(lags).toEqual([12, 34]);
    expect(thread.takeLags()).toEqual([]);
    expect(await thread.drain({ timeoutMs: 500 })).toBe(true);
    expect(await thread.cpu()).toEqual({ user: 4000, system: 242 });
    expect(thread.health()).toEqual({ status: 'ok', required: false });
    await thread.stop();
    // Stopped: nothing to ask any more.
    expect(await thread.drain({ timeoutMs: 500 })).toBe(false);
    expect(await thread.cpu()).toBeUndefined();
  });

  it('a process that dies is started again, and once it has died too often, reported down and tried again later', async () => {
    process.env.STAND_IN_EXIT = '3';
    const lines: string[] = [];
    thread = await startAggregatorProcess({ ...settings, module: STAND_IN, restarts: 2, log: (line) => lines.push(line) });
    await waitFor(() => thread!.health().status === 'down', { timeoutMs: 10_000, what: 'the process down' });
    expect(lines.filter((line) => line.includes('exited (code 3); starting it again'))).toHaveLength(2);
    expect(lines.at(-1)).toMatch(/died 3 times in 60 s \(last exit code 3\); starting it again in 60 s\. Pages wait in the stream meanwhile\./);
    expect(thread.health()).toEqual({ status: 'down', required: false, message: 'the meter aggregator is not running: pages wait in the stream, and meters lag, until it is started again' });
    expect(await thread.drain({ timeoutMs: 500 })).toBe(false);
    // Stopped while it waits to try again: nothing starts afterwards.
    const started = lines.filter((line) => line === 'stand-in started').length;
    await thread.stop();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(lines.filter((line) => line === 'stand-in started')).toHaveLength(started);
  });

  it('a stop while a dead process is being started again ends that start too', async () => {
    process.env.STAND_IN_EXIT = '3';
    process.env.STAND_IN_READY_MS = '300';
    const lines: string[] = [];
    thread = await startAggregatorProcess({ ...settings, module: STAND_IN, log: (line) => lines.push(line) });
    await waitFor(() => thread!.health().status === 'restarting', { timeoutMs: 10_000, what: 'the process restarting' });
    const stopping = Date.now();
    await thread.stop();
    expect(Date.now() - stopping).toBeLessThan(1000);
    const started = lines.filter((line) => line === 'stand-in started').length;
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(lines.filter((line) => line === 'stand-in started')).toHaveLength(started);
    expect(lines.filter((line) => line.includes('starting it again'))).toHaveLength(1);
  });

  it('a module that fails to load fails the start with its error', async () => {
    const missing = pathToFileURL(join(process.cwd(), 'test', 'support', 'no-such-worker.ts')).href;
    await expect(startAggregatorProcess({ ...settings, module: missing, log: () => undefined })).rejects.toThrow(/meter aggregator process exited \(code 1\) during start-up: .*no-such-worker/s);
  });
});
