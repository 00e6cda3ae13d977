// Private endpoints' pure parts: the catalog endpoint one adds (never the gateway's credential, its own prices,
// data collection only as declared) and BYOK leaving private candidates alone.
import { describe, expect, it } from '@jest/globals';
import { catalogEndpointOf } from '../../lambdas/private-endpoints/index.js';
import { withByokCandidates } from '../../lambdas/inference/middleware/byok.js';
import type { Catalog, CatalogEndpoint } from '../../lambdas/catalog/index.js';
import type { PrivateEndpoint } from '../../lambdas/private-endpoints/index.js';
import type { ByokCredential } from '../../lambdas/byok/index.js';
import type { Candidate } from '../../lambdas/inference/routing.js';

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
