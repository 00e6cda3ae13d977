// The observability routes: destinations of the caller's organization (one workspace each), their secrets
// sealed in the vault for their host, and a connectivity test that sends one synthetic generation.
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { ConflictError, InvalidInputError, NotFoundError, UnavailableError } from '../platform/errors.js';
import type { Principal } from '../platform/http/auth.js';
import { listPage } from '../platform/http/list-page.js';
import type { WorkspaceRepository } from '../organizations/index.js';
import type { ApiKeyRepository } from '../keys/index.js';
import { ConfigError, destinationHost, joinedConfig, mergedConfig, newConfig, serviceUrl, splitConfig, type FullConfig } from './config.js';
import type { DestinationRepository } from './destination-repository.js';
import type { DestinationSecrets } from './destination-secrets.js';
import { deliver } from './deliver.js';
import type { DeliveryMessage } from './event.js';
import type { ObservabilityOperations } from './routes.js';
import type { destinationSchema } from './schemas.js';
import type { Destination, DestinationType, FilterRules } from './types.js';
import { versionedSecretName } from '../vault/index.js';

export interface ObservabilityPorts {
  destinations: DestinationRepository;
  /** Absent without a vault (no KMS key): destinations cannot keep secrets, so none is created. */
  secrets: DestinationSecrets | undefined;
  workspaces: Pick<WorkspaceRepository, 'getWorkspace'>;
  keys: Pick<ApiKeyRepository, 'get'>;
  /** Drops the organization's destinations cached for delivery: a change applies to its next generation here. */
  invalidate: (orgId: string) => void;
  clock: () => Date;
  /** Destinations on private and loopback addresses are accepted (npm start). */
  allowPrivateHosts: boolean;
  /** How long the connectivity test waits for the destination. */
  timeoutMs: number;
  /** The connectivity test's HTTP client (tests). */
  fetch?: typeof fetch;
}

/** Destinations of one type per workspace, as the public API allows. */
const MAX_PER_TYPE = 5;

export function destinationView(destination: Destination): z.infer<typeof destinationSchema> {
  return {
    id: destination.id,
    name: destination.name,
    type: destination.type,
    config: destination.config,
    workspace_id: destination.workspace_id,
    enabled: destination.enabled,
    sampling_rate: destination.sampling_rate,
    privacy_mode: destination.privacy_mode,
    api_key_hashes: destination.api_key_hashes,
    filter_rules: destination.filter_rules,
    broadcast_generation_cost: destination.broadcast_generation_cost,
    broadcast_generation_identity: destination.broadcast_generation_identity,
    broadcast_generation_request_context: destination.broadcast_generation_request_context,
    regions: destination.regions,
    created_at: destination.created_at,
    updated_at: destination.updated_at,
  };
}

function configOrThrow<T>(make: () => T): T {
  try {
    return make();
  } catch (err) {
    if (err instanceof ConfigError) throw new InvalidInputError(err.message);
    throw err;
  }
}

/** A generation that never ran, for the connectivity test. */
function testMessage(destination: Destination, now: Date): DeliveryMessage {
  const at = now.toISOString();
  return {
    v: 1,
    destination_id: destination.id,
    org_id: destination.org_id,
    generation: {
      generation_id: `gen-test-${randomUUID()}`, created_at: at, ended_at: at, workspace_id: destination.workspace_id,
      model: 'gateway/connectivity-test', provider: 'gateway', upstream_model: 'connectivity-test', api: 'chat', streamed: false,
      status: 'completed', finish_reason: 'stop', native_finish_reason: null,
      usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cached_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0, estimated: false },
      latency_ms: 0, first_token_ms: null, generation_time_ms: 0, attempts: 0, error: null,
      trace: { trace_name: 'connectivity test' }, trace_metadata: {},
      ...(destination.privacy_mode ? {} : { input: [{ role: 'user', content: [{ type: 'text', text: 'connectivity test' }] }], output: { text: 'ok' } }),
    },
  };
}

export function createObservabilityOperations(deps: ObservabilityPorts): ObservabilityOperations {
  const orgOf = (principal: Principal) => principal.key.org_id;

  async function found(principal: Principal, id: string): Promise<Destination> {
    const destination = await deps.destinations.get(orgOf(principal), id);
    if (!destination) throw new NotFoundError(`Observability destination not found: ${id}`);
    return destination;
  }

  /** A key list names only keys of the organization. */
  async function checkKeys(principal: Principal, hashes: string[] | null | undefined): Promise<void> {
    for (const hash of hashes ?? []) {
      const key = await deps.keys.get(hash);
      if (!key || key.org_id !== orgOf(principal)) throw new InvalidInputError(`Invalid body.api_key_hashes: ${hash} is not a key of this organization`);
    }
  }

  function sealer(): DestinationSecrets {
    if (!deps.secrets) throw new UnavailableError('Observability destinations keep their secrets in the vault, which needs a KMS key (GATEWAY_KMS_KEY_ID)');
    return deps.secrets;
  }

  /** The stored config with its secrets, released for the destination's own host. */
  async function fullConfig(destination: Destination): Promise<FullConfig> {
    const secrets = destination.secret_fields.length ? await sealer().release(destination, serviceUrl(destination.type, destination.config as FullConfig)) : {};
    return joinedConfig(destination.config, secrets);
  }

  return {
    async listObservabilityDestinations({ principal, query }) {
      // The key's own workspace unless another is named (as the public API lists them).
      const workspaceId = query.workspace_id ?? principal.key.workspace_id;
      const all = (await deps.destinations.list(orgOf(principal), true))
        .filter((destination) => destination.workspace_id === workspaceId)
        .sort((a, b) => b.created_at.localeCompare(a.created_at) || a.id.localeCompare(b.id));
      return { body: listPage(all, query, destinationView) };
    },

    async createObservabilityDestination({ principal, body }) {
      const orgId = orgOf(principal);
      const workspaceId = body.workspace_id ?? principal.key.workspace_id;
      if (!(await deps.workspaces.getWorkspace(orgId, workspaceId))) throw new InvalidInputError(`Invalid body.workspace_id: no workspace ${workspaceId} in this organization`);
      await checkKeys(principal, body.api_key_hashes);
      const type = body.type as DestinationType;
      const sameType = (await deps.destinations.list(orgId, true)).filter((entry) => entry.workspace_id === workspaceId && entry.type === type);
      if (sameType.length >= MAX_PER_TYPE) throw new InvalidInputError(`Invalid body.type: a workspace has at most ${MAX_PER_TYPE} ${type} destinations (it has ${sameType.length})`);
      const config = configOrThrow(() => newConfig(type, body.config));
      const host = configOrThrow(() => destinationHost(type, config, deps.allowPrivateHosts));
      const { shown, secrets, fields } = splitConfig(type, config);
      const now = deps.clock().toISOString();
      const id = randomUUID();
      const destination: Destination = {
        id, org_id: orgId, workspace_id: workspaceId, name: body.name, type, config: shown, secret_fields: fields, secret_name: versionedSecretName('dest', id), host,
        enabled: body.enabled ?? true, sampling_rate: body.sampling_rate ?? 1, privacy_mode: body.privacy_mode ?? false,
        api_key_hashes: body.api_key_hashes ?? null, filter_rules: (body.filter_rules ?? null) as FilterRules | null,
        broadcast_generation_cost: body.broadcast_generation_cost ?? false,
        broadcast_generation_identity: body.broadcast_generation_identity ?? false,
        broadcast_generation_request_context: body.broadcast_generation_request_context ?? false,
        regions: body.regions ?? ['global'], created_at: now, updated_at: now,
      };
      // Sealed first: a destination is never stored without the secrets it needs.
      if (fields.length) await sealer().store(destination, secrets);
      await deps.destinations.put(destination);
      // Creates that raced past the count above: the oldest MAX_PER_TYPE stay (by creation, then id), the
      // rest take themselves back out and are refused as a late one would have been.
      const ranked = (await deps.destinations.list(orgId, true))
        .filter((entry) => entry.workspace_id === workspaceId && entry.type === type)
        .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
      if (ranked.findIndex((entry) => entry.id === id) >= MAX_PER_TYPE) {
        await deps.destinations.delete(orgId, id);
        if (fields.length) await sealer().remove(destination);
        throw new InvalidInputError(`Invalid body.type: a workspace has at most ${MAX_PER_TYPE} ${type} destinations (it has ${MAX_PER_TYPE})`);
      }
      deps.invalidate(orgId);
      const view = destinationView(destination);
      // A signing secret the gateway made is shown once, here.
      if (type === 'webhook' && (body.config as Record<string, unknown>).secret === undefined) view.config = { ...view.config, secret: config.secret };
      return { status: 201, body: { data: view } };
    },

    async getObservabilityDestination({ principal, params }) {
      return { body: { data: destinationView(await found(principal, params.id)) } };
    },

    async updateObservabilityDestination({ principal, params, body }) {
      const current = await found(principal, params.id);
      await checkKeys(principal, body.api_key_hashes);
      let next: Destination = { ...current };
      let sealed: Destination | undefined;
      if (body.config !== undefined) {
        const before = await fullConfig(current);
        const { config, kept } = configOrThrow(() => mergedConfig(current.type, before, body.config!, current.config));
        const host = configOrThrow(() => destinationHost(current.type, config, deps.allowPrivateHosts));
        const { shown, secrets, fields } = splitConfig(current.type, config);
        // Secrets are bound to the host they were given for: a destination moving elsewhere takes none along.
        if (host !== current.host && kept.length) {
          throw new InvalidInputError(`Invalid body.config: the destination moves from ${current.host} to ${host}; send its secret fields again (${kept.join(', ')})`);
        }
        next = { ...next, config: shown, secret_fields: fields, host };
        // Sealed again as they now are (a header removed is a change too), under a new name bound to the
        // (new) host; the item names it only once it is stored.
        if (fields.length) {
          next.secret_name = versionedSecretName('dest', current.id);
          await sealer().store(next, secrets);
          sealed = next;
        }
      }
      next = {
        ...next,
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
        ...(body.sampling_rate !== undefined ? { sampling_rate: body.sampling_rate } : {}),
        ...(body.privacy_mode !== undefined ? { privacy_mode: body.privacy_mode } : {}),
        ...(body.api_key_hashes !== undefined ? { api_key_hashes: body.api_key_hashes } : {}),
        ...(body.filter_rules !== undefined ? { filter_rules: body.filter_rules as FilterRules | null } : {}),
        ...(body.broadcast_generation_cost !== undefined ? { broadcast_generation_cost: body.broadcast_generation_cost } : {}),
        ...(body.broadcast_generation_identity !== undefined ? { broadcast_generation_identity: body.broadcast_generation_identity } : {}),
        ...(body.broadcast_generation_request_context !== undefined ? { broadcast_generation_request_context: body.broadcast_generation_request_context } : {}),
        ...(body.regions !== undefined ? { regions: body.regions } : {}),
        updated_at: deps.clock().toISOString(),
      };
      if (!(await deps.destinations.put(next, current))) {
        if (sealed) await sealer().remove(sealed);
        throw new ConflictError(`Observability destination ${current.id} was changed meanwhile; read it again and retry`);
      }
      // The secrets the item named before are nobody's any more (replaced, or no secret field is left).
      if (current.secret_fields.length && (next.secret_fields.length === 0 || next.secret_name !== current.secret_name)) await sealer().remove(current);
      deps.invalidate(current.org_id);
      return { body: { data: destinationView(next) } };
    },

    async deleteObservabilityDestination({ principal, params }) {
      const current = await found(principal, params.id);
      await deps.destinations.delete(current.org_id, current.id);
      if (current.secret_fields.length) await sealer().remove(current);
      deps.invalidate(current.org_id);
      return { body: { deleted: true } };
    },

    async testObservabilityDestination({ principal, params }) {
      const destination = await found(principal, params.id);
      const outcome = await deliver(destination, testMessage(destination, deps.clock()), {
        secrets: (entry, url) => (entry.secret_fields.length ? sealer().release(entry, url) : Promise.resolve({})),
        allowPrivateHosts: deps.allowPrivateHosts,
        timeoutMs: deps.timeoutMs,
        ...(deps.fetch ? { fetch: deps.fetch } : {}),
      }, 'test');
      return { body: { data: { ok: outcome.ok, status_code: outcome.status, latency_ms: outcome.latency_ms, error: outcome.error ?? null } } };
    },
  };
}
