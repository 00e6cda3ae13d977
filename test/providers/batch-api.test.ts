// The providers' batch services through the gateway's clients (batch-api.ts), against the simulator's
// OpenAI Batch API and Anthropic Message Batches over HTTP: what is submitted in which wire format, and how
// each answer comes back (a result, the provider's error, or not run).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startSimulator, type Simulator } from '../../bin/simulator/server.js';
import { createAnthropicBatchApi, createOpenAIBatchApi, type ProviderBatchApi } from '../../lambdas/providers/batch-api.js';
import { nodeFetch } from '../../lambdas/providers/http-client.js';
import { ProviderError } from '../../lambdas/providers/provider-error.js';
import type { GenerationRequest } from '../../lambdas/providers/types.js';
import { simulatedVector } from '../../bin/simulator/embeddings.js';
import { waitFor } from '../support/wait.js';

let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, batchDelayMs: 200 });
});
afterAll(async () => {
  await sim.close();
});

const chat = (model: string, text: string): GenerationRequest => ({ model, messages: [{ role: 'user', content: [{ type: 'text', text }] }], max_output_tokens: 64 });

async function ended(api: ProviderBatchApi, id: string): Promise<void> {
  await waitFor(async () => (await api.status(id)).ended, { timeoutMs: 5000, what: `provider batch ${id} to end` });
}

describe.each([
  ['openai', () => createOpenAIBatchApi({ provider: 'simulator', baseURL: `${sim.url}/v1`, apiKey: 'sk', fetch: nodeFetch })],
  ['anthropic', () => createAnthropicBatchApi({ provider: 'simulator', baseURL: `${sim.url}/v1`, apiKey: 'sk', fetch: nodeFetch })],
] as const)('%s batch API', (kind, make) => {
  it('submits, reports running then ended, and maps each answer back by custom id', async () => {
    const api = make();
    expect(api.kind).toBe(kind);
    const id = await api.submit([
      { customId: 'line-1', request: chat('echo', 'first answer') },
      { customId: 'line-2', request: chat('error-500', 'x') },
      { customId: 'line-3', request: chat('echo', 'third answer') },
    ], { gateway_batch: 'batch_test' });
    expect(await api.status(id)).toMatchObject({ ended: false });
    await ended(api, id);
    const outcomes = await api.results(id);
    expect(outcomes.get('line-1')).toMatchObject({ kind: 'result', result: { text: 'first answer', finish_reason: 'stop', usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) } } });
    expect(outcomes.get('line-3')).toMatchObject({ kind: 'result', result: { text: 'third answer' } });
    const failed = outcomes.get('line-2');
    expect(failed?.kind).toBe('error');
    expect((failed as { error: ProviderError }).error).toBeInstanceOf(ProviderError);
    expect((failed as { error: ProviderError }).error.status).toBe(500);
  });

  it('cancels: the requests it never ran come back as not run', async () => {
    const api = make();
    const id = await api.submit([{ customId: 'line-1', request: chat('echo', 'never') }], {});
    await api.cancel(id);
    await ended(api, id);
    const outcome = (await api.results(id)).get('line-1');
    // OpenAI's error file and Anthropic's results both say it was cancelled before it ran.
    expect(outcome).toEqual({ kind: 'not_run', reason: 'cancelled' });
  });
});

it('runs embeddings through OpenAI\'s batch API', async () => {
  const api = createOpenAIBatchApi({ provider: 'simulator', baseURL: `${sim.url}/v1`, fetch: nodeFetch });
  const request: GenerationRequest = { model: 'embed', messages: [], embedding: { input: ['one', 'two'], dimensions: 4 } };
  const id = await api.submit([{ customId: 'e1', request }], {});
  await ended(api, id);
  expect((await api.results(id)).get('e1')).toMatchObject({ kind: 'result', result: { embeddings: [simulatedVector('one', 4), simulatedVector('two', 4)], usage: { input_tokens: 2 } } });
});

it('sends the credentials with every call, the multipart upload included', async () => {
  const seen: Array<{ url: string; headers: Record<string, string> }> = [];
  const recording: typeof nodeFetch = (input, init) => {
    seen.push({ url: String(input), headers: { ...init?.headers } });
    return nodeFetch(input, init);
  };
  const openai = createOpenAIBatchApi({ provider: 'simulator', baseURL: `${sim.url}/v1`, apiKey: 'sk-openai', fetch: recording });
  const id = await openai.submit([{ customId: 'a', request: chat('echo', 'x') }], {});
  await openai.status(id);
  expect(seen.map((call) => new URL(call.url).pathname)).toEqual(['/v1/files', '/v1/batches', `/v1/batches/${id}`]);
  for (const call of seen) expect(call.headers.authorization).toBe('Bearer sk-openai');
  expect(seen[0]!.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
  seen.length = 0;
  const anthropic = createAnthropicBatchApi({ provider: 'simulator', baseURL: `${sim.url}/v1`, apiKey: 'sk-ant', fetch: recording });
  await anthropic.status(await anthropic.submit([{ customId: 'a', request: chat('echo', 'x') }], {}));
  for (const call of seen) expect(call.headers).toMatchObject({ 'x-api-key': 'sk-ant', 'anthropic-version': expect.any(String) });
});

it('finds an OpenAI batch submitted earlier by its gateway batch id (a retry does not submit twice); Anthropic keeps nothing to find it by', async () => {
  const openai = createOpenAIBatchApi({ provider: 'simulator', baseURL: `${sim.url}/v1`, fetch: nodeFetch });
  const id = await openai.submit([{ customId: 'a', request: chat('echo', 'x') }], { gateway_batch_id: 'batch_find_me' });
  await openai.submit([{ customId: 'a', request: chat('echo', 'y') }], { gateway_batch_id: 'batch_other' });
  expect(await openai.find('batch_find_me')).toBe(id);
  expect(await openai.find('batch_never')).toBeUndefined();
  const anthropic = createAnthropicBatchApi({ provider: 'simulator', baseURL: `${sim.url}/v1`, fetch: nodeFetch });
  expect(await anthropic.find('batch_find_me')).toBeUndefined();
});
