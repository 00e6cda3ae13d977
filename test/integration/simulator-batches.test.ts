// The simulator's provider batch APIs, driven by the providers' own SDKs: OpenAI's files and batches
// (upload, create, poll, output and error files, cancel) and Anthropic's message batches (create, poll,
// results, cancel). A batch stays in progress for the simulator's batch delay, then every request is
// answered as the live simulator answers it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import OpenAI, { toFile } from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startSimulator, type Simulator } from '../../bin/simulator/server.js';
import { parseMultipart } from '../../bin/simulator/batches.js';
import { simulatedVector } from '../../bin/simulator/embeddings.js';
import { waitFor } from '../support/wait.js';

const DELAY_MS = 300;
let sim: Simulator;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, batchDelayMs: DELAY_MS });
  openai = new OpenAI({ apiKey: 'sk-sim', baseURL: `${sim.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: 'sk-ant-sim', baseURL: sim.url, maxRetries: 0 });
});

afterAll(async () => {
  await sim.close();
});

const jsonl = (lines: unknown[]) => `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;

describe('OpenAI Batch API', () => {
  it('runs a chat batch: in progress for the delay, then an output file of the successes and an error file of the failures', async () => {
    const input = jsonl([
      { custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: { model: 'echo', messages: [{ role: 'user', content: 'first' }] } },
      { custom_id: 'b', method: 'POST', url: '/v1/chat/completions', body: { model: 'error-500', messages: [{ role: 'user', content: 'x' }] } },
      { custom_id: 'c', method: 'POST', url: '/v1/chat/completions', body: { model: 'echo', messages: [{ role: 'user', content: 'third' }] } },
    ]);
    const file = await openai.files.create({ file: await toFile(Buffer.from(input), 'input.jsonl'), purpose: 'batch' });
    expect(file).toMatchObject({ object: 'file', purpose: 'batch', bytes: Buffer.byteLength(input), filename: 'input.jsonl' });
    expect(Buffer.from(await (await openai.files.content(file.id)).arrayBuffer()).toString()).toBe(input);

    const submitted = Date.now();
    const created = await openai.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { job: 't' } });
    expect(created).toMatchObject({ object: 'batch', status: 'in_progress', request_counts: { total: 3, completed: 0, failed: 0 }, metadata: { job: 't' } });
    expect((await openai.batches.retrieve(created.id)).status).toBe('in_progress');

    let batch = created;
    await waitFor(async () => (batch = await openai.batches.retrieve(created.id)).status === 'completed', { timeoutMs: 5000, what: 'the batch to complete' });
    // Never before the delay has passed.
    expect(Date.now() - submitted).toBeGreaterThanOrEqual(DELAY_MS);
    expect(batch.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });
    const output = (await (await openai.files.content(batch.output_file_id!)).text()).trim().split('\n').map((line) => JSON.parse(line));
    expect(output.map((line) => [line.custom_id, line.response.status_code, line.response.body.choices[0].message.content])).toEqual([['a', 200, 'first'], ['c', 200, 'third']]);
    expect(output[0].id).toMatch(/^batch_req_/);
    const errors = (await (await openai.files.content(batch.error_file_id!)).text()).trim().split('\n').map((line) => JSON.parse(line));
    expect(errors).toEqual([expect.objectContaining({ custom_id: 'b', response: expect.objectContaining({ status_code: 500 }) })]);
  });

  it('runs an embeddings batch, and cancels a batch before it ends (cancelling, then cancelled with no output)', async () => {
    const file = await openai.files.create({ file: await toFile(Buffer.from(jsonl([{ custom_id: 'e', method: 'POST', url: '/v1/embeddings', body: { model: 'embed', input: 'vector me' } }])), 'e.jsonl'), purpose: 'batch' });
    const created = await openai.batches.create({ input_file_id: file.id, endpoint: '/v1/embeddings', completion_window: '24h' });
    const cancelled = await openai.batches.create({ input_file_id: file.id, endpoint: '/v1/embeddings', completion_window: '24h' });
    expect((await openai.batches.cancel(cancelled.id)).status).toBe('cancelling');
    const ended = await openai.batches.retrieve(cancelled.id);
    expect(ended).toMatchObject({ status: 'cancelled', output_file_id: null });
    // Each request it never ran is a line of its error file, without a response.
    expect(JSON.parse(await (await openai.files.content(ended.error_file_id!)).text())).toMatchObject({ custom_id: 'e', response: null, error: { code: 'batch_cancelled' } });
    let batch = created;
    await waitFor(async () => (batch = await openai.batches.retrieve(created.id)).status === 'completed', { timeoutMs: 5000, what: 'the batch to complete' });
    const line = JSON.parse(await (await openai.files.content(batch.output_file_id!)).text());
    expect(line.response.body.data[0].embedding).toEqual(simulatedVector('vector me'));
  });

  it('refuses what the real API refuses: an unknown file, a wrong endpoint or window', async () => {
    await expect(openai.batches.create({ input_file_id: 'file-nope', endpoint: '/v1/chat/completions', completion_window: '24h' })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const file = await openai.files.create({ file: await toFile(Buffer.from('{}\n'), 'x.jsonl'), purpose: 'batch' });
    await expect(openai.batches.create({ input_file_id: file.id, endpoint: '/v1/completions' as '/v1/chat/completions', completion_window: '24h' })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await expect(openai.batches.retrieve('batch_nope')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});

describe('Anthropic Message Batches', () => {
  it('runs a batch: in progress, then ended with results per custom_id', async () => {
    const created = await anthropic.messages.batches.create({
      requests: [
        { custom_id: 'one', params: { model: 'echo', max_tokens: 32, messages: [{ role: 'user', content: 'hello batch' }] } },
        { custom_id: 'two', params: { model: 'error-429', max_tokens: 32, messages: [{ role: 'user', content: 'x' }] } },
      ],
    });
    expect(created).toMatchObject({ type: 'message_batch', processing_status: 'in_progress', request_counts: { processing: 2 }, results_url: null });
    let batch = created;
    await waitFor(async () => (batch = await anthropic.messages.batches.retrieve(created.id)).processing_status === 'ended', { timeoutMs: 5000, what: 'the batch to end' });
    expect(batch.request_counts).toEqual({ processing: 0, succeeded: 1, errored: 1, canceled: 0, expired: 0 });
    expect(batch.results_url).toBe(`${sim.url}/v1/messages/batches/${created.id}/results`);
    const results: Array<{ custom_id: string; result: any }> = [];
    for await (const result of await anthropic.messages.batches.results(created.id)) results.push(result);
    expect(results.map((r) => [r.custom_id, r.result.type])).toEqual([['one', 'succeeded'], ['two', 'errored']]);
    expect(results[0]!.result.message.content).toEqual([{ type: 'text', text: 'hello batch' }]);
    expect(results[1]!.result.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
  });

  it('cancels: canceling, then ended with every request canceled', async () => {
    const created = await anthropic.messages.batches.create({ requests: [{ custom_id: 'c1', params: { model: 'echo', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] } }] });
    expect((await anthropic.messages.batches.cancel(created.id)).processing_status).toBe('canceling');
    const ended = await anthropic.messages.batches.retrieve(created.id);
    expect(ended).toMatchObject({ processing_status: 'ended', request_counts: { canceled: 1, succeeded: 0 } });
    const results: Array<{ result: { type: string } }> = [];
    for await (const result of await anthropic.messages.batches.results(created.id)) results.push(result);
    expect(results.map((r) => r.result.type)).toEqual(['canceled']);
  });

  it('refuses a bad custom_id and an unknown batch', async () => {
    await expect(anthropic.messages.batches.create({ requests: [{ custom_id: 'has space', params: { model: 'echo', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] } }] })).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    await expect(anthropic.messages.batches.retrieve('msgbatch_nope')).rejects.toBeInstanceOf(Anthropic.NotFoundError);
  });
});

describe('parseMultipart', () => {
  it('reads text and file fields, the file\'s bytes untouched', () => {
    const boundary = 'XyZ';
    const bytes = Buffer.from([0x7b, 0x0d, 0x0a, 0x00, 0xff, 0x7d]);
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="in.jsonl"\r\nContent-Type: application/octet-stream\r\n\r\n`),
      bytes,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const fields = parseMultipart(body, `multipart/form-data; boundary=${boundary}`)!;
    expect(fields.get('purpose')!.value.toString()).toBe('batch');
    expect(fields.get('file')).toEqual({ value: bytes, filename: 'in.jsonl' });
    expect(parseMultipart(body, 'application/json')).toBeUndefined();
  });
});
