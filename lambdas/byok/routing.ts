// BYOK's rule for routing (applied to the candidates by inference/middleware/byok.ts): for each candidate endpoint whose provider has usable BYOK credentials, the customer's
// credentials come first (ascending sort_order), then the gateway's own endpoint, then credentials marked
// is_fallback. is_required drops the gateway's own endpoint for the models the credential applies to;
// is_byok_only drops it for every model of that provider. A credential applies when it is enabled, global
// or for the caller's workspace, and its model, key and user allowlists (when set) include the request's.
import type { CatalogEndpoint } from '../catalog/index.js';
import type { ByokCredential } from './types.js';

export interface ByokContext {
  workspaceId: string;
  keyHash: string;
  user: string | undefined;
}

function inScope(credential: ByokCredential, context: ByokContext): boolean {
  return (credential.workspace_id === null || credential.workspace_id === context.workspaceId)
    && (credential.allowed_api_key_hashes === null || credential.allowed_api_key_hashes.includes(context.keyHash))
    && (credential.allowed_user_ids === null || (context.user !== undefined && credential.allowed_user_ids.includes(context.user)));
}

/** How one endpoint may be called for this caller: with which credentials first and last, and whether with the gateway's own. */
export interface EndpointCredentials {
  first: ByokCredential[];
  shared: boolean;
  last: ByokCredential[];
}

/**
 * The one decision of BYOK for an endpoint, used by routing (inference/middleware/byok.ts withByokCandidates) and by the models a key
 * may use (catalog modelsForKey): an endpoint with no credential and without the gateway's own is one
 * the caller cannot call.
 */
export function endpointCredentials(endpoint: Pick<CatalogEndpoint, 'adapter' | 'provider' | 'model'>, credentials: ByokCredential[], context: ByokContext): EndpointCredentials {
  // Bedrock endpoints run on the function's own AWS role: there is no key of the customer's to put in.
  if (credentials.length === 0 || endpoint.adapter === 'bedrock') return { first: [], shared: true, last: [] };
  const scoped = credentials.filter((credential) => credential.provider === endpoint.provider && inScope(credential, context));
  const applying = scoped.filter((credential) => credential.allowed_models === null || credential.allowed_models.includes(endpoint.model));
  const bySort = (a: ByokCredential, b: ByokCredential) => a.sort_order - b.sort_order || a.created_at.localeCompare(b.created_at);
  return {
    first: applying.filter((credential) => !credential.is_fallback).sort(bySort),
    shared: !applying.some((credential) => credential.is_required) && !scoped.some((credential) => credential.is_byok_only),
    last: applying.filter((credential) => credential.is_fallback).sort(bySort),
  };
}

/** Whether the caller can call the endpoint at all: with one of its credentials or with the gateway's own. */
export function isUsableEndpoint(endpoint: Pick<CatalogEndpoint, 'adapter' | 'provider' | 'model'>, credentials: ByokCredential[], context: ByokContext): boolean {
  const { first, shared, last } = endpointCredentials(endpoint, credentials, context);
  return shared || first.length > 0 || last.length > 0;
}

/**
 * The endpoints a key can call with these credentials (the catalog's listing for the key): the request's
 * end user is not known there, so credentials limited to end users are left out, as for a request without
 * `user`. Undefined when there are no credentials: nothing narrows the catalog.
 */
export function usableEndpointFilter(credentials: ByokCredential[], key: { workspace_id: string; hash: string }): ((endpoint: CatalogEndpoint) => boolean) | undefined {
  if (credentials.length === 0) return undefined;
  const context = { workspaceId: key.workspace_id, keyHash: key.hash, user: undefined };
  return (endpoint) => isUsableEndpoint(endpoint, credentials, context);
}
