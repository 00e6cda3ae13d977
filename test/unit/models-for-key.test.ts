// The models a key may use (catalog modelsForKey) against what routing does with the same BYOK credentials
// (inference/middleware/byok withByokCandidates): a model is listed exactly when routing leaves it a candidate.
import { describe, expect, it } from '@jest/globals';
import { buildCatalog, catalogFileSchema } from '../../lambdas/catalog/catalog-config.js';
import { endpointKey } from '../../lambdas/catalog/types.js';
import { modelsForKey } from '../../lambdas/catalog/operations.js';
import { usableEndpointFilter } from '../../lambdas/byok/routing.js';
import { withByokCandidates } from '../../lambdas/inference/middleware/byok.js';
import type { ByokCredential } from '../../lambdas/byok/types.js';

const endpoint = (provider: string, adapter: 'openai-chat' | 'bedrock' = 'openai-chat') => ({
  provider, adapter, upstream_model: `${provider}-model`, pricing: { prompt: '0.000001', completion: '0.000001' }, context_length: 8192,
  ...(adapter === 'bedrock' ? {} : { base_url: `https://${provider}.example/v1` }),
});
const catalog = buildCatalog(catalogFileSchema.parse({
  models: [
    { id: 'acme/one', endpoints: [endpoint('acme')] },
    { id: 'acme/two', endpoints: [endpoint('acme')] },
    { id: 'mixed/three', endpoints: [endpoint('acme'), endpoint('other')] },
    { id: 'aws/four', endpoints: [endpoint('acme', 'bedrock')] },
  ],
}));
const ALL = ['acme/one', 'acme/two', 'mixed/three', 'aws/four'];
const key = { workspace_id: 'ws-1', hash: 'a'.repeat(64) };

function credential(overrides: Partial<ByokCredential>): ByokCredential {
  return {
    id: 'cred', org_id: 'org', provider: 'acme', name: null, label: '', disabled: false, is_fallback: false, is_required: false,
    is_byok_only: false, sort_order: 0, allowed_models: null, allowed_user_ids: null, allowed_api_key_hashes: null, declared_zdr: null,
    workspace_id: null, sealed: '', created_at: '', updated_at: '', ...overrides,
  };
}

/** The models routing can still serve to the key: those with a candidate left once BYOK is applied. */
function routable(credentials: ByokCredential[]): string[] {
  return catalog.models.filter((model) => withByokCandidates(
    model.endpoints.map((entry) => ({ endpoint: entry, key: endpointKey(entry), ignoredParameters: [], serviceTier: undefined })),
    credentials, { workspaceId: key.workspace_id, keyHash: key.hash, user: undefined },
  ).length > 0).map((model) => model.id);
}

describe('modelsForKey', () => {
  it.each([
    ['no credentials', [], ALL],
    ['a credential for every model', [credential({})], ALL],
    ['is_required: the credential itself serves its models', [credential({ is_required: true, allowed_models: ['acme/one'] })], ALL],
    ['is_byok_only for another model: acme models without an endpoint are left out (not Bedrock, not another provider)', [credential({ is_byok_only: true, allowed_models: ['acme/one'] })], ['acme/one', 'mixed/three', 'aws/four']],
    ['is_byok_only with a fallback credential for the models it leaves out', [credential({ is_byok_only: true, allowed_models: ['acme/one'] }), credential({ id: 'f', is_fallback: true })], ALL],
    ['is_byok_only for another key', [credential({ is_byok_only: true, allowed_models: [], allowed_api_key_hashes: ['b'.repeat(64)] })], ALL],
    ['is_byok_only for another workspace', [credential({ is_byok_only: true, allowed_models: [], workspace_id: 'ws-2' })], ALL],
    ['is_byok_only for this workspace', [credential({ is_byok_only: true, allowed_models: [], workspace_id: 'ws-1' })], ['mixed/three', 'aws/four']],
    ['is_byok_only limited to end users (unknown here)', [credential({ is_byok_only: true, allowed_models: [], allowed_user_ids: ['u'] })], ALL],
  ] as const)('%s', (_name, credentials, expected) => {
    const listed = modelsForKey(catalog, usableEndpointFilter([...credentials], key)).map((model) => model.id);
    expect(listed).toEqual(expected);
    expect(listed).toEqual(routable([...credentials]));
  });
});
