import { describe, expect, it } from '@jest/globals';
import { buildCatalog, catalogFileSchema } from '../../lambdas/catalog/catalog-config.js';
import { EndpointHealth } from '../../lambdas/inference/endpoint-health.js';
import { embeddingsReply, embeddingsUsage, fromEmbeddings } from '../../lambdas/inference/formats/embeddings.js';
import { embeddingsRequestSchema, MAX_EMBEDDING_INPUTS } from '../../lambdas/inference/formats/embeddings-schema.js';
import { fromChat } from '../../lambdas/inference/formats/from-chat.js';
import { chatRequestSchema } from '../../lambdas/inference/formats/chat-schema.js';
import type { InferenceRequest } from '../../lambdas/inference/inference-request.js';
import { planRoute, requestFor } from '../../lambdas/inference/routing.js';
import { InvalidInputError } from '../../lambdas/platform/errors.js';
import { promptTokenBound } from '../../lambdas/inference/estimate.js';
import { seeded } from '../support/random.js';

const identity = { id: 'gen-1-emb', model: 'acme/embed', provider: 'Acme', created: 1, serviceTier: null };
const cost = { prompt: 120n, completion: 0n, cache_read: 0n, cache_write: 0n, reasoning: 0n, request: 0n, total: 120n };

const embedEndpoint = { provider: 'acme', adapter: 'openai-chat' as const, base_url: 'https://acme.example/v1', upstream_model: 'embed-1', pricing: { prompt: '0.00000002', completion: '0' }, context_length: 100, output_modalities: ['embeddings'] };
const chatEndpoint = { provider: 'acme', adapter: 'openai-chat' as const, base_url: 'https://acme.example/v1', upstream_model: 'chat-1', pricing: { prompt: '0.000001', completion: '0.000002' }, context_length: 32768 };
const catalog = buildCatalog(catalogFileSchema.parse({ models: [{ id: 'acme/embed', endpoints: [embedEndpoint] }, { id: 'acme/chat', endpoints: [chatEndpoint] }] }));

const plan = (request: InferenceRequest) => planRoute({ request, catalog, health: new EndpointHealth(), stickyEndpoint: undefined, now: 0, random: seeded(1) });

describe('embeddings requests', () => {
  it('take one text or a list, carried as one user message for the estimate and as params.embedding for the adapter', () => {
    const one = fromEmbeddings(embeddingsRequestSchema.parse({ model: 'acme/embed', input: 'hello' }));
    expect(one).toMatchObject({ format: 'embeddings', models: ['acme/embed'], stream: false, echo: { encoding_format: 'float' } });
    expect(one.params).toEqual({ messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }], embedding: { input: ['hello'] } });
    const many = fromEmbeddings(embeddingsRequestSchema.parse({ model: 'acme/embed', input: ['a', 'b'], dimensions: 8, encoding_format: 'base64', user: 'u1' }));
    expect(many.params.embedding).toEqual({ input: ['a', 'b'], dimensions: 8 });
    expect(many.user).toBe('u1');
    expect(many.echo.encoding_format).toBe('base64');
    // The reservation bounds every input's bytes, like any prompt.
    expect(promptTokenBound(many.params)).toBeGreaterThanOrEqual(2);
  });

  it('refuses token arrays, empty texts, too many inputs and a missing model, naming the field', () => {
    const issue = (body: unknown) => embeddingsRequestSchema.safeParse(body).error?.issues[0];
    expect(issue({ model: 'a/b', input: [1, 2] })?.message).toMatch(/token arrays are not accepted/);
    expect(issue({ model: 'a/b', input: [[1], [2]] })?.message).toMatch(/token arrays are not accepted/);
    expect(issue({ model: 'a/b', input: '' })).toBeDefined();
    expect(issue({ model: 'a/b', input: ['x', ''] })).toBeDefined();
    expect(issue({ model: 'a/b', input: Array.from({ length: MAX_EMBEDDING_INPUTS + 1 }, () => 'x') })).toBeDefined();
    expect(issue({ input: 'x' })?.path).toEqual(['model']);
    expect(issue({ model: 'a/b', input: 'x', encoding_format: 'hex' })?.path).toEqual(['encoding_format']);
  });

  it('answer as OpenAI does: float vectors, or base64 of little-endian float32 that decodes to the same values', () => {
    const vectors = [[0.25, -0.5, 1], [0, 0.125, -1]];
    const result = { text: '', tool_calls: [], finish_reason: 'stop' as const, usage: { input_tokens: 6, output_tokens: 0, cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 }, embeddings: vectors };
    const usage = embeddingsUsage(result.usage, cost, false);
    expect(usage).toMatchObject({ prompt_tokens: 6, total_tokens: 6, cost: 0.00000012, is_byok: false, cost_details: { upstream_inference_prompt_cost: 0.00000012, upstream_inference_completions_cost: 0 } });
    const floats = embeddingsReply(identity, result, usage, 'float');
    expect(floats).toMatchObject({ id: 'gen-1-emb', object: 'list', model: 'acme/embed', data: [{ object: 'embedding', index: 0, embedding: vectors[0] }, { object: 'embedding', index: 1, embedding: vectors[1] }] });
    const encoded = embeddingsReply(identity, result, usage, 'base64');
    for (const [index, item] of encoded.data.entries()) {
      const bytes = Buffer.from(item.embedding as string, 'base64');
      expect(Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4))).toEqual(vectors[index]);
    }
  });
});

describe('routing by model kind', () => {
  it('sends embeddings only to embeddings models and chat only to text models, with a 400 saying which to use', () => {
    expect(plan(fromEmbeddings(embeddingsRequestSchema.parse({ model: 'acme/embed', input: 'x' }))).candidates.map((c) => c.endpoint.upstream_model)).toEqual(['embed-1']);
    expect(() => plan(fromEmbeddings(embeddingsRequestSchema.parse({ model: 'acme/chat', input: 'x' })))).toThrow(/"acme\/chat" is not an embeddings model/);
    const chat = fromChat(chatRequestSchema.parse({ model: 'acme/embed', messages: [{ role: 'user', content: 'x' }] }));
    expect(() => plan(chat)).toThrow(InvalidInputError);
    expect(() => plan(chat)).toThrow(/"acme\/embed" is an embeddings model; call POST \/embeddings/);
  });

  it('fits each input to the context on its own: many inputs that fit one by one are served', () => {
    const fits = 'word '.repeat(60);
    expect(plan(fromEmbeddings(embeddingsRequestSchema.parse({ model: 'acme/embed', input: Array.from({ length: 50 }, () => fits) }))).candidates).toHaveLength(1);
    // One input longer than the context (100 tokens) is refused before anything is reserved.
    expect(() => plan(fromEmbeddings(embeddingsRequestSchema.parse({ model: 'acme/embed', input: ['x', 'word '.repeat(400)] })))).toThrow(/maximum context length/);
  });

  it('leaves dimensions out for an endpoint that does not take them, and keeps the embeddings request', () => {
    const request = fromEmbeddings(embeddingsRequestSchema.parse({ model: 'acme/embed', input: ['a'], dimensions: 8, input_type: 'search_query' }));
    const [candidate] = plan(request).candidates;
    expect(candidate!.ignoredParameters).toEqual(['dimensions']);
    expect(requestFor(candidate!, request.params).embedding).toEqual({ input: ['a'], inputType: 'search_query' });
    // With provider.require_parameters the endpoint is not used at all.
    expect(() => plan({ ...request, provider: { require_parameters: true } })).toThrow(/provider.require_parameters/);
  });

  it('refuses a catalog that prices an embeddings endpoint\'s output, or puts one on an adapter without embeddings', () => {
    const parsed = catalogFileSchema.safeParse({ models: [{ id: 'acme/embed', endpoints: [{ ...embedEndpoint, pricing: { prompt: '0.00000002', completion: '0.000001' } }] }] });
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues[0]!.message).toMatch(/pricing.completion must be 0/);
    const anthropic = catalogFileSchema.safeParse({ models: [{ id: 'acme/embed', endpoints: [{ ...embedEndpoint, adapter: 'anthropic' }] }] });
    expect(anthropic.error!.issues[0]!.message).toMatch(/needs an adapter with an embeddings API/);
  });
});
