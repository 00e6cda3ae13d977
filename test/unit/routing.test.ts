// planRoute / requestFor over a hand-built catalog with a seeded PRNG: which endpoints may serve a request,
// in which order, and what each one is sent.
import { describe, expect, it } from '@jest/globals';
import type { z } from 'zod';
import { buildCatalog, catalogFileSchema, type CatalogFile } from '../../lambdas/catalog/catalog-config.js';
import { HttpError, httpErrorOf } from '../../lambdas/platform/http/errors.js';
import { DomainError } from '../../lambdas/platform/errors.js';
import { EndpointHealth } from '../../lambdas/inference/endpoint-health.js';
import type { InferenceRequest } from '../../lambdas/inference/inference-request.js';
import { planRoute, requestFor, type RoutingInput, type RoutingPlan } from '../../lambdas/inference/routing.js';
import { chatRequestSchema } from '../../lambdas/inference/formats/chat-schema.js';
import { fromChat } from '../../lambdas/inference/formats/from-chat.js';
import { providerPreferencesSchema } from '../../lambdas/inference/formats/common-schema.js';
import { validate } from '../../lambdas/platform/http/validation.js';
import type { Message } from '../../lambdas/providers/types.js';
import { seeded } from '../support/random.js';
import { convertToOpenAIChat } from '../../lambdas/providers/openai/convert-to-openai-chat.js';
import type { GenerationRequest } from '../../lambdas/providers/types.js';

/** Whether a tier goes upstream: the request names one, and the body an adapter makes of it carries it. */
function sentTier(request: GenerationRequest): boolean {
  const inBody = 'service_tier' in convertToOpenAIChat(request, false);
  expect(request.service_tier !== undefined).toBe(inBody);
  return inBody;
}

type EndpointInput = CatalogFile['models'][number]['endpoints'][number];

/** Prices are USD per token: prompt 0.000001 is 1 USD per million prompt tokens. */
function endpoint(provider: string, prompt: string, completion: string, extra: Partial<EndpointInput> = {}): EndpointInput {
  return {
    provider,
    adapter: 'openai-chat',
    base_url: `https://${provider}.example/v1`,
    upstream_model: `${provider}-model`,
    pricing: { prompt, completion },
    context_length: 32768,
    ...extra,
  };
}

const catalog = buildCatalog(catalogFileSchema.parse({
  models: [
    {
      id: 'acme/one',
      endpoints: [
        // 3000 nano-dollars per prompt+completion token; 1 USD / 2 USD per million.
        endpoint('alpha', '0.000001', '0.000002', { throughput_tps: 100, latency_ms: 300, input_modalities: ['text', 'image'], data_collection: 'deny', service_tiers: ['default'] }),
        // 6000; 2 / 4 USD per million; text only; keeps prompts for training.
        endpoint('beta', '0.000002', '0.000004', { throughput_tps: 200, latency_ms: 800, input_modalities: ['text'], data_collection: 'allow', service_tiers: ['default', 'priority'] }),
        // 9000; 3 / 6 USD per million; supports no sampling parameters; a per-request fee.
        endpoint('gamma', '0.000003', '0.000006', {
          throughput_tps: 50, latency_ms: 100, input_modalities: ['text', 'image'], service_tiers: ['default', 'priority', 'ultrafast'],
          supported_parameters: ['max_tokens', 'tools'], pricing: { prompt: '0.000003', completion: '0.000006', request: '0.01' },
        }),
      ],
    },
    {
      id: 'acme/two',
      endpoints: [
        endpoint('delta', '0.0000005', '0.000001', { throughput_tps: 300, latency_ms: 200 }), // 1500
        endpoint('alpha', '0.000004', '0.000008', { throughput_tps: 10, latency_ms: 1000 }), // 12000
      ],
    },
    {
      id: 'acme/pair',
      endpoints: [
        endpoint('cheap', '0.000001', '0.000002'), // 3000
        endpoint('dear', '0.000002', '0.000004'), // 6000: weight 1/4 of cheap's
      ],
    },
    {
      id: 'acme/single',
      endpoints: [endpoint('solo', '0.000001', '0.000001')],
    },
    {
      id: 'acme/context',
      endpoints: [
        endpoint('short', '0.000001', '0.000001', { context_length: 1_000, input_modalities: ['text', 'image'] }),
        endpoint('long', '0.000002', '0.000002', { context_length: 100_000, input_modalities: ['text', 'image'] }),
      ],
    },
  ],
}));

const text = (value: string): Message => ({ role: 'user', content: [{ type: 'text', text: value }] });

function inference(overrides: Partial<InferenceRequest> = {}): InferenceRequest {
  return {
    format: 'chat',
    models: ['acme/one'],
    params: { messages: [text('hello')] },
    provider: undefined,
    routePartition: undefined,
    stream: false,
    serviceTier: null,
    sessionId: undefined,
    user: undefined,
    safetyIdentifier: undefined,
    metadata: undefined,
    plugins: [],
    echo: {},
    ...overrides,
  };
}

function plan(request: Partial<InferenceRequest>, input: Partial<Omit<RoutingInput, 'request'>> = {}): RoutingPlan {
  return planRoute({
    request: inference(request),
    catalog,
    health: new EndpointHealth(),
    stickyEndpoint: undefined,
    now: 1_000_000,
    random: seeded(42),
    ...input,
  });
}

/** Provider preferences as a client sends them, parsed by the request schema. */
const withProvider = (provider: z.input<typeof providerPreferencesSchema>, extra: Partial<InferenceRequest> = {}) => ({ ...extra, provider: providerPreferencesSchema.parse(provider) });
const keys = (result: RoutingPlan) => result.candidates.map((candidate) => candidate.key);
const providers = (result: RoutingPlan) => result.candidates.map((candidate) => candidate.endpoint.provider);

function routeError(run: () => unknown): HttpError {
  try {
    run();
  } catch (err) {
    // Routing throws domain errors: the reply is what the HTTP error map makes of them.
    if (err instanceof DomainError) return httpErrorOf(err);
    throw err;
  }
  throw new Error('expected planRoute to throw');
}

describe('models and fallbacks', () => {
  it('lists every endpoint of the first model before any of the next, in the order of models', () => {
    const result = plan({ models: ['acme/two', 'acme/one'] });
    expect(result.candidates.map((candidate) => candidate.endpoint.model)).toEqual(['acme/two', 'acme/two', 'acme/one', 'acme/one', 'acme/one']);
    expect(new Set(keys(result).slice(0, 2))).toEqual(new Set(['acme/two@delta', 'acme/two@alpha']));
    expect(new Set(keys(result).slice(2))).toEqual(new Set(['acme/one@alpha', 'acme/one@beta', 'acme/one@gamma']));
    expect(result.strategy).toBe('fallback');
    expect(result.considered).toHaveLength(5);
  });

  it('routes a single model directly', () => {
    const result = plan({ models: ['acme/single'] });
    expect(keys(result)).toEqual(['acme/single@solo']);
    expect(result.strategy).toBe('direct');
    expect(result.candidates[0]).toMatchObject({ ignoredParameters: [], serviceTier: undefined });
  });

  it('rejects unknown models with 400, naming them', () => {
    const error = routeError(() => plan({ models: ['acme/one', 'acme/nope', 'other/missing'] }));
    expect(error.status).toBe(400);
    expect(error.message).toBe('"acme/nope", "other/missing" are not valid model IDs');
    expect(error.metadata).toEqual({ models: ['acme/nope', 'other/missing'] });
    expect(routeError(() => plan({ models: ['acme/nope'] })).message).toBe('"acme/nope" is not a valid model ID');
  });
});

describe('provider preferences', () => {
  it('only keeps the listed providers, case-insensitively', () => {
    const result = plan(withProvider({ only: ['BETA', 'gamma'] }));
    expect(new Set(providers(result))).toEqual(new Set(['beta', 'gamma']));
    expect(result.candidates).toHaveLength(2);
  });

  it('ignore drops the listed providers', () => {
    const result = plan(withProvider({ ignore: ['alpha'] }, { models: ['acme/one', 'acme/two'] }));
    expect(providers(result)).not.toContain('alpha');
    expect(result.candidates).toHaveLength(3);
  });

  it('order puts the listed providers first, in that order, and keeps the others as fallbacks', () => {
    const result = plan(withProvider({ order: ['gamma', 'Alpha'] }));
    expect(providers(result)).toEqual(['gamma', 'alpha', 'beta']);
    expect(result.strategy).toBe('ordered');
  });

  it('order without fallbacks keeps only the listed providers, still in order', () => {
    expect(providers(plan(withProvider({ order: ['gamma'], allow_fallbacks: false })))).toEqual(['gamma']);
    expect(providers(plan(withProvider({ order: ['gamma', 'alpha'], allow_fallbacks: false })))).toEqual(['gamma', 'alpha']);
    const error = routeError(() => plan(withProvider({ order: ['nobody'], allow_fallbacks: false })));
    expect(error.status).toBe(404);
    expect(error.message).toContain('provider.order without fallbacks');
  });

  it('without fallbacks and without an order, only the primary endpoint of each model is kept', () => {
    const result = plan(withProvider({ allow_fallbacks: false, sort: 'price' }, { models: ['acme/one', 'acme/two'] }));
    expect(keys(result)).toEqual(['acme/one@alpha', 'acme/two@delta']);
  });

  it('excludes endpoints that may keep data when data_collection is deny', () => {
    const result = plan(withProvider({ data_collection: 'deny' }));
    expect(new Set(providers(result))).toEqual(new Set(['alpha', 'gamma']));
    expect(new Set(providers(plan(withProvider({ data_collection: 'allow' }))))).toEqual(new Set(['alpha', 'beta', 'gamma']));
  });

  it('max_price is per million tokens (prompt, completion) and per request', () => {
    expect(new Set(providers(plan(withProvider({ max_price: { prompt: 2 } }))))).toEqual(new Set(['alpha', 'beta']));
    expect(new Set(providers(plan(withProvider({ max_price: { prompt: '1.999' } }))))).toEqual(new Set(['alpha']));
    expect(new Set(providers(plan(withProvider({ max_price: { completion: 6 } }))))).toEqual(new Set(['alpha', 'beta', 'gamma']));
    expect(new Set(providers(plan(withProvider({ max_price: { completion: 5.99 } }))))).toEqual(new Set(['alpha', 'beta']));
    expect(new Set(providers(plan(withProvider({ max_price: { prompt: 3, request: '0.005' } }))))).toEqual(new Set(['alpha', 'beta']));
    const error = routeError(() => plan(withProvider({ max_price: { prompt: 0.5 } })));
    expect(error.status).toBe(404);
    expect(error.message).toContain('provider.max_price');
    expect(error.metadata).toEqual({ excluded_by: { 'provider.max_price': 3 } });
  });

  it('max_price is taken to the nearest nano-dollar, as a number or as decimal text', () => {
    // beta's prompt price is $2 per million tokens: a float a hair above or below still means $2.
    expect(new Set(providers(plan(withProvider({ max_price: { prompt: 1.9999999999 } }))))).toEqual(new Set(['alpha', 'beta']));
    expect(new Set(providers(plan(withProvider({ max_price: { prompt: '2.0000000004' } }))))).toEqual(new Set(['alpha', 'beta']));
    expect(new Set(providers(plan(withProvider({ max_price: { prompt: 1.999999999 } }))))).toEqual(new Set(['alpha']));
  });

  it('refuses a max_price that is no amount with a 400 naming the field', () => {
    const cases: Array<[unknown, string]> = [
      [-1, 'must not be negative'],
      ['-1', 'must be a number, or decimal text like "0.5"'],
      ['1e3', 'must be a number, or decimal text like "0.5"'],
      [Number.POSITIVE_INFINITY, 'must be a finite number'],
      [2e9, 'must be at most 1000000000 (USD)'],
      ['2000000000', 'must be at most 1000000000 (USD)'],
      [true, 'must be a number, or decimal text like "0.5"'],
    ];
    for (const [value, message] of cases) {
      expect(() => validate(chatRequestSchema, { model: 'acme/one', messages: [{ role: 'user', content: 'hi' }], provider: { max_price: { prompt: value } } }, 'body'))
        .toThrow(`Invalid body.provider.max_price.prompt: ${message}`);
    }
  });
});

describe('sorting', () => {
  it('sorts by price, throughput and latency within the model', () => {
    expect(providers(plan(withProvider({ sort: 'price' })))).toEqual(['alpha', 'beta', 'gamma']);
    expect(providers(plan(withProvider({ sort: 'throughput' })))).toEqual(['beta', 'alpha', 'gamma']);
    expect(providers(plan(withProvider({ sort: { by: 'latency' } })))).toEqual(['gamma', 'alpha', 'beta']);
    expect(plan(withProvider({ sort: 'price' })).strategy).toBe('sorted');
  });

  it('partition model sorts each model on its own; partition none sorts across models', () => {
    const models = ['acme/one', 'acme/two'];
    expect(keys(plan(withProvider({ sort: { by: 'price', partition: 'model' } }, { models })))).toEqual([
      'acme/one@alpha', 'acme/one@beta', 'acme/one@gamma', 'acme/two@delta', 'acme/two@alpha',
    ]);
    expect(keys(plan(withProvider({ sort: 'price' }, { models })))).toEqual([
      'acme/one@alpha', 'acme/one@beta', 'acme/one@gamma', 'acme/two@delta', 'acme/two@alpha',
    ]);
    expect(keys(plan(withProvider({ sort: { by: 'price', partition: 'none' } }, { models })))).toEqual([
      'acme/two@delta', 'acme/one@alpha', 'acme/one@beta', 'acme/one@gamma', 'acme/two@alpha',
    ]);
    expect(keys(plan(withProvider({ sort: { by: 'throughput', partition: 'none' } }, { models })))).toEqual([
      'acme/two@delta', 'acme/one@beta', 'acme/one@alpha', 'acme/one@gamma', 'acme/two@alpha',
    ]);
  });

  it('maps the deprecated route field: sort → partition none, fallback → partition model', () => {
    const models = ['acme/one', 'acme/two'];
    const viaChat = (route: 'sort' | 'fallback') => fromChat(chatRequestSchema.parse({
      models, route, provider: { sort: 'price' }, messages: [{ role: 'user', content: 'hi' }],
    }));
    const sorted = viaChat('sort');
    expect(sorted.routePartition).toBe('none');
    expect(keys(planRoute({ request: sorted, catalog, health: new EndpointHealth(), stickyEndpoint: undefined, now: 0, random: seeded(1) }))).toEqual([
      'acme/two@delta', 'acme/one@alpha', 'acme/one@beta', 'acme/one@gamma', 'acme/two@alpha',
    ]);
    const fallback = viaChat('fallback');
    expect(fallback.routePartition).toBe('model');
    expect(keys(planRoute({ request: fallback, catalog, health: new EndpointHealth(), stickyEndpoint: undefined, now: 0, random: seeded(1) }))).toEqual([
      'acme/one@alpha', 'acme/one@beta', 'acme/one@gamma', 'acme/two@delta', 'acme/two@alpha',
    ]);
    // An explicit partition wins over the deprecated field.
    expect(keys(plan({ ...withProvider({ sort: { by: 'price', partition: 'model' } }), models, routePartition: 'none' }))[0]).toBe('acme/one@alpha');
  });
});

describe('parameters', () => {
  const sampled = { messages: [text('hello')], temperature: 0.3, top_p: 0.9, max_output_tokens: 100 };

  it('without require_parameters, keeps endpoints that lack a parameter and leaves it out of their request', () => {
    const result = plan({ params: sampled, provider: { sort: 'price' } });
    expect(providers(result)).toEqual(['alpha', 'beta', 'gamma']);
    const [alpha, , gamma] = result.candidates;
    expect(alpha!.ignoredParameters).toEqual([]);
    expect(gamma!.ignoredParameters.sort()).toEqual(['temperature', 'top_p']);

    const toAlpha = requestFor(alpha!, sampled);
    expect(toAlpha).toMatchObject({ model: 'alpha-model', temperature: 0.3, top_p: 0.9, max_output_tokens: 100 });
    const toGamma = requestFor(gamma!, sampled);
    expect(toGamma.model).toBe('gamma-model');
    expect(toGamma.max_output_tokens).toBe(100);
    expect('temperature' in toGamma).toBe(false);
    expect('top_p' in toGamma).toBe(false);
    // The shared params are not modified.
    expect(sampled.temperature).toBe(0.3);
  });

  it('with require_parameters, excludes endpoints that lack a requested parameter', () => {
    const result = plan({ params: sampled, provider: { require_parameters: true } });
    expect(new Set(providers(result))).toEqual(new Set(['alpha', 'beta']));
    // A request using only supported parameters keeps every endpoint.
    expect(plan({ params: { messages: [text('hi')], max_output_tokens: 5 }, provider: { require_parameters: true } }).candidates).toHaveLength(3);
    const error = routeError(() => plan({ params: sampled, provider: { require_parameters: true, only: ['gamma'] } }));
    expect(error.status).toBe(404);
    expect(error.message).toContain('provider.require_parameters');
    expect(error.message).toContain('provider.only');
  });

  it('with require_parameters, skips Claude\'s endpoints for a stop sequence of whitespace only, which they leave out', () => {
    const claude = buildCatalog(catalogFileSchema.parse({
      models: [{
        id: 'acme/claude',
        endpoints: [
          endpoint('anthropic', '0.000001', '0.000002', { adapter: 'anthropic', upstream_model: 'claude-sonnet-4-5' }),
          endpoint('bedrock', '0.000001', '0.000002', { adapter: 'bedrock', upstream_model: 'anthropic.claude-sonnet-4-5-v1:0' }),
          endpoint('compatible', '0.000001', '0.000002'),
        ],
      }],
    }));
    const route = (stop: string[], requireParameters: boolean) => new Set(providers(plan({
      models: ['acme/claude'], params: { messages: [text('hi')], stop }, ...(requireParameters ? withProvider({ require_parameters: true }) : {}),
    }, { catalog: claude })));
    expect(route(['\n'], true)).toEqual(new Set(['compatible']));
    expect(route(['END', ' '], true)).toEqual(new Set(['compatible']));
    expect(route(['END'], true)).toEqual(new Set(['anthropic', 'bedrock', 'compatible']));
    expect(route(['\n'], false)).toEqual(new Set(['anthropic', 'bedrock', 'compatible']));
  });

  it('excludes text-only endpoints when the input has an image', () => {
    const withImage: Message = { role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image', url: 'https://example.com/cat.png' }] };
    const result = plan({ params: { messages: [withImage] } });
    expect(new Set(providers(result))).toEqual(new Set(['alpha', 'gamma']));
    const error = routeError(() => plan({ params: { messages: [withImage] }, provider: { only: ['beta'] } }));
    expect(error.status).toBe(404);
    expect(error.message).toContain('image input');
  });
});

describe('health, stickiness and the default choice', () => {
  it('puts cooled-down endpoints last until the cooldown has passed', () => {
    const health = new EndpointHealth(30_000);
    health.recordFailure('acme/one@alpha', 1_000);
    expect(providers(plan(withProvider({ sort: 'price' }), { health, now: 2_000 }))).toEqual(['beta', 'gamma', 'alpha']);
    expect(providers(plan(withProvider({ sort: 'price' }), { health, now: 31_001 }))).toEqual(['alpha', 'beta', 'gamma']);
    // Without a sort too: the cooled-down endpoint is last whatever the draw.
    for (let seed = 0; seed < 20; seed++) {
      expect(providers(plan({}, { health, now: 2_000, random: seeded(seed) })).at(-1)).toBe('alpha');
    }
    health.recordSuccess('acme/one@alpha');
    expect(providers(plan(withProvider({ sort: 'price' }), { health, now: 2_000 }))[0]).toBe('alpha');
  });

  it('tries the sticky endpoint first', () => {
    const result = plan(withProvider({ sort: 'price' }), { stickyEndpoint: 'acme/one@gamma' });
    expect(providers(result)).toEqual(['gamma', 'alpha', 'beta']);
    expect(result.notes).toContain('sticky session endpoint first');
    // A sticky endpoint that is not a candidate changes nothing.
    const other = plan(withProvider({ sort: 'price', ignore: ['gamma'] }), { stickyEndpoint: 'acme/one@gamma' });
    expect(providers(other)).toEqual(['alpha', 'beta']);
    expect(other.notes).toEqual([]);
    // A sticky endpoint that is cooling down after failures is not preferred.
    const health = new EndpointHealth();
    health.recordFailure('acme/one@gamma', 0);
    expect(providers(plan(withProvider({ sort: 'price' }), { stickyEndpoint: 'acme/one@gamma', health, now: 1 }))).toEqual(['alpha', 'beta', 'gamma']);
  });

  it('by default puts the cheaper endpoint first more often, by about the ratio of 1/price²', () => {
    const random = seeded(20260101);
    const draws = 20_000;
    let cheapFirst = 0;
    for (let i = 0; i < draws; i++) {
      const result = plan({ models: ['acme/pair'] }, { random });
      expect(result.candidates).toHaveLength(2);
      if (result.candidates[0]!.endpoint.provider === 'cheap') cheapFirst += 1;
    }
    // Weights 1/3000² and 1/6000²: cheap is first with probability 4/5.
    expect(cheapFirst / draws).toBeGreaterThan(0.78);
    expect(cheapFirst / draws).toBeLessThan(0.82);
  });

  it('is deterministic for a given random source', () => {
    const a = keys(plan({ models: ['acme/one', 'acme/two'] }, { random: seeded(7) }));
    const b = keys(plan({ models: ['acme/one', 'acme/two'] }, { random: seeded(7) }));
    expect(a).toEqual(b);
  });
});

describe('service tiers', () => {
  it('ultrafast prefers ultrafast endpoints, then priority, then default', () => {
    for (let seed = 0; seed < 10; seed++) {
      const result = plan({ serviceTier: 'ultrafast' }, { random: seeded(seed) });
      expect(result.candidates.map((candidate) => [candidate.endpoint.provider, candidate.serviceTier])).toEqual([
        ['gamma', 'ultrafast'], ['beta', 'priority'], ['alpha', 'default'],
      ]);
    }
    const [gamma, beta, alpha] = plan({ serviceTier: 'ultrafast' }).candidates;
    expect(requestFor(gamma!, { messages: [text('x')] }).service_tier).toBe('ultrafast');
    expect(requestFor(beta!, { messages: [text('x')] }).service_tier).toBe('priority');
    expect(sentTier(requestFor(alpha!, { messages: [text('x')] }))).toBe(false);
  });

  it('fast is priority', () => {
    for (let seed = 0; seed < 10; seed++) {
      const result = plan({ serviceTier: 'fast' }, { random: seeded(seed) });
      expect(new Set(providers(result).slice(0, 2))).toEqual(new Set(['beta', 'gamma']));
      expect(result.candidates.slice(0, 2).map((candidate) => candidate.serviceTier)).toEqual(['priority', 'priority']);
      expect(result.candidates[2]).toMatchObject({ endpoint: { provider: 'alpha' }, serviceTier: undefined });
    }
  });

  it('sends no tier for auto or when none is asked for', () => {
    for (const serviceTier of [null, 'auto']) {
      const result = plan({ serviceTier });
      expect(result.candidates.every((candidate) => candidate.serviceTier === undefined)).toBe(true);
      expect(sentTier(requestFor(result.candidates[0]!, { messages: [text('x')] }))).toBe(false);
    }
  });
});

describe('context length', () => {
  // About 4 UTF-8 bytes per token of text, plus a few tokens per message: 'word ' × n is about 1.25 n tokens.
  const words = (count: number) => 'word '.repeat(count);

  it('skips endpoints whose context cannot hold the prompt and max_tokens, and says which and why', () => {
    const result = plan({ models: ['acme/context'], params: { messages: [text(words(1_600))] } });
    expect(providers(result)).toEqual(['long']);
    expect(result.skipped).toEqual([{ key: 'acme/context@short', reason: 'context length', context_length: 1_000, requested_tokens: 2_004 }]);
    // max_tokens counts too: a prompt of about 129 tokens fits 1,000 with 700 output tokens, not with 900.
    const small = plan({ models: ['acme/context'], params: { messages: [text(words(100))], max_output_tokens: 900 } });
    expect(providers(small).sort()).toEqual(['long']);
    expect(providers(plan({ models: ['acme/context'], params: { messages: [text(words(100))], max_output_tokens: 700 } })).sort()).toEqual(['long', 'short']);
  });

  it('answers 400 naming the largest context length when no endpoint can hold the request', () => {
    const error = routeError(() => plan({ models: ['acme/context'], params: { messages: [text(words(120_000))], max_output_tokens: 1_000 } }));
    expect(error.status).toBe(400);
    expect(error.message).toBe(
      "This endpoint's maximum context length is 100000 tokens. However, you requested about 151004 tokens (150004 of text input, 1000 in the output). Please reduce the length of either one.",
    );
    expect(error.metadata).toEqual({ context_length: 100_000, requested_tokens: 151_004, prompt_tokens: 150_004, max_tokens: 1_000 });
  });

  it('counts the prompt alone when max_tokens is absent', () => {
    expect(providers(plan({ models: ['acme/context'], params: { messages: [text(words(79_000))] } }))).toEqual(['long']);
    const error = routeError(() => plan({ models: ['acme/context'], params: { messages: [text(words(80_000))] } }));
    expect(error.message).toContain('you requested about 100004 tokens (100004 of text input, 0 in the output)');
  });

  it('does not reject a prompt that fits by a realistic estimate although its UTF-8 bytes exceed the context', () => {
    // 300,000 bytes: about 75,000 tokens, within 100,000; the reservation's bound (one token per byte) would not fit.
    const result = plan({ models: ['acme/context'], params: { messages: [text(words(60_000))], max_output_tokens: 20_000 } });
    expect(providers(result)).toEqual(['long']);
  });

  it('counts images by the typical allowance, and names them', () => {
    const image: Message = { role: 'user', content: [{ type: 'image', url: 'https://example.com/a.png' }, { type: 'text', text: 'what is it?' }] };
    const error = routeError(() => plan({ models: ['acme/context'], params: { messages: Array.from({ length: 101 }, () => image) } }));
    expect(error.status).toBe(400);
    expect(error.message).toMatch(/^This endpoint's maximum context length is 100000 tokens\. However, you requested about \d+ tokens \(\d+ of text input, 101000 of image input, 0 in the output\)/);
  });
});

describe('nothing left', () => {
  it('answers 404 naming every filter that removed endpoints', () => {
    const error = routeError(() => plan(withProvider({ ignore: ['alpha'], data_collection: 'deny', max_price: { prompt: 2.5 } })));
    expect(error.status).toBe(404);
    expect(error.message).toBe('No endpoints found for acme/one that satisfy provider.ignore, provider.data_collection, provider.max_price');
    expect(error.metadata).toEqual({ excluded_by: { 'provider.ignore': 1, 'provider.data_collection': 1, 'provider.max_price': 1 } });
  });

  it('names provider.only when it matches nothing', () => {
    const error = routeError(() => plan(withProvider({ only: ['nobody'] }, { models: ['acme/one', 'acme/two'] })));
    expect(error.status).toBe(404);
    expect(error.message).toBe('No endpoints found for acme/one, acme/two that satisfy provider.only');
    expect(error.metadata).toEqual({ excluded_by: { 'provider.only': 5 } });
  });
});
