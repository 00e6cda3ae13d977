// POST /embeddings as `npm start` serves it, driven by the `openai` client (which asks for base64 and decodes
// it) and @openrouter/sdk (embeddings.generate, embeddings.listModels), through the OpenAI and the Gemini
// wire formats of the simulator; every request is charged; and a `/v1/embeddings` batch.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import OpenAI, { BadRequestError } from 'openai';
import { OpenRouter } from '@openrouter/sdk';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';
import { unknownPaths } from '../support/sdk-shapes.js';
import { waitFor } from '../support/wait.js';
import { resultsById, runInlineBatch } from '../support/batches.js';
import { generateKeyText } from '../../lambdas/keys/key-format.js';
import { simulatedVector } from '../../bin/simulator/embeddings.js';

const ADMIN_KEY = generateKeyText();
let gateway: GatewayProcess;
let admin: OpenRouter;
let userKey: string;
let openai: OpenAI;
let sdk: OpenRouter;

beforeAll(async () => {
  gateway = await startGatewayProcess({ GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_UPSTREAM_TIMEOUT_MS: '1500' });
  admin = new OpenRouter({ apiKey: ADMIN_KEY, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
  const created = await admin.apiKeys.create({ requestBody: { name: 'e2e embeddings' } });
  userKey = created.key;
  openai = new OpenAI({ apiKey: userKey, baseURL: gateway.baseUrl, maxRetries: 0 });
  sdk = new OpenRouter({ apiKey: userKey, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
}, 150_000);

afterAll(async () => {
  await gateway?.stop();
});

/** The simulator's vector for a text, as float32 (what base64 carries). */
const expected = (text: string, dimensions?: number) => Array.from(new Float32Array(simulatedVector(text, dimensions)));

describe('openai client', () => {
  it('embeddings.create: base64 (the client\'s default), decoded to the simulator\'s vectors, in input order, with cost', async () => {
    const reply = await openai.embeddings.create({ model: 'simulator/embed', input: ['first text', 'second text'] });
    expect(reply.object).toBe('list');
    expect(reply.data.map((item) => item.index)).toEqual([0, 1]);
    expect(reply.data[0]!.embedding).toEqual(expected('first text'));
    expect(reply.data[1]!.embedding).toEqual(expected('second text'));
    expect(reply.usage.prompt_tokens).toBeGreaterThan(0);
    expect((reply.usage as unknown as { cost: number }).cost).toBeGreaterThan(0);
    expect((reply as unknown as { id: string }).id).toMatch(/^gen-/);
  });

  it('embeddings.create with float and dimensions, through the Gemini wire format', async () => {
    const reply = await openai.embeddings.create({ model: 'simulator/embed-gemini', input: 'one text', dimensions: 32, encoding_format: 'float' });
    expect(reply.data).toHaveLength(1);
    expect(reply.data[0]!.embedding).toHaveLength(32);
    expect(reply.data[0]!.embedding.map((value) => Math.fround(value))).toEqual(expected('one text', 32));
    // Gemini counts no tokens: the record says its usage is the gateway's estimate (ceil(8 / 4) tokens).
    const id = (reply as unknown as { id: string }).id;
    let record: any;
    await waitFor(async () => {
      const found = await fetch(`${gateway.baseUrl}/generation?id=${id}`, { headers: { authorization: `Bearer ${userKey}` } });
      record = found.status === 200 ? ((await found.json()) as { data: unknown }).data : undefined;
      return record !== undefined;
    }, { timeoutMs: 5_000, what: `generation ${id}` });
    expect(record).toMatchObject({ id, model: 'simulator/embed-gemini', usage_estimated: true, tokens_prompt: 2, tokens_completion: 0, status: 'completed' });
  });

  it('raises its typed errors: an embeddings request to a chat model and the reverse (400), token arrays (400)', async () => {
    const chatModel = await openai.embeddings.create({ model: 'simulator/echo', input: 'x' }).catch((err: unknown) => err);
    expect(chatModel).toBeInstanceOf(BadRequestError);
    expect((chatModel as BadRequestError).message).toMatch(/not an embeddings model/);
    await expect(openai.embeddings.create({ model: 'simulator/embed', input: [[1, 2, 3]] })).rejects.toBeInstanceOf(BadRequestError);
    const chat = await openai.chat.completions.create({ model: 'simulator/embed', messages: [{ role: 'user', content: 'x' }] }).catch((err: unknown) => err);
    expect(chat).toBeInstanceOf(BadRequestError);
    expect((chat as BadRequestError).message).toMatch(/is an embeddings model; call POST \/embeddings/);
  });
});

describe('@openrouter/sdk', () => {
  it('embeddings.generate parses, usage and cost included', async () => {
    const reply = await sdk.embeddings.generate({ requestBody: { model: 'simulator/embed', input: ['alpha', 'beta', 'alpha'] } });
    expect(typeof reply).toBe('object');
    const body = reply as Exclude<typeof reply, string>;
    expect(unknownPaths(body)).toEqual([]);
    // Floats when no encoding is asked for: the simulator's vectors exactly.
    expect(body.data.map((item) => item.embedding)).toEqual([simulatedVector('alpha'), simulatedVector('beta'), simulatedVector('alpha')]);
    expect(body.usage).toMatchObject({ promptTokens: expect.any(Number), totalTokens: expect.any(Number), cost: expect.any(Number) });
  });

  it('embeddings.listModels lists the embeddings models only', async () => {
    const listed = await sdk.embeddings.listModels();
    expect(unknownPaths(listed)).toEqual([]);
    const ids = listed.result.data.map((model) => model.id).sort();
    expect(ids).toEqual(['simulator/embed', 'simulator/embed-gemini']);
    expect(listed.result.data[0]!.architecture.outputModalities).toContain('embeddings');
    // GET /models still lists every model, embeddings ones included.
    expect((await sdk.models.list()).result.data.map((model) => model.id)).toEqual(expect.arrayContaining(['simulator/echo', 'simulator/embed']));
  });

  it('charges the key exactly what the replies report', async () => {
    const key = new OpenRouter({ apiKey: ADMIN_KEY, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
    const created = await key.apiKeys.create({ requestBody: { name: 'e2e embeddings charge' } });
    const client = new OpenAI({ apiKey: created.key, baseURL: gateway.baseUrl, maxRetries: 0 });
    let reported = 0;
    for (const input of ['a short one', ['two', 'texts'], 'x'.repeat(500)]) {
      const reply = await client.embeddings.create({ model: 'simulator/embed', input });
      reported += (reply.usage as unknown as { cost: number }).cost;
    }
    await waitFor(async () => Math.abs((await key.apiKeys.get({ hash: created.data.hash })).data.usage - reported) < 1e-12, { timeoutMs: 10_000, what: 'the key to be charged the replies\' cost' });
  });
});

describe('a /v1/embeddings batch', () => {
  it('runs embeddings items; each result is an embeddings reply', async () => {
    const batch = await runInlineBatch(gateway.baseUrl, userKey, {
      endpoint: '/v1/embeddings',
      model: 'simulator/embed',
      requests: [
        { custom_id: 'e-1', body: { input: 'batch text one' } },
        { custom_id: 'e-2', body: { input: ['two', 'three'], dimensions: 4 } },
        { custom_id: 'e-bad', body: { input: [7, 8] } },
      ],
    });
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });
    const byId = resultsById(batch);
    expect(byId['e-1'].response.body).toMatchObject({ object: 'list', data: [{ object: 'embedding', index: 0, embedding: simulatedVector('batch text one') }] });
    expect(byId['e-2'].response.body.data.map((item: { embedding: number[] }) => item.embedding)).toEqual([simulatedVector('two', 4), simulatedVector('three', 4)]);
    expect(byId['e-bad']).toMatchObject({ response: null, error: { error_type: 'invalid_body', message: expect.stringMatching(/token arrays/) } });
    expect(batch.usage.cost).toBeGreaterThan(0);
  }, 40_000);
});
