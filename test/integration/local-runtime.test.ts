// The local runtime as npm start runs it, in this process: its console output, its management key, its parts
// in processes of their own (started again when they die), and what /health and requests say when DynamoDB
// Local dies (restarted once, then given up on).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { startLocalRuntime, type LocalRuntime } from '../../bin/local/runtime.js';
import { processTree, running } from '../support/process-tree.js';
import { BACKGROUND_NICENESS } from '../../bin/local/child.js';

let runtime: LocalRuntime;
let out = '';
let err = '';
const fatal: string[] = [];
let adminKey: string;
let userKey: string;

beforeAll(async () => {
  runtime = await startLocalRuntime({
    port: 0, host: '127.0.0.1', dataDir: mkdtempSync(join(tmpdir(), 'gateway-runtime-')), tableName: 'gateway',
    initialCredits: '10', simulatorPort: 0, internProgramme: false, storeRestarts: 1,
  }, {
    out: (text) => { out += text; },
    err: (text) => { err += text; },
    onFatal: (message) => { fatal.push(message); },
  });
  adminKey = runtime.bootstrap.generatedKeyText!;
  const created = await fetch(`${runtime.url}/api/v1/keys`, { method: 'POST', headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'runtime test' }) });
  userKey = ((await created.json()) as { key: string }).key;
}, 120_000);

afterAll(async () => {
  await runtime?.stop();
});

async function until<T>(probe: () => Promise<T>, ok: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const health = async () => {
  const reply = await fetch(`${runtime.url}/health`);
  return { status: reply.status, body: (await reply.json()) as { status: string; parts: Record<string, { status: string; message?: string }> } };
};

describe('npm start console', () => {
  it('saves the generated management key in the data directory, readable only by its owner', () => {
    expect(adminKey).toMatch(/^sk-gw-v1-/);
    const file = runtime.managementKeyFile!;
    expect(file).toBe(join(runtime.config.dataDir, 'management-key.txt'));
    expect(readFileSync(file, 'utf8').trim()).toBe(adminKey);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('answers HEAD as GET without the body: the headers, the length GET\'s body has, and the status of errors', async () => {
    for (const [path, key] of [['/health', undefined], ['/api/v1/key', userKey], ['/api/v1/models', undefined]] as const) {
      const get = await fetch(`${runtime.url}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
      const getBody = Buffer.from(await get.arrayBuffer());
      const head = await fetch(`${runtime.url}${path}`, { method: 'HEAD', headers: key ? { authorization: `Bearer ${key}` } : {} });
      expect({ path, status: head.status, type: head.headers.get('content-type') }).toEqual({ path, status: get.status, type: get.headers.get('content-type') });
      expect(Number(head.headers.get('content-length'))).toBe(getBody.length);
      expect((await head.arrayBuffer()).byteLength).toBe(0);
    }
    expect((await fetch(`${runtime.url}/api/v1/key`, { method: 'HEAD' })).status).toBe(401);
    expect((await fetch(`${runtime.url}/api/v1/no-such-route`, { method: 'HEAD' })).status).toBe(404);
    // A POST-only route does not take it.
    const refused = await fetch(`${runtime.url}/api/v1/chat/completions`, { method: 'HEAD', headers: { authorization: `Bearer ${userKey}` } });
    expect(refused.status).toBe(405);
    // Nor GET: the inference function answers it, as its URL does on AWS (the management function had, with a 404).
    const get = await fetch(`${runtime.url}/api/v1/chat/completions`, { headers: { authorization: `Bearer ${userKey}` } });
    expect(get.status).toBe(405);
    expect(((await get.json()) as { error: { message: string } }).error.message).toMatch(/allowed: POST/);
  });

  it('prints one short line per request, without JSON or metrics lines', async () => {
    const openai = new OpenAI({ apiKey: userKey, baseURL: `${runtime.url}/api/v1`, maxRetries: 0 });
    out = '';
    err = '';
    await openai.chat.completions.create({ model: 'simulator/echo', messages: [{ role: 'user', content: 'Hello' }] });
    const stream = await openai.chat.completions.create({ model: 'simulator/echo', stream: true, messages: [{ role: 'user', content: 'Hello' }] });
    for await (const _chunk of stream) { /* drain */ }
    await fetch(`${runtime.url}/api/v1/key`, { headers: { authorization: `Bearer ${userKey}` } });

    // A request's line comes once it is done, settlement included (a moment after a stream's last byte).
    await until(async () => out.trimEnd().split('\n').length, (count) => count >= 3, 5000);
    const lines = out.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    // In the order the requests finished: the stream's line may come after the next request's.
    expect(lines.filter((line) => /^\d\d:\d\d:\d\d POST \/api\/v1\/chat\/completions 200 simulator\/echo \d+ ms \$0\.\d{6}$/.test(line))).toHaveLength(2);
    expect(lines.filter((line) => /^\d\d:\d\d:\d\d GET \/api\/v1\/key 200 \d+ ms$/.test(line))).toHaveLength(1);
    expect(lines.every((line) => line.length < 120)).toBe(true);
    expect(err).toBe('');
  });
});

/** This process's descendant whose command line names `entry`, if there is one. */
function childRunning(entry: string): number | undefined {
  return processTree(process.pid).find((proc) => proc.pid !== process.pid && proc.command.includes(entry) && running(proc))?.pid;
}

describe('parts in processes of their own', () => {
  it('runs the simulator, the batch runner, the meter aggregator and the S3, SQS and KMS stand-ins as processes apart from the gateway\'s', () => {
    for (const entry of ['simulator-child.ts', 'batch-child.ts', 'aggregator-worker.ts', 'aws-child.ts']) expect(childRunning(entry)).toEqual(expect.any(Number));
    // The work that can wait runs behind the request path for the CPU; the simulator and the stand-ins do not.
    const niceOf = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]);
    const own = niceOf(process.pid);
    expect(niceOf(childRunning('batch-child.ts')!)).toBe(Math.max(own, BACKGROUND_NICENESS));
    expect(niceOf(childRunning('aggregator-worker.ts')!)).toBe(Math.max(own, BACKGROUND_NICENESS));
    expect(niceOf(childRunning('simulator-child.ts')!)).toBe(own);
    expect(niceOf(childRunning('aws-child.ts')!)).toBe(own);
  });

  it('a batch runner that dies is started again, and batches run after it', async () => {
    const before = childRunning('batch-child.ts')!;
    process.kill(before, 'SIGKILL');
    await until(async () => err, (text) => text.includes('the batch runner exited unexpectedly (SIGKILL)'), 10_000);
    const back = await until(health, (reply) => reply.body.parts.batches?.status === 'ok' && childRunning('batch-child.ts') !== before, 60_000);
    expect(back.body.parts.batches).toEqual({ status: 'ok' });
    expect(err).toContain('the batch runner restarted');
    const after = childRunning('batch-child.ts');
    expect(after).toEqual(expect.any(Number));
    expect(after).not.toBe(before);
    const post = await fetch(`${runtime.url}/api/v1/batches`, {
      method: 'POST', headers: { authorization: `Bearer ${userKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ endpoint: '/v1/chat/completions', model: 'simulator/echo', requests: [{ custom_id: 'after-restart', body: { messages: [{ role: 'user', content: 'still here' }] } }] }),
    });
    expect(post.status).toBe(202);
    const { id } = await post.json() as { id: string };
    const done = await until(async () => (await (await fetch(`${runtime.url}/api/v1/batches/${id}`, { headers: { authorization: `Bearer ${userKey}` } })).json()) as { status: string; results: Array<{ response: { body: { choices: Array<{ message: { content: string } }> } } }> },
      (batch) => batch.status === 'completed', 30_000);
    expect(done.results[0]!.response.body.choices[0]!.message.content).toBe('still here');
  }, 90_000);

  it('S3, SQS and KMS stand-ins that die are started again on their ports, and the batch runner with them (the queue was in their memory)', async () => {
    const before = childRunning('aws-child.ts')!;
    const runnerBefore = childRunning('batch-child.ts')!;
    process.kill(before, 'SIGKILL');
    await until(async () => err, (text) => text.includes('the S3, SQS and KMS stand-ins exited unexpectedly (SIGKILL)'), 10_000);
    await until(async () => childRunning('batch-child.ts'), (pid) => pid !== undefined && pid !== runnerBefore, 60_000);
    const back = await until(health, (reply) => reply.status === 200 && reply.body.parts.batches?.status === 'ok', 60_000);
    expect(back.body.parts.kms).toEqual({ status: 'ok' });
    const post = await fetch(`${runtime.url}/api/v1/batches`, {
      method: 'POST', headers: { authorization: `Bearer ${userKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ endpoint: '/v1/chat/completions', model: 'simulator/echo', requests: [{ custom_id: 'after-stand-ins', body: { messages: [{ role: 'user', content: 'stand-ins back' }] } }] }),
    });
    expect(post.status).toBe(202);
    const { id } = await post.json() as { id: string };
    const done = await until(async () => (await (await fetch(`${runtime.url}/api/v1/batches/${id}`, { headers: { authorization: `Bearer ${userKey}` } })).json()) as { status: string },
      (batch) => batch.status === 'completed', 30_000);
    expect(done.status).toBe('completed');
  }, 120_000);

  it('a simulator that dies is started again on the same port', async () => {
    const before = childRunning('simulator-child.ts')!;
    process.kill(before, 'SIGKILL');
    await until(async () => err, (text) => text.includes('the upstream simulator exited unexpectedly (SIGKILL)'), 10_000);
    await until(health, (reply) => reply.body.parts.simulator?.status === 'ok' && childRunning('simulator-child.ts') !== before, 60_000);
    const reply = await fetch(`${runtime.simulator.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'echo', messages: [{ role: 'user', content: 'same port' }] }) });
    expect(((await reply.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content).toBe('same port');
  }, 90_000);
});

describe('DynamoDB Local dying under a running gateway', () => {
  it('reports each part on /health', async () => {
    expect(await health()).toEqual({ status: 200, body: { status: 'ok', parts: { store: { status: 'ok' }, aggregator: { status: 'ok' }, kms: { status: 'ok' }, simulator: { status: 'ok' }, batches: { status: 'ok' } } } });
    // The meter aggregator runs in its own process, whose CPU time the bench reads apart from the request path's.
    const cpu = await runtime.aggregator.cpu();
    expect(cpu!.user + cpu!.system).toBeGreaterThan(0);
  });

  it('is restarted on its data directory, with its output printed, and the gateway recovers', async () => {
    runtime.dynamodb.kill();
    const down = await until(health, (reply) => reply.status === 503, 10_000);
    expect(down.status).toBe(503);
    expect(down.body.status).toBe('degraded');
    expect(down.body.parts.store!.status).not.toBe('ok');

    const back = await until(health, (reply) => reply.status === 200, 60_000);
    expect(back.body.status).toBe('ok');
    expect(err).toMatch(/DynamoDB Local exited unexpectedly \(SIGKILL\); its last output:\n/);
    expect(err).toContain('DynamoDB Local restarted on');
    // The data survived: the key created before still works.
    const reply = await fetch(`${runtime.url}/api/v1/key`, { headers: { authorization: `Bearer ${userKey}` } });
    expect(reply.status).toBe(200);
    expect(fatal).toEqual([]);
  }, 90_000);

  it('when it keeps dying: /health 503 naming the store, requests 503 (not 500), and a clear fatal message', async () => {
    runtime.dynamodb.kill();
    await until(async () => fatal.length, (count) => count > 0, 10_000);
    const down = await health();
    expect(down).toEqual({ status: 503, body: { status: 'degraded', parts: { store: { status: 'down', message: 'DynamoDB Local is not running' }, aggregator: { status: 'ok' }, kms: { status: 'ok' }, simulator: { status: 'ok' }, batches: { status: 'ok' } } } });
    expect(fatal).toEqual([expect.stringMatching(/^DynamoDB Local died 2 times in 60 s; not restarting it\. Its data is in .*dynamodb\.$/)]);

    // Past the key cache, so authentication itself has to reach the store.
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const keys = await fetch(`${runtime.url}/api/v1/keys`, { headers: { authorization: `Bearer ${adminKey}` } });
    expect(keys.status).toBe(503);
    expect(keys.headers.get('retry-after')).toBe('5');
    expect(await keys.json()).toEqual({ error: { code: 503, message: 'The gateway cannot reach its database or key service; try again shortly', metadata: { request_id: expect.any(String) } } });

    const chat = await fetch(`${runtime.url}/api/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${userKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'simulator/echo', messages: [{ role: 'user', content: 'Hello' }] }),
    });
    expect(chat.status).toBe(503);
    expect(((await chat.json()) as { error: { code: number } }).error.code).toBe(503);
  }, 60_000);
});
