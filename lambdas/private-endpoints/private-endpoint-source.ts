// What routing needs of private endpoints: each organization's active ones (cached like keys), each as the
// catalog endpoint it adds to its model, and its upstream key, released from the vault for its base URL's
// host only and kept in memory for a minute (one audited release a minute per process, not one a request).
import { createHash } from 'node:crypto';
import type { Catalog, CatalogEndpoint } from '../catalog/index.js';
import { SPEECH_ADAPTERS } from '../catalog/index.js';
import { usdToNanos } from '../platform/money.js';
import { RecordCache } from '../platform/record-cache.js';
import type { Vault } from '../vault/index.js';
import type { PrivateEndpointRepository } from './private-endpoint-repository.js';
import { privateEndpointVaultRef, type PrivateEndpoint } from './types.js';

/** How long a released upstream key is kept in memory. */
const KEY_TTL_MS = 60_000;

/** The catalog endpoint whose wire format and capabilities a private endpoint of `provider` takes, if any. */
export function providerTemplate(catalog: Catalog, modelId: string, provider: string): CatalogEndpoint | undefined {
  const usable = (endpoint: CatalogEndpoint) => endpoint.provider === provider && endpoint.adapter !== 'bedrock' && !SPEECH_ADAPTERS.has(endpoint.adapter);
  const own = catalog.byId.get(modelId)?.endpoints.find(usable);
  if (own) return own;
  for (const model of catalog.models) {
    const found = model.endpoints.find(usable);
    if (found) return found;
  }
  return undefined;
}

/** The endpoint a private endpoint adds to its model; undefined when the model or provider left the catalog. */
export function catalogEndpointOf(endpoint: PrivateEndpoint, catalog: Catalog): CatalogEndpoint | undefined {
  const model = catalog.byId.get(endpoint.model_permaslug);
  const template = providerTemplate(catalog, endpoint.model_permaslug, endpoint.provider_slug);
  if (!model || !template) return undefined;
  // Capabilities of the model as this provider serves it publicly, else as its first endpoint does.
  const capabilities = model.endpoints.find((entry) => entry.provider === endpoint.provider_slug) ?? model.endpoints[0] ?? template;
  const price = (usd: string | undefined) => (usd === undefined ? 0n : usdToNanos(usd));
  return {
    ...capabilities,
    model: model.id,
    // Its own provider name: its attempts, failures and rollups are its own, never the public endpoint's
    // (whose uptime every tenant sees). A guardrail's provider list names it so too.
    provider: `private:${endpoint.id}`,
    provider_name: `${template.provider_name} (private endpoint)`,
    adapter: template.adapter,
    base_url: endpoint.base_url,
    upstream_model: endpoint.upstream_model_id,
    pricing: { prompt: price(endpoint.pricing?.prompt), completion: price(endpoint.pricing?.completion), request: 0n, input_cache_read: 0n, input_cache_write: 0n, internal_reasoning: 0n },
    // Only a declared zero-retention deployment says it keeps nothing.
    data_collection: endpoint.declared_zdr === true ? 'deny' : 'allow',
    // Never the gateway's own credential: the endpoint is called with its own key, or not at all.
    credential: undefined,
    batch_api: undefined,
    batch_discount_percent: undefined,
  } satisfies CatalogEndpoint;
}

/** What validation covers: a change to any of it makes a validation stale. */
export function fingerprintOf(endpoint: Pick<PrivateEndpoint, 'model_permaslug' | 'provider_slug' | 'upstream_model_id' | 'base_url' | 'secret_name'>): string {
  return createHash('sha256').update(JSON.stringify([endpoint.model_permaslug, endpoint.provider_slug, endpoint.upstream_model_id, endpoint.base_url, endpoint.secret_name])).digest('hex').slice(0, 32);
}

export class PrivateEndpointSource {
  private readonly cache: RecordCache<PrivateEndpoint[]>;
  private readonly load: (orgId: string) => Promise<PrivateEndpoint[]>;
  private readonly keys: RecordCache<string>;

  /**
   * @param publicOnly the endpoints' hosts are reached only at public addresses (in a cloud account); npm start
   * allows private ones (GATEWAY_PRIVATE_ENDPOINT_PRIVATE_HOSTS=allow)
   */
  constructor(repository: Pick<PrivateEndpointRepository, 'list'>, private readonly vault: Pick<Vault, 'release'> | undefined, readonly publicOnly: boolean, ttlMs = 2000, now: () => number = Date.now) {
    this.cache = new RecordCache<PrivateEndpoint[]>(ttlMs);
    this.keys = new RecordCache<string>(KEY_TTL_MS, 1000, now);
    this.load = async (orgId) => (await repository.list(orgId, false)).filter((endpoint) => endpoint.status === 'active');
  }

  /** The organization's active endpoints, synchronously when cached. */
  activeFor(orgId: string): PrivateEndpoint[] | Promise<PrivateEndpoint[]> {
    return this.cache.fresh(orgId, this.load) ?? this.cache.getOrLoad(orgId, this.load).then((list) => list ?? []);
  }

  invalidate(orgId: string): void {
    this.cache.invalidate(orgId);
  }

  /** Starts reading the active endpoints when they are not cached (RecordCache.warm). */
  warm(orgId: string): void {
    this.cache.warm(orgId, this.load);
  }

  /**
   * The endpoint's upstream key, for a request to its base URL (the vault refuses any other host). Kept per
   * secret and base URL, so a base URL changed since is asked of the vault again, never served from memory.
   */
  apiKey(endpoint: Pick<PrivateEndpoint, 'id' | 'org_id' | 'workspace_id' | 'secret_name' | 'base_url'>): Promise<string> {
    const vault = this.vault;
    if (!vault) return Promise.reject(new Error('private endpoints need the vault (GATEWAY_KMS_KEY_ID)'));
    const load = () => vault.release(privateEndpointVaultRef(endpoint.org_id, endpoint.workspace_id), endpoint.secret_name, endpoint.base_url, `private-endpoint:${endpoint.id}`);
    const entry = `${endpoint.secret_name} ${endpoint.base_url}`;
    const cached = this.keys.fresh(entry, load);
    return cached !== undefined ? Promise.resolve(cached) : this.keys.getOrLoad(entry, load) as Promise<string>;
  }

}
