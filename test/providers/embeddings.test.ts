// Embeddings through each adapter that has them (OpenAI and compatibles, Gemini, Bedrock through the real
// AWS SDK), against a local HTTP fake: what is sent, and how the reply becomes vectors and usage.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createOpenAIChatAdapter } from '../../lambdas/providers/openai/openai-chat-adapter.js';
import { createGeminiAdapter } from '../../lambdas/providers/google/gemini-adapter.js';
import { createBedrockAdapter } from '../../lambdas/providers/bedrock/bedrock-adapter.js';
import { ProviderError } from '../../lambdas/providers/provider-error.js';
import type { GenerationRequest } from '../../lambdas/providers/types.js';
import { estimatedEmbeddingTokens } from '../../lambdas/providers/embeddings.js';
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
    upstream.reply({ json: { data: [{ index: 0, embedding: [1] }, { index: 0, embedding: [2] }], usage: { prompt_tokens: 1 } } });
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

describe('estimated tokens', () => {
  it('count about four ASCII characters a token and a token for every other character', () => {
    expect(estimatedEmbeddingTokens(['abcd', 'abcde', ''])).toBe(1 + 2 + 1);
    // Six CJK characters, and a character outside the BMP (one surrogate pair).
    expect(estimatedEmbeddingTokens(['日本語のテキ', '😀'])).toBe(6 + 1);
  });
});

describe('Gemini embeddings in several calls', () => {
  it('sends at most 100 texts a call, in order, with the task type for input_type', async () => {
    const adapter = createGeminiAdapter({ baseURL: `${upstream.url}/v1beta`, apiKey: 'g-key' });
    upstream.reply((request) => ({ json: { embeddings: (request.body as { requests: Array<{ content: { parts: Array<{ text: string }> } }> }).requests.map((r) => ({ values: [Number(r.content.parts[0]!.text)] })) } }));
    const before = upstream.received.length;
    const input = Array.from({ length: 101 }, (_, i) => String(i));
    const result = await adapter.generate({ ...embedding('gemini-embedding-001', input), embedding: { input, inputType: 'search_query' } });
    const sent = upstream.received.slice(before);
    expect(sent.map((request) => (request.body as { requests: unknown[] }).requests.length)).toEqual([100, 1]);
    expect((sent[0]!.body as { requests: Array<{ taskType: string }> }).requests[0]!.taskType).toBe('RETRIEVAL_QUERY');
    expect(result.embeddings).toEqual(input.map((text) => [Number(text)]));
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

  it('invokes Cohere with up to 96 texts a call, estimating the tokens', async () => {
    upstream.reply((request) => ({ json: { id: 'e-1', embeddings: (request.body as { texts: string[] }).texts.map((text) => [text.length]) } }));
    const result = await adapter().generate(embedding('cohere.embed-english-v3', ['a', 'bbbbbbbb']));
    expect(upstream.received.at(-1)!.body).toEqual({ texts: ['a', 'bbbbbbbb'], input_type: 'search_document', truncate: 'END' });
    expect(result.embeddings).toEqual([[1], [8]]);
    expect(result.usage).toMatchObject({ input_tokens: 1 + 2 });
    expect(result.usage_estimated).toBe(true);
    const before = upstream.received.length;
    const many = Array.from({ length: 97 }, (_, i) => 'x'.repeat(i + 1));
    const split = await adapter().generate({ ...embedding('cohere.embed-english-v3', many), embedding: { input: many, inputType: 'search_query' } });
    expect(upstream.received.slice(before).map((request) => (request.body as { texts: string[]; input_type: string }).texts.length)).toEqual([96, 1]);
    expect((upstream.received.at(-1)!.body as { input_type: string }).input_type).toBe('search_query');
    expect(split.embeddings).toEqual(many.map((text) => [text.length]));
  });

  it('tries a throttled Titan text again alone, and stops the others when one fails for good', async () => {
    const calls = new Map<string, number>();
    upstream.reply((request) => {
      const text = (request.body as { inputText: string }).inputText;
      calls.set(text, (calls.get(text) ?? 0) + 1);
      if (text === 'throttled' && calls.get(text) === 1) return { status: 429, headers: { 'x-amzn-errortype': 'ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/' }, json: { message: 'slow down' } };
      if (text === 'bad') return { status: 400, headers: { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' }, json: { message: 'bad input' } };
      return { json: { embedding: [text.length], inputTextTokenCount: 1 } };
    });
    const result = await adapter().generate(embedding('amazon.titan-embed-text-v2:0', ['a', 'throttled', 'bb']));
    expect(result.embeddings).toEqual([[1], [9], [2]]);
    expect([calls.get('a'), calls.get('throttled'), calls.get('bb')]).toEqual([1, 2, 1]);
    calls.clear();
    const input = ['bad', ...Array.from({ length: 20 }, (_, i) => `t${i}`)];
    await expect(adapter().generate(embedding('amazon.titan-embed-text-v2:0', input))).rejects.toMatchObject({ status: 400 });
    // The failure stopped the texts not yet started: fewer than all were sent.
    expect(calls.get('bad')).toBe(1);
    expect([...calls.keys()].length).toBeLessThan(input.length);
  });

  it('maps a Bedrock throttle to a retryable 429', async () => {
    upstream.reply({ status: 429, headers: { 'x-amzn-errortype': 'ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/' }, json: { message: 'Too many requests' } });
    await expect(adapter().generate(embedding('amazon.titan-embed-text-v2:0', ['x']))).rejects.toMatchObject({ status: 429, retryable: true });
  });
});
