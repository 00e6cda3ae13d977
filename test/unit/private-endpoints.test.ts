// Private endpoints' pure parts: the catalog endpoint one adds (never the gateway's credential, its own prices,
// data collection only as declared), BYOK leaving private candidates alone, and the middleware putting a
// workspace's endpoints first only where routing's checks let them serve the request.
import { describe, expect, it } from '@jest/globals';
import { catalogEndpointOf, PrivateEndpointSource } from '../../lambdas/private-endpoints/index.js';
import { withByokCandidates } from '../../lambdas/inference/middleware/byok.js';
import type { Catalog, CatalogEndpoint } from '../../lambdas/catalog/index.js';
import type { PrivateEndpoint } from '../../lambdas/private-endpoints/index.js';
import type { ByokCredential } from '../../lambdas/byok/index.js';
import type { Candidate } from '../../lambdas/inference/routing.js';
import { privateEndpointMiddleware } from '../../lambdas/inference/middleware/private-endpoints.js';
import type { GenerationCall, GenerationParams } from '../../lambdas/inference/middleware.js';
import type { InferenceRequest } from '../../lambdas/inference/inference-request.js';

const publicEndpoint: CatalogEndpoint = {
  model: 'openai/gpt-4o', provider: 'openai', provider_name: 'OpenAI', adapter: 'openai-chat', base_url: 'https://api.openai.com/v1', credential: 'OPENAI_API_KEY',
  upstream_model: 'gpt-4o', pricing: { prompt: 2500n, completion: 10000n, request: 0n, input_cache_read: 0n, input_cache_write: 0n, internal_reasoning: 0n },
  context_length: 128000, max_completion_tokens: 16384, supported_parameters: ['max_tokens', 'temperature', 'tools'], input_modalities: ['text'], output_modalities: ['text'],
  service_tiers: [], data_collection: 'deny', throughput_tps: 100, latency_ms: 300,
};
const catalog: Catalog = { models: [{ id: 'openai/gpt-4o', name: 'GPT-4o', description: '', created: 0, endpoints: [publicEndpoint] }], byId: new Map() };
catalog.byId.set('openai/gpt-4o', catalog.models[0]!);

const privateEndpoint: PrivateEndpoint = {
  id: 'pe-1', org_id: 'org', workspace_id: 'ws', model_permaslug: 'openai/gpt-4o', provider_slug: 'openai', upstream_model_id: 'my-deployment', base_url: 'https://my.example.com/v1',
  declared_region: null, declared_zdr: null, pricing: { prompt: '0.000001', completion: '0.000002' }, status: 'active', validation: null, secret_name: 's', activated: true,
  created_at: '', updated_at: '',
};

describe('a private endpoint as a catalog endpoint', () => {
  it('takes the model\'s capabilities and the provider\'s wire format, but its own URL, upstream and prices, and never the gateway\'s credential', () => {
    const endpoint = catalogEndpointOf(privateEndpoint, catalog)!;
    expect(endpoint).toMatchObject({ model: 'openai/gpt-4o', provider: 'private:pe-1', adapter: 'openai-chat', base_url: 'https://my.example.com/v1', upstream_model: 'my-deployment', context_length: 128000, data_collection: 'allow' });
    expect(endpoint.credential).toBeUndefined();
    expect(endpoint.pricing).toMatchObject({ prompt: 1000n, completion: 2000n });
    expect(catalogEndpointOf({ ...privateEndpoint, declared_zdr: true }, catalog)!.data_collection).toBe('deny');
    expect(catalogEndpointOf({ ...privateEndpoint, model_permaslug: 'gone/model' }, catalog)).toBeUndefined();
  });

  it('is left alone by BYOK: no customer credential is put on it, even a required one', () => {
    const endpoint = catalogEndpointOf(privateEndpoint, catalog)!;
    const candidate: Candidate = { endpoint, key: 'openai/gpt-4o@private-endpoint:pe-1', ignoredParameters: [], serviceTier: undefined, privateEndpoint };
    const credential = { id: 'c1', org_id: 'org', provider: 'openai', name: null, label: 'sk…', disabled: false, is_fallback: false, is_required: true, is_byok_only: true, sort_order: 0, allowed_models: null, allowed_user_ids: null, allowed_api_key_hashes: null, declared_zdr: null, workspace_id: null, sealed: 'x', created_at: '', updated_at: '' } satisfies ByokCredential;
    const out = withByokCandidates([candidate, { endpoint: publicEndpoint, key: 'openai/gpt-4o@openai', ignoredParameters: [], serviceTier: undefined }], [credential], { workspaceId: 'ws', keyHash: 'k', user: undefined });
    expect(out[0]).toBe(candidate);
    expect(out.filter((entry) => entry.privateEndpoint)).toHaveLength(1);
    expect(out[1]!.byok?.id).toBe('c1');
  });
});

describe('the private endpoints middleware', () => {
  const publicCandidate: Candidate = { endpoint: publicEndpoint, key: 'openai/gpt-4o@openai', ignoredParameters: [], serviceTier: undefined };
  const request = (overrides: Partial<InferenceRequest> = {}, params: Partial<InferenceRequest['params']> = {}): InferenceRequest => ({
    format: 'chat', models: ['openai/gpt-4o'], params: { messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }], ...params },
    provider: undefined, routePartition: undefined, stream: false, serviceTier: null, sessionId: undefined, user: undefined, safetyIdentifier: undefined,
    metadata: undefined, plugins: [], echo: {}, ...overrides,
  });
  const run = (inference: InferenceRequest, active: PrivateEndpoint[] = [privateEndpoint], within: Catalog = catalog): Candidate[] => {
    const call = {
      type: 'generate', params: { request: inference, candidates: [publicCandidate] }, caller: { orgId: 'org', workspaceId: 'ws' },
      deps: { catalog: within, privateEndpoints: { activeFor: () => active } },
    } as unknown as GenerationCall;
    return (privateEndpointMiddleware.transformParams!(call) as GenerationParams).candidates;
  };

  it("puts the workspace's endpoint of the model first, billed to its own key, with the public one after it", () => {
    const [first, second] = run(request());
    expect(first).toMatchObject({ key: 'openai/gpt-4o@private-endpoint:pe-1', privateEndpoint, byok: { id: 'private-endpoint:pe-1' } });
    expect(second).toBe(publicCandidate);
    expect(run(request(), [{ ...privateEndpoint, workspace_id: 'other' }])).toEqual([publicCandidate]);
  });

  it('applies the provider preferences by its provider slug', () => {
    expect(run(request({ provider: { ignore: ['OpenAI'] } }))).toEqual([publicCandidate]);
    expect(run(request({ provider: { only: ['anthropic'] } }))).toEqual([publicCandidate]);
    expect(run(request({ provider: { only: ['openai'] } }))).toHaveLength(2);
    expect(run(request({ provider: { order: ['azure'], allow_fallbacks: false } }))).toEqual([publicCandidate]);
    expect(run(request({ provider: { data_collection: 'deny' } }))).toEqual([publicCandidate]);
    expect(run(request({ provider: { data_collection: 'deny' } }), [{ ...privateEndpoint, declared_zdr: true }])).toHaveLength(2);
  });

  it("applies max_price at the endpoint's own prices ($1 / $2 per million tokens)", () => {
    expect(run(request({ provider: { max_price: { prompt: 500_000_000n } } }))).toEqual([publicCandidate]);
    expect(run(request({ provider: { max_price: { completion: 1_999_999_999n } } }))).toEqual([publicCandidate]);
    expect(run(request({ provider: { max_price: { prompt: 1_000_000_000n, completion: 2_000_000_000n } } }))).toHaveLength(2);
  });

  it('leaves out the parameters its model does not support, or the endpoint itself when the request requires them', () => {
    const [first] = run(request({}, { temperature: 0.5, top_k: 3 }));
    expect(first).toMatchObject({ privateEndpoint, ignoredParameters: ['top_k'] });
    expect(run(request({ provider: { require_parameters: true } }, { top_k: 3 }))).toEqual([publicCandidate]);
  });

  it('asks for no service tier: the tiers of the public endpoint it borrows its capabilities from are not its own', () => {
    const tiered: Catalog = { models: [{ ...catalog.models[0]!, endpoints: [{ ...publicEndpoint, service_tiers: ['default', 'priority'] }] }], byId: new Map() };
    tiered.byId.set('openai/gpt-4o', tiered.models[0]!);
    const [first] = run(request({ serviceTier: 'priority' }), [privateEndpoint], tiered);
    expect(first).toMatchObject({ privateEndpoint, serviceTier: undefined });
  });

  it('is left out for a request too long for its context or with images it cannot read', () => {
    expect(run(request({}, { max_output_tokens: 200_000 }))).toEqual([publicCandidate]);
    expect(run(request({}, { messages: [{ role: 'user', content: [{ type: 'image', url: 'https://example.com/a.png' }] }] }))).toEqual([publicCandidate]);
  });
});

describe("a private endpoint's upstream key", () => {
  const released: string[] = [];
  let now = 0;
  const vault = {
    release: async (_ref: unknown, name: string, url: string) => {
      released.push(`${name} ${url}`);
      if (url.includes('refused')) throw new Error('secret not released for this host');
      return `key-of-${name}`;
    },
  };
  const source = new PrivateEndpointSource({ list: async () => [] }, vault as never, false, 2000, () => now);

  it('is kept a minute per secret and base URL; a new base URL or a refusal is asked of the vault again', async () => {
    const endpoint = { id: 'pe-1', org_id: 'org', workspace_id: 'ws', secret_name: 's1', base_url: 'https://a.example/v1' };
    const [first, second] = await Promise.all([source.apiKey(endpoint), source.apiKey(endpoint)]);
    expect([first, second]).toEqual(['key-of-s1', 'key-of-s1']);
    expect(await source.apiKey(endpoint)).toBe('key-of-s1');
    expect(released).toEqual(['s1 https://a.example/v1']);
    // Moved to another host: the vault decides again (its host binding), nothing is served from memory.
    await expect(source.apiKey({ ...endpoint, base_url: 'https://refused.example/v1' })).rejects.toThrow('not released');
    await expect(source.apiKey({ ...endpoint, base_url: 'https://refused.example/v1' })).rejects.toThrow('not released');
    expect(released).toHaveLength(3);
    now += 61_000;
    expect(await source.apiKey(endpoint)).toBe('key-of-s1');
    expect(released).toHaveLength(4);
  });
});
