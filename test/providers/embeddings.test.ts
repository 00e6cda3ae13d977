// Embeddings through each adapter that has them (OpenAI and compatibles, Gemini, Bedrock through the real
// AWS SDK), against a local HTTP fake: what is sent, and how the reply becomes vectors and usage.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createOpenAIChatAdapter } from '../../lambdas/providers/openai/openai-chat-adapter.js';
import { createGeminiAdapter } from '../../lambdas/providers/google/gemini-adapter.js';
import { createBedrockAdapter } from '../../lambdas/providers/bedrock/bedrock-adapter.js';
import { ProviderError } from '../../lambdas/providers/provider-error.js';
import type { GenerationRequest } from '../../lambdas/providers/types.js';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';

let upstream: FakeUpstream;

beforeAll(async () => {
  upstream = await startFakeUpstream();
});
afterAll(() => upstream.close());

const embedding = (model: string, input: string[], dimensions?: number): GenerationRequest => ({
  model,
  messages: [{ role: 'user', content: input.map((text) => ({ type: 'text' as const, text })) }],
  embedding: { input, ...(dimensions !== undefined ? { dimensions } : {}) },
});

describe('OpenAI embeddings', () => {
  it('posts /embeddings for float vectors and puts them back in input order', async () => {
    const adapter = createOpenAIChatAdapter({ baseURL: `${upstream.url}/v1`, apiKey: 'sk-test' });
    upstream.reply({ json: {
      object: 'list', model: 'text-embedding-3-small',
      data: [{ object: 'embedding', index: 1, embedding: [0, 1] }, { object: 'embedding', index: 0, embedding: [1, 0] }],
      usage: { prompt_tokens: 7, total_tokens: 7 },
    } });
    const result = await adapter.generate({ ...embedding('text-embedding-3-small', ['first', 'second'], 2), user: 'u-hash' });
    const sent = upstream.received.at(-1)!;
    expect(sent.url).toBe('/v1/embeddings');
    expect(sent.headers.authorization).toBe('Bearer sk-test');
    expect(sent.body).toEqual({ model: 'text-embedding-3-small', input: ['first', 'second'], encoding_format: 'float', dimensions: 2, user: 'u-hash' });
    expect(result.embeddings).toEqual([[1, 0], [0, 1]]);
    expect(result.usage.input_tokens).toBe(7);
    expect(result.usage_estimated).toBeUndefined();
  });

  it('is an invalid response (502) when the vectors do not match the inputs, and passes on the provider\'s errors', async () => {
    const adapter = createOpenAIChatAdapter({ baseURL: `${upstream.url}/v1` });
    upstream.reply({ json: { data: [{ index: 0, embedding: [1] }], usage: { prompt_tokens: 1 } } });
    await expect(adapter.generate(embedding('m', ['a', 'b']))).rejects.toMatchObject({ kind: 'invalid-response', status: 502 });
    upstream.reply({ status: 429, headers: { 'retry-after': '2' }, json: { error: { message: 'Slow down', type: 'requests', code: 'rate_limit_exceeded' } } });
    const error = await adapter.generate(embedding('m', ['a'])).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 429, retryable: true, retryAfterMs: 2000 });
  });
});

describe('Gemini embeddings', () => {
  it('posts batchEmbedContents, one request per text, and estimates the tokens Gemini does not count', async () => {
    const adapter = createGeminiAdapter({ baseURL: `${upstream.url}/v1beta`, apiKey: 'g-key' });
    upstream.reply({ json: { embeddings: [{ values: [0.6, 0.8] }, { values: [1, 0] }] } });
    const result = await adapter.generate(embedding('gemini-embedding-001', ['hello there', 'x'], 2));
    const sent = upstream.received.at(-1)!;
    expect(sent.url).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(sent.headers['x-goog-api-key']).toBe('g-key');
    expect(sent.body).toEqual({ requests: [
      { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'hello there' }] }, outputDimensionality: 2 },
      { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'x' }] }, outputDimensionality: 2 },
    ] });
    expect(result.embeddings).toEqual([[0.6, 0.8], [1, 0]]);
    // ceil(11 / 4) + 1
    expect(result.usage.input_tokens).toBe(4);
    expect(result.usage_estimated).toBe(true);
  });
});

describe('Bedrock embeddings', () => {
  const adapter = () => createBedrockAdapter({ region: 'us-east-1', endpoint: upstream.url });

  it('invokes Titan once per text (signed), summing its token counts', async () => {
    upstream.reply((request) => {
      const text = (request.body as { inputText: string }).inputText;
      return { json: { embedding: text === 'one' ? [1, 0] : [0, 1], inputTextTokenCount: text.length } };
    });
    const before = upstream.received.length;
    const result = await adapter().generate(embedding('amazon.titan-embed-text-v2:0', ['one', 'three', 'two'], 256));
    const sent = upstream.received.slice(before);
    expect(sent).toHaveLength(3);
    for (const request of sent) {
      expect(request.url).toBe('/model/amazon.titan-embed-text-v2%3A0/invoke');
      expect(String(request.headers.authorization)).toMatch(/^AWS4-HMAC-SHA256 /);
      expect(request.body).toMatchObject({ dimensions: 256, normalize: true });
    }
    expect(sent.map((request) => (request.body as { inputText: string }).inputText).sort()).toEqual(['one', 'three', 'two']);
    expect(result.embeddings).toEqual([[1, 0], [0, 1], [0, 1]]);
    expect(result.usage.input_tokens).toBe(3 + 5 + 3);
  });

  it('invokes Cohere once with every text, estimating the tokens', async () => {
    upstream.reply({ json: { id: 'e-1', embeddings: [[0.1], [0.2]], texts: ['a', 'b'] } });
    const result = await adapter().generate(embedding('cohere.embed-english-v3', ['a', 'bbbbbbbb']));
    expect(upstream.received.at(-1)!.body).toEqual({ texts: ['a', 'bbbbbbbb'], input_type: 'search_document', truncate: 'END' });
    expect(result.embeddings).toEqual([[0.1], [0.2]]);
    expect(result.usage).toMatchObject({ input_tokens: 1 + 2 });
    expect(result.usage_estimated).toBe(true);
  });

  it('maps a Bedrock throttle to a retryable 429', async () => {
    upstream.reply({ status: 429, headers: { 'x-amzn-errortype': 'ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/' }, json: { message: 'Too many requests' } });
    await expect(adapter().generate(embedding('amazon.titan-embed-text-v2:0', ['x']))).rejects.toMatchObject({ status: 429, retryable: true });
  });
});
