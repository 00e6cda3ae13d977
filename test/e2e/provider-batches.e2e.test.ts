// Batches run at a provider's own batch service, as `npm start` runs them against its simulator: OpenAI's
// Batch API (simulator/echo-batch), Anthropic's Message Batches (simulator/echo-anthropic-batch) and Bedrock
// batch inference (simulator/echo-bedrock-batch, its input and output in npm start's S3). Each item
// is charged once, at half the live price; the batch's maximum cost is covered before it is submitted; a
// cancelled batch gives back what it held.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OpenRouter } from '@openrouter/sdk';
import { ChatResult$inboundSchema } from '@openrouter/sdk/models/chatresult';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';
import { resultsById, runInlineBatch } from '../support/batches.js';
import { waitFor } from '../support/wait.js';
import { generateKeyText } from '../../lambdas/keys/key-format.js';

const ADMIN_KEY = generateKeyText();
let gateway: GatewayProcess;
let admin: OpenRouter;

beforeAll(async () => {
  // A provider batch takes 1.5 s at the simulator.
  gateway = await startGatewayProcess({ GATEWAY_ADMIN_KEY: ADMIN_KEY, SIMULATOR_BATCH_DELAY_MS: '1500' });
  admin = new OpenRouter({ apiKey: ADMIN_KEY, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
}, 150_000);

afterAll(async () => {
  await gateway?.stop();
});

async function newKey(name: string, limit?: number): Promise<{ key: string; hash: string }> {
  const created = await admin.apiKeys.create({ requestBody: { name, ...(limit !== undefined ? { limit } : {}) } });
  return { key: created.key, hash: created.data.hash };
}

const usageOf = async (hash: string) => (await admin.apiKeys.get({ hash })).data.usage;

/** The cost of the same request sent live. */
async function liveCost(key: string, body: Record<string, unknown>, model = 'simulator/echo-batch'): Promise<number> {
  const live = await fetch(`${gateway.baseUrl}/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model, ...body }),
  });
  return ((await live.json()) as { usage: { cost: number } }).usage.cost;
}

describe('a batch at OpenAI\'s Batch API', () => {
  it('completes with every answer, each charged once at half the live price', async () => {
    const { key, hash } = await newKey('provider batch openai');
    const texts = ['first provider item', 'second provider item', 'third provider item'];
    const batch = await runInlineBatch(gateway.baseUrl, key, {
      endpoint: '/v1/chat/completions',
      model: 'simulator/echo-batch',
      requests: [
        ...texts.map((text, i) => ({ custom_id: `c${i}`, body: { messages: [{ role: 'user', content: text }] } })),
        { custom_id: 'bad', body: { messages: 'not a list' } },
      ],
    });
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 4, completed: 3, failed: 1 });
    const byId = resultsById(batch);
    for (const [i, text] of texts.entries()) {
      const result = byId[`c${i}`];
      expect(result.response.status_code).toBe(200);
      const parsed = ChatResult$inboundSchema.parse(result.response.body);
      expect(parsed.choices[0]!.message.content).toBe(text);
      expect(result.id).toMatch(/^gen-/);
    }
    // The same request live costs twice as much.
    const live = await liveCost(key, { messages: [{ role: 'user', content: texts[0] }] });
    const batchCost = (byId.c0.response.body as { usage: { cost: number } }).usage.cost;
    expect(batchCost).toBeCloseTo(live / 2, 12);
    // The key is charged what the batch reports (and the live request), once the meters have the records.
    await waitFor(async () => Math.abs((await usageOf(hash)) - (batch.usage.cost + live)) < 1e-12, { timeoutMs: 10_000, what: 'the key to be charged the batch and the live request' });
  }, 60_000);
});

describe('a batch at Anthropic\'s Message Batches', () => {
  it('completes with Anthropic messages for /v1/messages items', async () => {
    const { key } = await newKey('provider batch anthropic');
    const batch = await runInlineBatch(gateway.baseUrl, key, {
      endpoint: '/v1/messages',
      model: 'simulator/echo-anthropic-batch',
      requests: [
        { custom_id: 'm1', body: { max_tokens: 64, messages: [{ role: 'user', content: 'anthropic batch one' }] } },
        { custom_id: 'm2', body: { max_tokens: 64, system: 'Echo.', messages: [{ role: 'user', content: 'anthropic batch two' }] } },
      ],
    });
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
    const byId = resultsById(batch);
    expect(byId.m1.response.body).toMatchObject({ type: 'message', content: [{ type: 'text', text: 'anthropic batch one' }], stop_reason: 'end_turn' });
    expect(byId.m2.response.body).toMatchObject({ content: [{ type: 'text', text: 'anthropic batch two' }] });
    expect(batch.usage.cost).toBeGreaterThan(0);
  }, 60_000);
});

describe('a batch at Bedrock batch inference', () => {
  const requests = (count: number) => Array.from({ length: count }, (_, i) => ({ custom_id: `b${i}`, body: { messages: [{ role: 'user', content: `bedrock item ${i}` }], max_tokens: 32 } }));

  it('runs 120 items as one job: every answer, each charged once at half the live price', async () => {
    const { key, hash } = await newKey('provider batch bedrock');
    const batch = await runInlineBatch(gateway.baseUrl, key, { endpoint: '/v1/chat/completions', model: 'simulator/echo-bedrock-batch', requests: requests(120) });
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 120, completed: 120, failed: 0 });
    const page = resultsById(batch);
    expect(Object.keys(page)).toHaveLength(100);
    for (const i of [0, 1, 57, 99]) {
      const parsed = ChatResult$inboundSchema.parse(page[`b${i}`].response.body);
      expect(parsed.choices[0]!.message.content).toBe(`bedrock item ${i}`);
      expect(parsed.choices[0]!.finishReason).toBe('stop');
    }
    const live = await liveCost(key, { messages: [{ role: 'user', content: 'bedrock item 0' }], max_tokens: 32 }, 'simulator/echo-bedrock-batch');
    expect(page.b0.response.body.usage.cost).toBeCloseTo(live / 2, 12);
    await waitFor(async () => Math.abs((await usageOf(hash)) - (batch.usage.cost + live)) < 1e-12, { timeoutMs: 10_000, what: 'the key to be charged the batch and the live request' });
  }, 60_000);

  it('runs 100 items through the gateway when one of them would be refused (99 left: fewer than a job takes), at the live price', async () => {
    const { key } = await newKey('provider batch bedrock 99');
    const batch = await runInlineBatch(gateway.baseUrl, key, {
      endpoint: '/v1/chat/completions', model: 'simulator/echo-bedrock-batch',
      requests: [...requests(99), { custom_id: 'refused', body: { messages: [{ role: 'user', content: 'json please' }], response_format: { type: 'json_object' } } }],
    });
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 100, completed: 99, failed: 1 });
    const page = resultsById(batch);
    expect(page.refused.response).toBeNull();
    expect(page.refused.error.message).toMatch(/json_object/);
    expect(page.b5.response.body.usage.cost).toBeCloseTo(await liveCost(key, { messages: [{ role: 'user', content: 'bedrock item 5' }], max_tokens: 32 }, 'simulator/echo-bedrock-batch'), 12);
  }, 60_000);

  it('runs a batch with an item its jobs cannot carry but Bedrock takes live (tools) through the gateway, every item answered', async () => {
    const { key } = await newKey('provider batch bedrock tools');
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }];
    const batch = await runInlineBatch(gateway.baseUrl, key, {
      endpoint: '/v1/chat/completions', model: 'simulator/echo-bedrock-batch',
      requests: [...requests(110), { custom_id: 'tools', body: { messages: [{ role: 'user', content: 'with tools' }], tools } }],
    });
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 111, completed: 111, failed: 0 });
    const page = resultsById(batch);
    expect(page.b3.response.body.usage.cost).toBeCloseTo(await liveCost(key, { messages: [{ role: 'user', content: 'bedrock item 3' }], max_tokens: 32 }, 'simulator/echo-bedrock-batch'), 12);
  }, 60_000);

  it('runs fewer items than a Bedrock job takes (100) through the gateway itself, at the live price', async () => {
    const { key } = await newKey('provider batch bedrock small');
    const batch = await runInlineBatch(gateway.baseUrl, key, { endpoint: '/v1/chat/completions', model: 'simulator/echo-bedrock-batch', requests: requests(3) });
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 3, completed: 3, failed: 0 });
    const { b2 } = resultsById(batch);
    expect(b2.response.body.choices[0].message.content).toBe('bedrock item 2');
    expect(b2.response.body.usage.cost).toBeCloseTo(await liveCost(key, { messages: [{ role: 'user', content: 'bedrock item 2' }], max_tokens: 32 }, 'simulator/echo-bedrock-batch'), 12);
  }, 60_000);
});

describe('what a provider batch cannot take', () => {
  it('an item the provider\'s format cannot carry is that item\'s error; the others run there', async () => {
    const { key } = await newKey('provider batch refused item');
    const batch = await runInlineBatch(gateway.baseUrl, key, {
      endpoint: '/v1/chat/completions',
      model: 'simulator/echo-anthropic-batch',
      requests: [
        { custom_id: 'ok', body: { messages: [{ role: 'user', content: 'plain text' }] } },
        { custom_id: 'audio', body: { messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } }] }] } },
      ],
    });
    expect(batch.status).toBe('completed');
    const byId = resultsById(batch);
    expect(byId.ok.response.body.choices[0].message.content).toBe('plain text');
    expect(byId.audio).toMatchObject({ response: null, error: { error_type: 'invalid_body', message: expect.stringMatching(/audio/i) } });
  }, 60_000);

  it('items with provider preferences of their own keep the batch with the gateway\'s workers, at the live price', async () => {
    const { key } = await newKey('provider batch fallback to gateway');
    const body = { messages: [{ role: 'user', content: 'routed by the gateway' }], provider: { sort: 'price' } };
    const batch = await runInlineBatch(gateway.baseUrl, key, { endpoint: '/v1/chat/completions', model: 'simulator/echo-batch', requests: [{ custom_id: 'g', body }] });
    expect(batch.status).toBe('completed');
    expect(resultsById(batch).g.response.body.usage.cost).toBeCloseTo(await liveCost(key, body), 12);
  }, 60_000);
});

describe('BYOK', () => {
  it('a batch whose items the caller\'s own key would serve live runs through the gateway, with that key, not at the provider\'s batch service', async () => {
    // An account of its own (the BYOK credential is the organization's), in the intern programme as npm start's.
    const created = await fetch(`${gateway.baseUrl}/byok`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ provider: 'simulator-batch', key: 'sk-customer-own-key-1234', name: 'own key' }),
    });
    expect(created.status).toBe(201);
    const { id: credential } = ((await created.json()) as { data: { id: string } }).data;
    // Other processes (the batch runner, as other Lambda instances) see a new credential once their 2 s cache
    // of the organization's credentials has expired.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    try {
      const { key } = await newKey('provider batch byok');
      const batch = await runInlineBatch(gateway.baseUrl, key, {
        endpoint: '/v1/chat/completions', model: 'simulator/echo-batch',
        requests: [{ custom_id: 'own', body: { messages: [{ role: 'user', content: 'on my key' }] } }],
      });
      expect(batch.status).toBe('completed');
      const { own } = resultsById(batch);
      expect(own.response.body.choices[0].message.content).toBe('on my key');
      const generation = await fetch(`${gateway.baseUrl}/generation?id=${own.id}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
      expect(((await generation.json()) as { data: { is_byok: boolean } }).data.is_byok).toBe(true);
    } finally {
      await fetch(`${gateway.baseUrl}/byok/${credential}`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    }
  }, 60_000);
});

describe('money', () => {
  it('fails a batch whose maximum cost the key\'s limit cannot cover, before anything is submitted', async () => {
    const { key, hash } = await newKey('provider batch too small', 0.0001);
    const batch = await runInlineBatch(gateway.baseUrl, key, {
      endpoint: '/v1/chat/completions',
      model: 'simulator/echo-batch',
      requests: Array.from({ length: 3 }, (_, i) => ({ custom_id: `r${i}`, body: { messages: [{ role: 'user', content: `item ${i}` }] } })),
    });
    expect(batch.status).toBe('failed');
    expect(batch.error.message).toMatch(/^This batch can cost up to \$[\d.]+ \(every item at its most: set max_tokens to lower it\)\. The key's total limit of \$0\.0001 has \$0\.0001 left\. To run it, raise the key's limit\.$/);
    expect(batch.request_counts.completed).toBe(0);
    expect(await usageOf(hash)).toBe(0);
  }, 60_000);

  it('refuses with a 402 at creation a batch for a model with a batch service when nothing at all is left to pay for it', async () => {
    const { key } = await newKey('provider batch nothing left', 0);
    const reply = await fetch(`${gateway.baseUrl}/batches`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ endpoint: '/v1/chat/completions', model: 'simulator/echo-batch', requests: [{ custom_id: 'r0', body: { messages: [{ role: 'user', content: 'hi' }] } }] }),
    });
    expect(reply.status).toBe(402);
    const body = await reply.json() as { error: { code: number; message: string; metadata: Record<string, unknown> } };
    expect(body.error.code).toBe(402);
    expect(body.error.message).toBe("This batch cannot run: nothing is left to pay for it. The key's total limit of $0 has $0 left. To run it, raise the key's limit.");
    expect(body.error.metadata).toMatchObject({ reason: 'key_limit', remaining: '0' });
    expect(body.error.metadata).not.toHaveProperty('required');
  }, 60_000);

  it('a cancelled batch charges nothing and gives back what it held: the key can spend its whole limit again', async () => {
    const slow = await startGatewayProcess({ GATEWAY_ADMIN_KEY: ADMIN_KEY, SIMULATOR_BATCH_DELAY_MS: '60000' });
    try {
      const sdk = new OpenRouter({ apiKey: ADMIN_KEY, serverURL: slow.baseUrl, retryConfig: { strategy: 'none' } });
      // The batch holds 5 × 16,384 output tokens at $1 per million (half price): $0.082 of the $0.10 limit.
      const created = await sdk.apiKeys.create({ requestBody: { name: 'provider batch cancel', limit: 0.1 } });
      const post = await fetch(`${slow.baseUrl}/batches`, {
        method: 'POST', headers: { authorization: `Bearer ${created.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ endpoint: '/v1/chat/completions', model: 'simulator/echo-batch', requests: Array.from({ length: 5 }, (_, i) => ({ custom_id: `x${i}`, body: { messages: [{ role: 'user', content: `slow ${i}` }], max_tokens: 16_384 } })) }),
      });
      const { id } = await post.json() as { id: string };
      const read = async () => (await (await fetch(`${slow.baseUrl}/batches/${id}`, { headers: { authorization: `Bearer ${created.key}` } })).json()) as { status: string; request_counts: { completed: number; failed: number } };
      await waitFor(async () => (await read()).status === 'in_progress', { timeoutMs: 20_000, what: 'the batch to be submitted' });
      // While it runs, its maximum cost is held: a live request that may cost $0.033 does not fit beside it.
      const big = { model: 'simulator/echo-batch', messages: [{ role: 'user', content: 'x' }], max_tokens: 16_384 };
      const during = await fetch(`${slow.baseUrl}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${created.key}`, 'content-type': 'application/json' }, body: JSON.stringify(big) });
      expect(during.status).toBe(402);
      expect((await fetch(`${slow.baseUrl}/batches/${id}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${created.key}` } })).status).toBe(200);
      await waitFor(async () => (await read()).status === 'cancelled', { timeoutMs: 20_000, what: 'the batch to be cancelled' });
      expect((await read()).request_counts).toMatchObject({ completed: 0, failed: 0 });
      // Given back: the same request now fits.
      await waitFor(async () => (await fetch(`${slow.baseUrl}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${created.key}`, 'content-type': 'application/json' }, body: JSON.stringify(big) })).status === 200,
        { timeoutMs: 10_000, what: 'the batch\'s lease to be given back' });
      // What the key spent is the live request alone (the cancelled batch charged nothing).
      await waitFor(async () => (await sdk.apiKeys.get({ hash: created.data.hash })).data.usage > 0, { timeoutMs: 10_000, what: 'the live request to be charged' });
      expect((await sdk.apiKeys.get({ hash: created.data.hash })).data.usage).toBeLessThan(0.04);
    } finally {
      await slow.stop();
    }
  }, 150_000);
});
