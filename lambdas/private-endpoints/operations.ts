// The private endpoint routes: drafts, their validation by a live call through the adapter, activation,
// disabling and enabling, prices, and the states between (an illegal transition is a 409).
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { Catalog } from '../catalog/index.js';
import { isPrivateAddress } from '../platform/public-address.js';
import type { WorkspaceRepository } from '../organizations/index.js';
import { ConflictError, InvalidInputError, NotFoundError, UnavailableError, UnprocessableError } from '../platform/errors.js';
import type { Principal } from '../platform/http/auth.js';
import type { AdapterRegistry } from '../providers/registry.js';
import { ProviderError } from '../providers/provider-error.js';
import { hostOfUrl, versionedSecretName, type Vault } from '../vault/index.js';
import { catalogEndpointOf, fingerprintOf, providerTemplate } from './private-endpoint-source.js';
import type { PrivateEndpointRepository } from './private-endpoint-repository.js';
import type { PrivateEndpointOperations } from './routes.js';
import type { endpointSchema, managedSchema, summarySchema } from './schemas.js';
import { privateEndpointVaultRef, type PrivateEndpoint, type Validation, type ValidationCheck } from './types.js';

export interface PrivateEndpointPorts {
  endpoints: PrivateEndpointRepository;
  /** Absent without a KMS key: no endpoint can keep its upstream key, so none is created. */
  vault: Pick<Vault, 'put' | 'delete'> | undefined;
  /** Its upstream key, released for its base URL's host (the routing source's, shared with inference). */
  apiKey: (endpoint: PrivateEndpoint) => Promise<string>;
  catalog: Catalog;
  adapters: Pick<AdapterRegistry, 'get'>;
  workspaces: Pick<WorkspaceRepository, 'getWorkspace'>;
  /** Drops the organization's active endpoints cached for routing: a change applies to its next request here. */
  invalidate: (orgId: string) => void;
  clock: () => Date;
  /** Base URLs on private and loopback addresses are accepted (npm start). */
  allowPrivateHosts: boolean;
  /** How long the validation call may take. */
  validationTimeoutMs?: number;
}

const VALIDATION_TIMEOUT_MS = 15_000;

export function createPrivateEndpointOperations(deps: PrivateEndpointPorts): PrivateEndpointOperations {
  const orgOf = (principal: Principal) => principal.key.org_id;

  const modelOf = (endpoint: PrivateEndpoint) => deps.catalog.byId.get(endpoint.model_permaslug);
  const summary = (endpoint: PrivateEndpoint): z.infer<typeof summarySchema> => {
    const model = modelOf(endpoint);
    return {
      id: endpoint.id, created_at: endpoint.created_at, model_name: model?.name ?? null, model_permaslug: endpoint.model_permaslug, model_slug: model?.id ?? null,
      provider_name: providerTemplate(deps.catalog, endpoint.model_permaslug, endpoint.provider_slug)?.provider_name ?? endpoint.provider_slug, status: endpoint.status,
    };
  };
  const managed = (endpoint: PrivateEndpoint): z.infer<typeof managedSchema> => ({ ...summary(endpoint), declared_region: endpoint.declared_region, declared_zdr: endpoint.declared_zdr });
  const full = (endpoint: PrivateEndpoint): z.infer<typeof endpointSchema> => ({
    ...(({ model_name, model_slug, provider_name }) => ({ model_name, model_slug, provider_name }))(summary(endpoint)),
    id: endpoint.id, model_permaslug: endpoint.model_permaslug, provider_slug: endpoint.provider_slug, upstream_model_id: endpoint.upstream_model_id, base_url: endpoint.base_url,
    declared_region: endpoint.declared_region, declared_zdr: endpoint.declared_zdr, pricing: endpoint.pricing, status: endpoint.status, workspace_id: endpoint.workspace_id,
    validation: endpoint.validation ? { passed: endpoint.validation.passed, checks: endpoint.validation.checks, at: endpoint.validation.at, stale: endpoint.validation.fingerprint !== fingerprintOf(endpoint) } : null,
    created_at: endpoint.created_at, updated_at: endpoint.updated_at,
  });

  async function found(principal: Principal, id: string): Promise<PrivateEndpoint> {
    const endpoint = await deps.endpoints.get(orgOf(principal), id);
    if (!endpoint) throw new NotFoundError(`Private endpoint not found: ${id}`);
    return endpoint;
  }

  function vault(): Pick<Vault, 'put' | 'delete'> {
    if (!deps.vault) throw new UnavailableError('Private endpoints keep their upstream keys in the vault, which needs a KMS key (GATEWAY_KMS_KEY_ID)');
    return deps.vault;
  }

  function checkBaseUrl(baseUrl: string): string {
    const host = hostOfUrl(baseUrl)!;
    if (deps.allowPrivateHosts) return host;
    if (isPrivateAddress(host)) throw new InvalidInputError(`Invalid body.base_url: ${host} is a private or loopback address`);
    // The upstream key goes with every request: never in clear over the network.
    if (!baseUrl.startsWith('https://')) throw new InvalidInputError('Invalid body.base_url: must be an https URL');
    return host;
  }

  /** Stores a change of the version read (409 when another came first) and drops routing's cached copy. */
  async function save(next: PrivateEndpoint, read: PrivateEndpoint): Promise<PrivateEndpoint> {
    if (!(await deps.endpoints.put(next, read))) throw new ConflictError(`Private endpoint ${read.id} was changed meanwhile; read it again and retry`);
    deps.invalidate(next.org_id);
    return next;
  }

  /** The live checks: the model and provider in the catalog, then one small generation through the adapter. */
  async function validate(endpoint: PrivateEndpoint): Promise<Validation> {
    const checks: ValidationCheck[] = [];
    const at = deps.clock().toISOString();
    const done = (): Validation => ({ passed: checks.every((check) => check.passed), checks, at, fingerprint: fingerprintOf(endpoint) });
    checks.push(modelOf(endpoint) ? { name: 'model_found', passed: true } : { name: 'model_found', passed: false, reason: 'model_not_found' });
    const template = providerTemplate(deps.catalog, endpoint.model_permaslug, endpoint.provider_slug);
    checks.push(template ? { name: 'provider_found', passed: true } : { name: 'provider_found', passed: false, reason: 'provider_not_found' });
    const target = catalogEndpointOf(endpoint, deps.catalog);
    if (!target) return done();
    let apiKey: string;
    try {
      apiKey = await deps.apiKey(endpoint);
    } catch {
      checks.push({ name: 'auth_ok', passed: false, reason: 'key_decryption_failed' });
      return done();
    }
    try {
      const adapter = await deps.adapters.get(target, { id: `validate:${endpoint.id}`, apiKey, publicOnly: !deps.allowPrivateHosts });
      const result = await adapter.generate({ model: target.upstream_model, messages: [{ role: 'user', content: [{ type: 'text', text: 'Reply with the word ok.' }] }], max_output_tokens: 16 },
        { signal: AbortSignal.timeout(deps.validationTimeoutMs ?? VALIDATION_TIMEOUT_MS) });
      checks.push({ name: 'auth_ok', passed: true, upstream_status: 200 });
      checks.push({ name: 'upstream_ok', passed: true, upstream_status: 200, upstream_message: null });
      const reported = result.usage.input_tokens > 0 || result.usage.output_tokens > 0;
      checks.push(reported && !result.usage_estimated ? { name: 'usage_reported', passed: true } : { name: 'usage_reported', passed: false, reason: 'missing_usage' });
    } catch (err) {
      // A host found at connect time to resolve to a private address: said so (the adapter wraps the refusal).
      const refused = [err, (err as Error | undefined)?.cause].find((cause): cause is Error => (cause as Error | undefined)?.name === 'RefusedAddressError');
      // Anything else than a provider's failure (a bug, a refusal of the endpoint itself) is not the upstream's.
      if (!refused && !(err instanceof ProviderError)) throw err;
      // Nothing answered (no connection, no reply in time): the key was not checked either.
      if (refused || (err instanceof ProviderError && (err.kind === 'network' || err.kind === 'timeout'))) {
        const message = refused ? refused.message : (err as ProviderError).kind === 'timeout' ? 'upstream did not answer in time' : 'upstream could not be reached';
        checks.push({ name: 'auth_ok', passed: false, reason: 'upstream_unreachable', upstream_message: 'not checked: the upstream did not answer' });
        checks.push({ name: 'upstream_ok', passed: false, reason: 'upstream_unreachable', upstream_message: message });
        return done();
      }
      const failure = err as ProviderError;
      // It answered, but its reply was cut off or unreadable: no status of its own to report.
      if (failure.kind !== 'http') {
        checks.push({ name: 'auth_ok', passed: true });
        checks.push({ name: 'upstream_ok', passed: false, reason: 'upstream_error', upstream_message: 'upstream reply was cut off or could not be read' });
        return done();
      }
      // The status only: what the host answered is its business (and could be anything it serves).
      const status = failure.status;
      const message = `upstream answered ${status}`;
      const denied = status === 401 || status === 403;
      checks.push({ name: 'auth_ok', passed: !denied, upstream_status: status, ...(denied ? { reason: 'upstream_error', upstream_message: message } : {}) });
      checks.push({ name: 'upstream_ok', passed: false, reason: 'upstream_error', upstream_status: status, upstream_message: message });
    }
    return done();
  }

  async function activate(endpoint: PrivateEndpoint): Promise<PrivateEndpoint> {
    if (endpoint.status !== 'draft') throw new ConflictError(`Private endpoint ${endpoint.id} is ${endpoint.status}: only a draft is activated (a disabled one is enabled)`);
    if (!endpoint.validation) throw new ConflictError(`Private endpoint ${endpoint.id} was never validated: validate it first (not_validated)`);
    if (endpoint.validation.fingerprint !== fingerprintOf(endpoint)) throw new ConflictError(`Private endpoint ${endpoint.id} changed since its validation: validate it again (validation_stale)`);
    if (!endpoint.validation.passed) throw new ConflictError(`Private endpoint ${endpoint.id} failed its last validation: ${endpoint.validation.checks.filter((check) => !check.passed).map((check) => `${check.name}${check.reason ? ` (${check.reason})` : ''}`).join(', ')}`);
    return { ...endpoint, status: 'active', activated: true, updated_at: deps.clock().toISOString() };
  }

  const workspaceCheck = (endpoint: PrivateEndpoint, workspaceId: string, field: string) => {
    if (workspaceId !== endpoint.workspace_id) throw new InvalidInputError(`Invalid ${field}: the endpoint serves workspace ${endpoint.workspace_id}`);
  };

  return {
    async listPrivateEndpoints({ principal }) {
      const all = (await deps.endpoints.list(orgOf(principal), true)).sort((a, b) => b.created_at.localeCompare(a.created_at) || a.id.localeCompare(b.id));
      return { body: { data: all.map(summary) } };
    },

    async createPrivateEndpoint({ principal, body }) {
      const orgId = orgOf(principal);
      const workspaceId = body.workspace_id ?? principal.key.workspace_id;
      if (!(await deps.workspaces.getWorkspace(orgId, workspaceId))) throw new InvalidInputError(`Invalid body.workspace_id: no workspace ${workspaceId} in this organization`);
      if (!deps.catalog.byId.has(body.model_permaslug)) throw new NotFoundError(`Model not found: ${body.model_permaslug} is not in the catalog (model_not_found)`);
      if (!providerTemplate(deps.catalog, body.model_permaslug, body.provider_slug)) {
        throw new NotFoundError(`Provider not found: ${body.provider_slug} is not a catalog provider a private endpoint can speak to (provider_not_found)`);
      }
      const host = checkBaseUrl(body.base_url);
      const now = deps.clock().toISOString();
      const id = randomUUID();
      let endpoint: PrivateEndpoint = {
        id, org_id: orgId, workspace_id: workspaceId, model_permaslug: body.model_permaslug, provider_slug: body.provider_slug, upstream_model_id: body.upstream_model_id,
        base_url: body.base_url, declared_region: body.declared_region ?? null, declared_zdr: body.declared_zdr ?? null, pricing: body.pricing ?? null,
        status: 'draft', validation: null, secret_name: versionedSecretName('pe', id), activated: false, created_at: now, updated_at: now,
      };
      if (body.activate) workspaceCheck(endpoint, body.activate.workspace_id, 'body.activate.workspace_id');
      await vault().put(privateEndpointVaultRef(orgId, workspaceId), endpoint.secret_name, [host], body.api_key);
      await deps.endpoints.put(endpoint);
      if (body.activate) {
        const validated = { ...endpoint, validation: await validate(endpoint), updated_at: deps.clock().toISOString() };
        endpoint = await save(validated, endpoint);
        // A draft that failed stays a draft: the reply says so with a 422, and the draft is kept.
        if (!validated.validation.passed) {
          deps.invalidate(orgId);
          throw new UnprocessableError(`Private endpoint ${id} was created as a draft but failed validation: ${validated.validation.checks.filter((check) => !check.passed).map((check) => `${check.name}${check.reason ? ` (${check.reason})` : ''}`).join(', ')}`, {
            reply: { data: { endpoint: managed(endpoint), validation: { passed: false, checks: validated.validation.checks } } },
          });
        }
        endpoint = await save(await activate(endpoint), endpoint);
      }
      deps.invalidate(orgId);
      return { status: 201, body: { data: managed(endpoint) } };
    },

    async getPrivateEndpoint({ principal, params }) {
      return { body: { data: full(await found(principal, params.id)) } };
    },

    async updatePrivateEndpoint({ principal, params, body }) {
      const current = await found(principal, params.id);
      if (current.status !== 'draft') throw new ConflictError(`Private endpoint ${current.id} is ${current.status}: only a draft's upstream changes (already_active); delete and create it again`);
      const baseUrl = body.base_url ?? current.base_url;
      const host = checkBaseUrl(baseUrl);
      if (host !== hostOfUrl(current.base_url) && body.api_key === undefined) {
        throw new InvalidInputError(`Invalid body.api_key: the base URL moves from ${hostOfUrl(current.base_url)} to ${host}; send the upstream key again`);
      }
      const upstreamModel = body.upstream_model_id ?? current.upstream_model_id;
      const upstreamChanged = upstreamModel !== current.upstream_model_id || baseUrl !== current.base_url;
      let next: PrivateEndpoint = {
        ...current,
        upstream_model_id: upstreamModel,
        base_url: baseUrl,
        // Data-policy declarations left out are kept while the upstream is unchanged, and cleared when it changes.
        declared_zdr: body.declared_zdr !== undefined ? body.declared_zdr : upstreamChanged ? null : current.declared_zdr,
        declared_region: body.declared_region !== undefined ? body.declared_region : upstreamChanged ? null : current.declared_region,
        // Kept: a change of what it validated makes it stale (its fingerprint), and activation refuses it.
        updated_at: deps.clock().toISOString(),
      };
      if (body.api_key !== undefined) {
        next = { ...next, secret_name: versionedSecretName('pe', current.id) };
        await vault().put(privateEndpointVaultRef(current.org_id, current.workspace_id), next.secret_name, [host], body.api_key);
      }
      try {
        await save(next, current);
      } catch (err) {
        if (next.secret_name !== current.secret_name) await vault().delete(privateEndpointVaultRef(current.org_id, current.workspace_id), next.secret_name);
        throw err;
      }
      if (next.secret_name !== current.secret_name) await vault().delete(privateEndpointVaultRef(current.org_id, current.workspace_id), current.secret_name);
      return { body: { data: full(next) } };
    },

    async deletePrivateEndpoint({ principal, params, query }) {
      const current = await found(principal, params.id);
      if (query.draft_only === 'true' && current.activated) throw new ConflictError(`Private endpoint ${current.id} has been activated: draft_only refuses to delete it`);
      await deps.endpoints.delete(current.org_id, current.id);
      await vault().delete(privateEndpointVaultRef(current.org_id, current.workspace_id), current.secret_name);
      deps.invalidate(current.org_id);
      return { body: { data: { id: current.id } } };
    },

    async validatePrivateEndpoint({ principal, params, body }) {
      const current = await found(principal, params.id);
      workspaceCheck(current, body.workspace_id, 'body.workspace_id');
      if (current.status !== 'draft') throw new ConflictError(`Private endpoint ${current.id} is ${current.status}: only a draft is validated`);
      const validation = await validate(current);
      await save({ ...current, validation, updated_at: deps.clock().toISOString() }, current);
      return { body: { data: { passed: validation.passed, checks: validation.checks } } };
    },

    async activatePrivateEndpoint({ principal, params }) {
      const current = await found(principal, params.id);
      return { body: { data: managed(await save(await activate(current), current)) } };
    },

    async disablePrivateEndpoint({ principal, params }) {
      const current = await found(principal, params.id);
      if (current.status !== 'active') throw new ConflictError(`Private endpoint ${current.id} is ${current.status}: only an active endpoint is disabled`);
      return { body: { data: managed(await save({ ...current, status: 'disabled', updated_at: deps.clock().toISOString() }, current)) } };
    },

    async enablePrivateEndpoint({ principal, params }) {
      const current = await found(principal, params.id);
      if (current.status !== 'disabled') throw new ConflictError(`Private endpoint ${current.id} is ${current.status}: only a disabled endpoint is enabled`);
      return { body: { data: managed(await save({ ...current, status: 'active', updated_at: deps.clock().toISOString() }, current)) } };
    },

    async setPrivateEndpointPricing({ principal, params, body }) {
      const current = await found(principal, params.id);
      return { body: { data: full(await save({ ...current, pricing: body.pricing, updated_at: deps.clock().toISOString() }, current)) } };
    },
  };
}
