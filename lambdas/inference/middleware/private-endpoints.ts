// Private endpoints as the pipeline's first middleware: a workspace's active private endpoints of a requested
// model go before that model's public endpoints (preferred, with the public ones as fallbacks), so the
// guardrails and BYOK middleware after it see them like any other. Each is served with its own upstream key
// and billed to it, as BYOK is: its generations are recorded at its prices and held against no credits.
// Without a source, or for an organization without active endpoints (cached), it costs a map lookup.
import { catalogEndpointOf, type PrivateEndpoint } from '../../private-endpoints/index.js';
import type { ByokCredential } from '../../byok/index.js';
import { EndpointRules, type Candidate } from '../routing.js';
import type { GenerationCall, GenerationMiddleware, GenerationParams } from '../middleware.js';

/** What settlement and routing read of a BYOK credential, for an endpoint billed to its own key. */
function ownKey(endpoint: PrivateEndpoint): ByokCredential {
  return {
    id: `private-endpoint:${endpoint.id}`, org_id: endpoint.org_id, provider: endpoint.provider_slug, name: 'private endpoint', label: 'private endpoint',
    disabled: false, is_fallback: false, is_required: false, is_byok_only: false, sort_order: 0, allowed_models: [endpoint.model_permaslug],
    allowed_user_ids: null, allowed_api_key_hashes: null, declared_zdr: endpoint.declared_zdr, workspace_id: endpoint.workspace_id,
    sealed: '', created_at: endpoint.created_at, updated_at: endpoint.updated_at,
  };
}

function withPrivateEndpoints(call: GenerationCall, active: PrivateEndpoint[]): GenerationParams {
  const { params, caller, deps } = call;
  const { request } = params;
  const mine = active.filter((endpoint) => endpoint.workspace_id === caller.workspaceId && request.models.includes(endpoint.model_permaslug));
  if (mine.length === 0) return params;
  // Routing's checks of an endpoint (provider preferences by the endpoint's provider slug, max_price at its
  // own prices, data collection, context, images, required and unsupported parameters).
  const rules = new EndpointRules(request);
  const added = new Map<string, Candidate[]>();
  for (const endpoint of mine) {
    const catalogEndpoint = catalogEndpointOf(endpoint, deps.catalog);
    if (!catalogEndpoint) continue;
    const checked = rules.check(catalogEndpoint, endpoint.provider_slug.toLowerCase());
    if (typeof checked === 'string') continue;
    const list = added.get(endpoint.model_permaslug) ?? [];
    // No service tier: the capabilities it borrows may be another provider's, and a deployment's tiers are unknown.
    list.push(Object.assign({}, checked, { key: `${catalogEndpoint.model}@private-endpoint:${endpoint.id}`, serviceTier: undefined, byok: ownKey(endpoint), privateEndpoint: endpoint }));
    added.set(endpoint.model_permaslug, list);
  }
  if (added.size === 0) return params;
  // Each model's private endpoints just before its first public candidate (in the request's model order).
  const candidates: Candidate[] = [];
  for (const candidate of params.candidates) {
    const mineFirst = added.get(candidate.endpoint.model);
    if (mineFirst) {
      candidates.push(...mineFirst);
      added.delete(candidate.endpoint.model);
    }
    candidates.push(candidate);
  }
  // Models none of whose public endpoints is a candidate: in the request's order, after the rest.
  for (const model of request.models) {
    const left = added.get(model);
    if (left) candidates.push(...left);
  }
  return { request: params.request, candidates };
}

export const privateEndpointMiddleware: GenerationMiddleware = {
  transformParams(call: GenerationCall) {
    const source = call.deps.privateEndpoints;
    if (!source) return call.params;
    const active = source.activeFor(call.caller.orgId);
    return Array.isArray(active)
      ? (active.length ? withPrivateEndpoints(call, active) : call.params)
      // The list not read (the store throttled): served by the public endpoints, and said so.
      : active.then((list) => (list.length ? withPrivateEndpoints(call, list) : call.params), (err: unknown) => {
        call.deps.log.warn('private endpoints not read: the request goes to public endpoints', { org_id: call.caller.orgId, error: String(err) });
        return call.params;
      });
  },
};
