// Batches as `npm start` serves them: submitted over HTTP, stored in the local S3, run by the worker from the
// local SQS through the inference core against the simulator, and read back. Every chat and Responses result
// body parses with @openrouter/sdk's own schemas; the key is charged exactly what the batch reports.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OpenRouter } from '@openrouter/sdk';
import { ChatResult$inboundSchema } from '@openrouter/sdk/models/chatresult';
import { OpenResponsesResult$inboundSchema } from '@openrouter/sdk/models/openresponsesresult';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';
import { unknownPaths } from '../support/sdk-shapes.js';
import { waitFor } from '../support/wait.js';
import { generateKeyText } from '../../lambdas/keys/key-format.js';
import { batchObject } from '../../lambdas/batches/schemas.js';

type Batch = ReturnType<typeof batchObject.parse>;

const ADMIN_KEY = generateKeyText();
let gateway: GatewayProcess;
let admin: OpenRouter;
let userKey: string;
let keyHash: string;

async function call(path: string, init: { method?: string; body?: unknown; key?: string } = {}): Promise<{ status: number; json: any; headers: Headers }> {
  const response = await fetch(`${gateway.baseUrl}${path}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: { authorization: `Bearer ${init.key ?? userKey}`, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : undefined, headers: response.headers };
}

async function finished(id: string, key = userKey, timeoutMs = 30_000): Promise<Batch> {
  let batch: Batch | undefined;
  await waitFor(async () => {
    batch = batchObject.parse((await call(`/batches/${id}?results_limit=1000`, { key })).json);
    return ['completed', 'failed', 'cancelled', 'expired'].includes(batch.status);
  }, { timeoutMs, what: `batch ${id} to end` });
  return batch!;
}

const chat = (content: string) => ({ messages: [{ role: 'user', content }] });

beforeAll(async () => {
  // A short request deadline: a cancelled or expired batch ends once its running items have had that long.
  gateway = await startGatewayProcess({ GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_UPSTREAM_TIMEOUT_MS: '1500', GATEWAY_REQUEST_TIMEOUT_MS: '4000' });
  admin = new OpenRouter({ apiKey: ADMIN_KEY, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
  const created = await admin.apiKeys.create({ requestBody: { name: 'e2e batches' } });
  userKey = created.key;
  keyHash = created.data.hash;
}, 150_000);

afterAll(async () => {
  await gateway?.stop();
});

describe('a chat batch', () => {
  let submitted: Batch;
  let batch: Batch;

  beforeAll(async () => {
    const reply = await call('/batches', {
      body: {
        endpoint: '/v1/chat/completions',
        model: 'simulator/echo',
        metadata: { job: 'e2e' },
        requests: [
          { custom_id: 'first', body: chat('one') },
          { custom_id: 'broken', body: { messages: 'not a list' } },
          { custom_id: 'third', body: { ...chat('three'), max_tokens: 16 } },
          { custom_id: 'fails', body: { model: 'simulator/echo', ...chat('boom'), provider: { only: ['nobody'] } } },
        ],
      },
    });
    expect(reply.status).toBe(202);
    submitted = batchObject.parse(reply.json);
    batch = await finished(submitted.id);
  }, 60_000);

  it('is accepted as validating, with its items counted, and ends completed', () => {
    expect(submitted).toMatchObject({ object: 'batch', status: 'validating', endpoint: '/v1/chat/completions', model: 'simulator/echo', completion_window: '24h', request_counts: { total: 4, completed: 0, failed: 0 }, results: [], metadata: { job: 'e2e' } });
    expect(submitted.id).toMatch(/^batch_/);
    expect(batch.status).toBe('completed');
    expect(batch.finalized_at).toBeGreaterThanOrEqual(batch.created_at);
    expect(batch.request_counts).toEqual({ total: 4, completed: 2, failed: 2 });
  });

  it('reports every item once, in input order, with a response or an error', () => {
    expect(batch.results!.map((result) => result.custom_id)).toEqual(['first', 'broken', 'third', 'fails']);
    const [first, broken, third, fails] = batch.results!;
    expect(first!.response!.status_code).toBe(200);
    expect(first!.error).toBeNull();
    expect((first!.response!.body as any).choices[0].message.content).toBe('one');
    expect(third!.response!.body).toMatchObject({ object: 'chat.completion', choices: [{ message: { content: 'three' } }] });
    expect(broken).toMatchObject({ id: null, response: null, error: { type: 'invalid_request_error', error_type: 'invalid_body', param: 'body.messages' } });
    expect(broken!.error!.message).toMatch(/messages/);
    // A provider filter nothing satisfies: the item fails as the live request would (no endpoint), nothing charged.
    expect(fails).toMatchObject({ response: null, error: { type: 'not_found_error', error_type: 'not_found' } });
  });

  it('has result bodies that @openrouter/sdk parses whole', () => {
    for (const result of batch.results!.filter((r) => r.response)) {
      const parsed = ChatResult$inboundSchema.parse(result.response!.body);
      expect(unknownPaths(parsed)).toEqual([]);
      expect(result.id).toBe(parsed.id);
    }
  });

  it('sums its usage from its items, and the key is charged exactly that once the meters converge', async () => {
    const costs = batch.results!.filter((r) => r.response).map((r) => (r.response!.body as any).usage.cost as number);
    expect(batch.usage!.cost).toBeCloseTo(costs.reduce((a, b) => a + b, 0), 12);
    expect(batch.usage!.prompt_tokens).toBeGreaterThan(0);
    await waitFor(async () => (await admin.apiKeys.get({ hash: keyHash })).data.usage > 0, { timeoutMs: 10_000, what: 'the key\'s usage to include the batch' });
    // Other describes run after this one: the key has spent only this batch so far.
    expect((await admin.apiKeys.get({ hash: keyHash })).data.usage).toBeCloseTo(batch.usage!.cost, 12);
  });

  it('finds each item\'s generation by its id', async () => {
    const id = batch.results![0]!.id!;
    const reply = await call(`/generation?id=${id}`);
    expect(reply.status).toBe(200);
    expect(reply.json.data).toMatchObject({ id, model: 'simulator/echo' });
  });

  it('pages its results by input line', async () => {
    const first = batchObject.parse((await call(`/batches/${batch.id}?results_limit=2`)).json);
    expect(first.results!.map((r) => r.custom_id)).toEqual(['first', 'broken']);
    expect(first.results_next).toBe(2);
    const second = batchObject.parse((await call(`/batches/${batch.id}?results_limit=2&results_after=2`)).json);
    expect(second.results!.map((r) => r.custom_id)).toEqual(['third', 'fails']);
    expect(second.results_next).toBeNull();
  });

  it('downloads every result as JSON Lines through its results file', async () => {
    const redirect = await fetch(`${gateway.baseUrl}/batches/${batch.id}/results`, { headers: { authorization: `Bearer ${userKey}` }, redirect: 'manual' });
    expect(redirect.status).toBe(303);
    // fetch drops the Authorization header on the redirect to another origin (the bucket).
    const download = await fetch(`${gateway.baseUrl}/batches/${batch.id}/results`, { headers: { authorization: `Bearer ${userKey}` } });
    expect(download.status).toBe(200);
    const lines = (await download.text()).trim().split('\n').map((line) => JSON.parse(line));
    expect(lines).toEqual(batch.results);
  });

  it('is listed newest first and deleted only once ended', async () => {
    const list = await call('/batches?limit=100');
    expect(list.status).toBe(200);
    expect(list.json).toMatchObject({ object: 'list', has_more: false });
    expect(list.json.data.map((b: Batch) => b.id)).toContain(batch.id);
    expect(list.json.data.every((b: Batch) => b.results === null)).toBe(true);
  });
});

describe('a Responses batch', () => {
  it('runs Responses items whose results @openrouter/sdk parses', async () => {
    const reply = await call('/batches', {
      body: { endpoint: '/v1/responses', requests: [{ custom_id: 'r1', body: { model: 'simulator/echo', input: 'hello' } }, { custom_id: 'r2', body: { model: 'simulator/echo-responses', input: 'again' } }] },
    });
    expect(reply.status).toBe(202);
    const batch = await finished(reply.json.id);
    expect(batch.status).toBe('completed');
    expect(batch.model).toBeNull();
    for (const result of batch.results!) {
      const parsed = OpenResponsesResult$inboundSchema.parse(result.response!.body);
      expect(unknownPaths(parsed)).toEqual([]);
      expect(parsed.status).toBe('completed');
    }
  }, 60_000);
});

describe('submitting', () => {
  const submit = (body: unknown, key?: string) => call('/batches', { body, ...(key ? { key } : {}) });

  it('refuses an item without custom_id, a repeated custom_id and an empty batch with a 400 naming the item', async () => {
    const missing = await submit({ endpoint: '/v1/chat/completions', requests: [{ custom_id: 'a', body: chat('x') }, { body: chat('y') }] });
    expect(missing.status).toBe(400);
    expect(missing.json.error.message).toMatch(/requests\.1.*custom_id/);
    const repeated = await submit({ endpoint: '/v1/chat/completions', requests: [{ custom_id: 'a', body: chat('x') }, { custom_id: 'a', body: chat('y') }] });
    expect(repeated.status).toBe(400);
    expect(repeated.json.error.message).toMatch(/used by an earlier item/);
    expect((await submit({ endpoint: '/v1/chat/completions', requests: [] })).status).toBe(400);
    expect((await submit({ endpoint: '/v1/chat/completions', requests: [{ custom_id: 'a', body: chat('x') }], completion_window: '48h' })).status).toBe(400);
  });

  it('refuses an item naming another model than the batch\'s', async () => {
    const reply = await submit({ endpoint: '/v1/chat/completions', model: 'simulator/echo', requests: [{ custom_id: 'a', body: { model: 'simulator/tool-call', ...chat('x') } }] });
    expect(reply.status).toBe(400);
    expect(reply.json.error.message).toMatch(/requests\.0\.body\.model/);
  });

  it('refuses a batch naming a model the catalog lacks, as a live request is refused, before storing anything', async () => {
    const reply = await submit({ endpoint: '/v1/chat/completions', model: 'nope/nothing', requests: [{ custom_id: 'a', body: chat('x') }] });
    expect(reply.status).toBe(400);
    expect(reply.json.error).toMatchObject({ message: 'Invalid model: "nope/nothing" is not a valid model ID', metadata: { param: 'model' } });
  });

  it('answers 403 to a management key, 401 without a key, and 404 for another workspace\'s batch', async () => {
    const body = { endpoint: '/v1/chat/completions', model: 'simulator/echo', requests: [{ custom_id: 'a', body: chat('x') }] };
    expect((await submit(body, ADMIN_KEY)).status).toBe(403);
    expect((await submit(body, 'sk-nonsense')).status).toBe(401);
    const mine = await submit(body);
    const workspace = await admin.workspaces.create({ createWorkspaceRequest: { name: 'elsewhere', slug: `elsewhere-${Date.now()}` } });
    const other = (await admin.apiKeys.create({ requestBody: { name: 'other ws', workspaceId: workspace.data.id } })).key;
    expect((await call(`/batches/${mine.json.id}`, { key: other })).status).toBe(404);
    expect((await call(`/batches/${mine.json.id}/cancel`, { method: 'POST', key: other })).status).toBe(404);
    expect((await call('/batches/batch_doesnotexist')).status).toBe(404);
    expect((await call('/batches/not-a-batch-id')).status).toBe(400);
    await finished(mine.json.id);
  });
});

describe('an uploaded input', () => {
  it('is uploaded in parts to presigned URLs, completed, and run as a batch with the batch\'s model', async () => {
    const lines = Array.from({ length: 50 }, (_, i) => JSON.stringify({ custom_id: `up${i}`, body: i === 7 ? { model: 'simulator/tool-call', ...chat('other model') } : chat(`uploaded ${i}`) }));
    const input = Buffer.from(lines.join('\n') + '\n');
    const started = await call('/batches/uploads', { body: { bytes: input.length } });
    expect(started.status).toBe(201);
    expect(started.json).toMatchObject({ object: 'batch.upload', status: 'uploading', bytes: input.length, parts: [{ part_number: 1, bytes: input.length }] });
    // Not usable before it is completed.
    const early = await call('/batches', { body: { endpoint: '/v1/chat/completions', model: 'simulator/echo', input_upload_id: started.json.id } });
    expect(early.status).toBe(400);
    const parts = [];
    for (const part of started.json.parts as Array<{ part_number: number; bytes: number; url: string }>) {
      const offset = (part.part_number - 1) * (started.json.part_bytes as number);
      const put = await fetch(part.url, { method: 'PUT', body: input.subarray(offset, offset + part.bytes) });
      expect(put.status).toBe(200);
      parts.push({ part_number: part.part_number, etag: put.headers.get('etag')! });
    }
    const completed = await call(`/batches/uploads/${started.json.id}/complete`, { body: { parts } });
    expect(completed.status).toBe(200);
    expect(completed.json).toMatchObject({ status: 'completed', bytes: input.length });
    const submitted = await call('/batches', { body: { endpoint: '/v1/chat/completions', model: 'simulator/echo', input_upload_id: started.json.id } });
    expect(submitted.status).toBe(202);
    // An upload is the input of one batch.
    expect((await call('/batches', { body: { endpoint: '/v1/chat/completions', input_upload_id: started.json.id } })).status).toBe(400);
    const batch = await finished(submitted.json.id);
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 50, completed: 49, failed: 1 });
    expect(batch.results![7]).toMatchObject({ custom_id: 'up7', error: { param: 'body.model', error_type: 'invalid_body' } });
    expect((batch.results![0]!.response!.body as any).model).toBe('simulator/echo');
  }, 60_000);

  it('fails an uploaded input without a request (blank lines, a byte order mark), as an empty requests list is refused', async () => {
    const input = Buffer.from('\uFEFF\r\n\n  \n');
    const started = await call('/batches/uploads', { body: { bytes: input.length } });
    const part = (started.json.parts as Array<{ url: string }>)[0]!;
    const put = await fetch(part.url, { method: 'PUT', body: input });
    expect((await call(`/batches/uploads/${started.json.id}/complete`, { body: { parts: [{ part_number: 1, etag: put.headers.get('etag')! }] } })).status).toBe(200);
    const submitted = await call('/batches', { body: { endpoint: '/v1/chat/completions', model: 'simulator/echo', input_upload_id: started.json.id } });
    expect(submitted.status).toBe(202);
    const batch = await finished(submitted.json.id);
    expect(batch.status).toBe('failed');
    expect(batch.error!.message).toBe('The input holds no request: every line of it is blank');
    expect(batch.request_counts).toEqual({ total: 0, completed: 0, failed: 0 });
  }, 60_000);

  it('refuses with a 400 a completion naming a part never uploaded, a wrong ETag or a part past the upload\'s count, and stays up', async () => {
    const input = Buffer.from(`${JSON.stringify({ custom_id: 'p1', body: chat('parts') })}\n`);
    const started = await call('/batches/uploads', { body: { bytes: input.length } });
    expect(started.status).toBe(201);
    // Never uploaded: the local S3 read the missing part's file without a handler, and its process died.
    const missing = await call(`/batches/uploads/${started.json.id}/complete`, { body: { parts: [{ part_number: 1, etag: '"x"' }] } });
    expect(missing.status).toBe(400);
    expect(missing.json.error).toMatchObject({ message: expect.stringContaining('The parts do not complete upload'), metadata: { param: 'parts' } });
    // Said in the API's terms, not S3's error names.
    expect(missing.json.error.message).toContain('a part was not uploaded, or its ETag is not the one its upload answered');
    expect(missing.json.error.message).not.toMatch(/InvalidPart|NoSuchUpload/);
    const past = await call(`/batches/uploads/${started.json.id}/complete`, { body: { parts: [{ part_number: 2, etag: '"x"' }] } });
    expect(past.status).toBe(400);
    expect(past.json.error.message).toContain('has parts 1 to 1');
    const part = started.json.parts[0] as { url: string };
    const put = await fetch(part.url, { method: 'PUT', body: input });
    expect(put.status).toBe(200);
    const wrongTag = await call(`/batches/uploads/${started.json.id}/complete`, { body: { parts: [{ part_number: 1, etag: '"0123456789abcdef0123456789abcdef"' }] } });
    expect(wrongTag.status).toBe(400);
    const completed = await call(`/batches/uploads/${started.json.id}/complete`, { body: { parts: [{ part_number: 1, etag: put.headers.get('etag')! }] } });
    expect(completed.status).toBe(200);
    expect(completed.json).toMatchObject({ status: 'completed', bytes: input.length });
    expect((await fetch(new URL('/health', gateway.baseUrl))).status).toBe(200);
  }, 60_000);

  it('refuses an input announced over 200 MB with a 413, before anything is sent', async () => {
    const reply = await call('/batches/uploads', { body: { bytes: 200 * 1024 * 1024 + 1 } });
    expect(reply.status).toBe(413);
    expect(reply.json.error.message).toMatch(/200 MB/);
    expect((await call('/batches/uploads', { body: { bytes: 200 * 1024 * 1024 } })).status).toBe(201);
    expect((await call('/batches', { body: { endpoint: '/v1/chat/completions', requests: [{ custom_id: 'a', body: chat('x') }], input_upload_id: 'upload_abc' } })).status).toBe(400);
  });

  it('refuses with a 413, and deletes, an upload that turned out over 200 MB (a client sending more than it announced)', async () => {
    const limit = 200 * 1024 * 1024;
    const started = await call('/batches/uploads', { body: { bytes: limit } });
    expect(started.status).toBe(201);
    const parts = [];
    // One part's buffer at a time (8 MiB) leaves this process; the gateway never sees the bytes.
    const line = Buffer.from(`${JSON.stringify({ custom_id: 'x', body: chat('y'.repeat(900)) })}\n`);
    for (const part of started.json.parts as Array<{ part_number: number; bytes: number; url: string }>) {
      const last = part.part_number === started.json.parts.length;
      // The local S3 does not check the signed length (S3 itself would refuse the last part): one byte more.
      const body = Buffer.alloc(part.bytes + (last ? 1 : 0), line);
      const put = await fetch(part.url, { method: 'PUT', body });
      expect(put.status).toBe(200);
      parts.push({ part_number: part.part_number, etag: put.headers.get('etag')! });
    }
    const completed = await call(`/batches/uploads/${started.json.id}/complete`, { body: { parts } });
    expect(completed.status).toBe(413);
    expect(completed.json.error.message).toMatch(`${limit + 1} were uploaded, and deleted`);
    // Gone from the local S3's files (s3rver keeps an object as <key>._S3rver_object).
    expect(existsSync(join(gateway.dataDir, 's3', 'gateway-batches', 'batches', 'uploads', started.json.id, 'input.jsonl._S3rver_object'))).toBe(false);
    expect((await call('/batches', { body: { endpoint: '/v1/chat/completions', input_upload_id: started.json.id } })).status).toBe(400);
  }, 120_000);
});

describe('npm run batch', () => {
  const cli = (args: string[], env: Record<string, string> = {}) => new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'bin/batch.ts', ...args], { env: { ...process.env, GATEWAY_URL: gateway.baseUrl, GATEWAY_API_KEY: userKey, ...env } }, (err, stdout, stderr) => {
      resolve({ code: err ? (err as { code?: number }).code ?? 1 : 0, stdout, stderr });
    });
  });

  it('uploads a file with a progress bar, follows the batch to its end and downloads its results', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'batch-cli-'));
    const file = join(dir, 'input.jsonl');
    writeFileSync(file, Array.from({ length: 20 }, (_, i) => JSON.stringify({ custom_id: `cli${i}`, body: chat(`from the command line ${i}`) })).join('\n') + '\n');
    const submitted = await cli(['submit', file, '--model', 'simulator/echo']);
    expect(submitted.stderr).toMatch(/uploading \[=+\] 100%/);
    expect(submitted.stderr).toMatch(/completed: 20 of 20 items \(20 completed, 0 failed\)/);
    expect(submitted.code).toBe(0);
    const [id, final] = submitted.stdout.trim().split('\n');
    expect(id).toMatch(/^batch_/);
    expect(JSON.parse(final!)).toMatchObject({ id, status: 'completed', request_counts: { total: 20, completed: 20, failed: 0 } });
    const out = join(dir, 'results.jsonl');
    expect((await cli(['results', id!, '--out', out])).code).toBe(0);
    const lines = readFileSync(out, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    expect(lines.map((line) => line.custom_id)).toEqual(Array.from({ length: 20 }, (_, i) => `cli${i}`));
    expect((await cli(['list'])).stdout).toContain(id);
  }, 60_000);

  it('says what is wrong instead of failing obscurely', async () => {
    const noKey = await cli(['list'], { GATEWAY_API_KEY: '' });
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toMatch(/GATEWAY_API_KEY/);
    const missing = await cli(['status', 'batch_nothere']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/404 Batch batch_nothere not found/);
  }, 30_000);
});

describe('the batch\'s maximum cost', () => {
  it('is covered before any item runs: a key that cannot pay for it gets a 402 naming its limit (inline requests) or a failed batch saying so (an uploaded input, read later); one that can gets its limit back once it ended', async () => {
    // Each item may cost its prompt and up to 16,384 output tokens ($2 per million): about $0.033.
    const small = await admin.apiKeys.create({ requestBody: { name: 'e2e batch cover small', limit: 0.05 } });
    const requests = Array.from({ length: 3 }, (_, i) => ({ custom_id: `m${i}`, body: chat(`cover ${i}`) }));
    const refused = await call('/batches', { key: small.key, body: { endpoint: '/v1/chat/completions', model: 'simulator/echo', requests } });
    expect(refused.status).toBe(402);
    const named = /^This batch can cost up to \$0\.0\d+ \(every item at its most: set max_tokens to lower it\)\. The key's total limit of \$0\.05 has \$0\.05 left\. To run it, raise the key's limit\.$/;
    expect(refused.json.error.message).toMatch(named);
    expect(refused.json.error.metadata).toMatchObject({ reason: 'key_limit', limit: '0.05', remaining: '0.05' });
    // The same requests uploaded: their cost is known once the input is read, when the batch is validated.
    const input = Buffer.from(requests.map((request) => JSON.stringify(request)).join('\n') + '\n');
    const started = await call('/batches/uploads', { key: small.key, body: { bytes: input.length } });
    const put = await fetch((started.json.parts as Array<{ url: string }>)[0]!.url, { method: 'PUT', body: input });
    expect((await call(`/batches/uploads/${started.json.id}/complete`, { key: small.key, body: { parts: [{ part_number: 1, etag: put.headers.get('etag')! }] } })).status).toBe(200);
    const uploaded = await call('/batches', { key: small.key, body: { endpoint: '/v1/chat/completions', model: 'simulator/echo', input_upload_id: started.json.id } });
    expect(uploaded.status).toBe(202);
    const failed = await finished(uploaded.json.id, small.key);
    expect(failed.status).toBe('failed');
    expect(failed.error!.message).toMatch(named);
    expect(failed.request_counts).toMatchObject({ completed: 0, failed: 0 });
    // With max_tokens the maximum is small enough (3 × 4,000 tokens: $0.024), and the batch runs.
    const bounded = await call('/batches', { key: small.key, body: { endpoint: '/v1/chat/completions', model: 'simulator/echo', requests: requests.map((request) => ({ ...request, body: { ...request.body, max_tokens: 4000 } })) } });
    const done = await finished(bounded.json.id, small.key);
    expect(done.status).toBe('completed');
    // What its lease held and did not spend is back: a live request that may cost $0.033 fits again (beside a
    // lease still held it would not: $0.05 − $0.024 leaves $0.026).
    await waitFor(async () => (await call('/chat/completions', { key: small.key, body: { model: 'simulator/echo', max_tokens: 16_384, ...chat('after the batch') } })).status === 200,
      { timeoutMs: 10_000, what: 'the batch\'s lease to be given back' });
  }, 60_000);
  it('refuses an uploaded input with a 402 when nothing is left to pay for it, and its upload stays usable', async () => {
    const spent = await admin.apiKeys.create({ requestBody: { name: 'e2e batch nothing left', limit: 0 } });
    const input = Buffer.from(`${JSON.stringify({ custom_id: 'n0', body: chat('nothing left') })}\n`);
    const started = await call('/batches/uploads', { key: spent.key, body: { bytes: input.length } });
    const put = await fetch((started.json.parts as Array<{ url: string }>)[0]!.url, { method: 'PUT', body: input });
    expect((await call(`/batches/uploads/${started.json.id}/complete`, { key: spent.key, body: { parts: [{ part_number: 1, etag: put.headers.get('etag')! }] } })).status).toBe(200);
    const body = { endpoint: '/v1/chat/completions', model: 'simulator/echo', input_upload_id: started.json.id };
    const refused = await call('/batches', { key: spent.key, body });
    expect(refused.status).toBe(402);
    expect(refused.json.error.message).toBe("This batch cannot run: nothing is left to pay for it. The key's total limit of $0 has $0 left. To run it, raise the key's limit.");
    // The refusal did not use the upload up: a key of the same workspace that can pay submits it.
    const accepted = await call('/batches', { body });
    expect(accepted.status).toBe(202);
    expect((await finished(accepted.json.id)).request_counts).toEqual({ total: 1, completed: 1, failed: 0 });
  }, 60_000);
});

describe('cancelling and deleting', () => {
  it('cancels a running batch: no item starts after it, items that ran are kept, and it can then be deleted', async () => {
    // Items that time out upstream (1.5 s each) keep the batch running long enough to cancel it.
    const requests = Array.from({ length: 40 }, (_, i) => ({ custom_id: `t${i}`, body: { model: 'simulator/timeout', ...chat(`item ${i}`) } }));
    const reply = await call('/batches', { body: { endpoint: '/v1/chat/completions', requests } });
    expect(reply.status).toBe(202);
    const id = reply.json.id as string;
    await waitFor(async () => (await call(`/batches/${id}`)).json.status === 'in_progress', { timeoutMs: 20_000, what: 'the batch to start' });
    expect((await call(`/batches/${id}`, { method: 'DELETE' })).status).toBe(409);
    const cancelled = await call(`/batches/${id}/cancel`, { method: 'POST' });
    expect(cancelled.status).toBe(200);
    expect(['cancelling', 'cancelled']).toContain(cancelled.json.status);
    // A second cancel is answered, not refused.
    expect((await call(`/batches/${id}/cancel`, { method: 'POST' })).status).toBe(200);
    // It stays cancelling while the items that were running may still end (their request deadline, 4 s).
    expect((await call(`/batches/${id}`)).json.status).toBe('cancelling');
    const ended = await finished(id);
    expect(ended.status).toBe('cancelled');
    // Once cancelled nothing moves any more, and its results file holds every result.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const settled = batchObject.parse((await call(`/batches/${id}?results_limit=1000`)).json);
    const counted = settled.request_counts.completed + settled.request_counts.failed;
    expect(counted).toBe(ended.request_counts.completed + ended.request_counts.failed);
    expect(settled.results).toHaveLength(counted);
    expect(counted).toBeLessThan(40);
    const download = await fetch(`${gateway.baseUrl}/batches/${id}/results`, { headers: { authorization: `Bearer ${userKey}` }, redirect: 'manual' });
    expect(download.status).toBe(303);
    const file = await (await fetch(download.headers.get('location')!)).text();
    expect(file.split('\n').filter(Boolean).map((line) => JSON.parse(line).custom_id).sort()).toEqual(settled.results!.map((result) => result.custom_id).sort());
    const deleted = await call(`/batches/${id}`, { method: 'DELETE' });
    expect(deleted.json).toEqual({ id, object: 'batch', deleted: true });
    expect((await call(`/batches/${id}`)).status).toBe(404);
  }, 150_000);
});

describe('expiry', () => {
  it('expires a batch still running when its window passes', async () => {
    const short = await startGatewayProcess({ GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_UPSTREAM_TIMEOUT_MS: '1500', GATEWAY_REQUEST_TIMEOUT_MS: '3000', GATEWAY_BATCH_WINDOW_SECONDS: '3', GATEWAY_BATCH_ITEM_CONCURRENCY: '1' });
    try {
      const sdk = new OpenRouter({ apiKey: ADMIN_KEY, serverURL: short.baseUrl, retryConfig: { strategy: 'none' } });
      const key = (await sdk.apiKeys.create({ requestBody: { name: 'expiry' } })).key;
      const requests = Array.from({ length: 20 }, (_, i) => ({ custom_id: `t${i}`, body: { model: 'simulator/timeout', ...chat(`item ${i}`) } }));
      const response = await fetch(`${short.baseUrl}/batches`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ endpoint: '/v1/chat/completions', requests }) });
      expect(response.status).toBe(202);
      const { id, expires_at: expiresAt, created_at: createdAt } = await response.json() as Batch;
      expect(expiresAt! - createdAt).toBe(3);
      let batch: Batch | undefined;
      await waitFor(async () => {
        batch = batchObject.parse(await (await fetch(`${short.baseUrl}/batches/${id}`, { headers: { authorization: `Bearer ${key}` } })).json());
        return batch.status === 'expired';
      }, { timeoutMs: 20_000, what: 'the batch to expire' });
      expect(batch!.error!.message).toMatch(/completion window/);
      const counted = batch!.request_counts.completed + batch!.request_counts.failed;
      expect(counted).toBeLessThan(20);
      // Its results file holds what was done before it expired.
      const download = await fetch(`${short.baseUrl}/batches/${id}/results`, { headers: { authorization: `Bearer ${key}` }, redirect: 'manual' });
      expect(download.status).toBe(303);
      expect((await (await fetch(download.headers.get('location')!)).text()).split('\n').filter(Boolean)).toHaveLength(counted);
    } finally {
      await short.stop();
    }
  }, 150_000);
});
