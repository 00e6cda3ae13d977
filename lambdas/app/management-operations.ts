// The composition root of the management function's operations: each feature's operations built over just
// the ports it uses, once per deps (per Lambda instance, per local process, per test store).
import { setTimeout as delay } from 'node:timers/promises';
import type { GatewayDeps } from './deps.js';
import type { ManagementOperations } from './routes.js';
import { systemOperations } from './system-operations.js';
import { createKeyOperations } from '../keys/index.js';
import { createOrganizationOperations } from '../organizations/index.js';
import { byokProviders, createCatalogOperations, providerNames } from '../catalog/index.js';
import { createWorkspaceOperations } from '../workspaces/index.js';
import { createCreditOperations } from '../credits/index.js';
import { createGenerationOperations } from '../generations/index.js';
import { createAnalyticsOperations } from '../analytics/index.js';
import { createVaultOperations } from '../vault/index.js';
import { createInternOperations } from '../interns/index.js';
import { createByokOperations, usableEndpointFilter } from '../byok/index.js';
import { createBatchOperations } from '../batches/index.js';
import { createPresetOperations } from '../presets/index.js';
import { createGuardrailOperations, guardrailsOf, refusal } from '../guardrails/index.js';
import { createObservabilityOperations } from '../observability/index.js';
import { createPrivateEndpointOperations } from '../private-endpoints/index.js';
import { createScimOperations } from '../scim/index.js';
import { createEndUserOperations } from '../end-users/index.js';
import { batchDepsOf } from './batch-deps.js';
import { batchAffordability } from './batch-lease.js';

export function createManagementOperations(deps: GatewayDeps): ManagementOperations {
  const { keys, organizations, workspaces, credits, rollups, vault, interns, byok, engine, clock, log, config } = deps;
  // Read through deps at call time too: the cache authentication reads may be replaced (the bench does).
  const keyCache = { invalidate: (hash: string) => deps.keyCache.invalidate(hash) };
  // Read through deps at call time: the BYOK source is attached to the engine after the deps are built. (The
  // log is the process's one logger: the local runtime replaces its sink, not the logger.)
  const invalidateCredentials = (orgId: string) => deps.engine.byok?.invalidate(orgId);
  const names = providerNames(engine.catalog);
  const leaseTermsLag = () => delay(deps.leaseTermsLagMs);
  const batches = batchDepsOf(deps);
  // A deleted key's guardrail assignments go with it (the policy cache read again). The key is gone already:
  // a failure here leaves assignments naming nothing, which the next delete of the key cannot reach, so it is
  // logged rather than answered as the delete's failure.
  const forgetKeyInGuardrails = async (orgId: string, hash: string) => {
    try {
      await deps.guardrails.forget(orgId, { keyHash: hash });
      deps.engine.guardrails?.invalidate(orgId);
    } catch (err) {
      log.error('the deleted key\'s guardrail assignments were not deleted', { org_id: orgId, key_hash: hash, error: String(err) });
    }
  };
  // What names a workspace besides its keys and interns: a workspace with any of it is not deleted.
  const scopedTo = async (orgId: string, workspaceId: string): Promise<string[]> => {
    const [policy, destinations, endpoints, mappings] = await Promise.all([
      deps.guardrails.policy(orgId, true), deps.observability.destinations.list(orgId, true), deps.privateEndpoints.list(orgId, true), deps.scim.list(orgId, 'MAP'),
    ]);
    const found: Array<[string, number]> = [
      ['guardrail', policy.guardrails.filter((guardrail) => guardrail.workspace_id === workspaceId).length],
      ['observability destination', destinations.filter((destination) => destination.workspace_id === workspaceId).length],
      ['private endpoint', endpoints.filter((endpoint) => endpoint.workspace_id === workspaceId).length],
      ['SCIM group mapping', mappings.filter((mapping) => mapping.workspace_id === workspaceId).length],
    ];
    return found.filter(([, count]) => count > 0).map(([kind, count]) => `${count} ${kind}${count === 1 ? '' : 's'}`);
  };
  return {
    ...systemOperations,
    ...createKeyOperations({ keys, keyCache, workspaces, clock, leaseTermsLag, members: deps.members, keyDeleted: forgetKeyInGuardrails }),
    ...createOrganizationOperations({ organizations, members: deps.members, clock }),
    ...createCatalogOperations({
      catalog: engine.catalog,
      usableEndpointsFor: async (key) => {
        const byok = deps.engine.byok ? usableEndpointFilter(await deps.engine.byok.credentialsFor(key.org_id), key) : undefined;
        // The key's guardrails narrow it further: a filtered catalog lists only what the key's requests may reach.
        const guardrails = deps.engine.guardrails ? guardrailsOf(await deps.engine.guardrails.policyFor(key.org_id), key) : undefined;
        if (!guardrails?.length) return byok;
        return (endpoint) => (byok === undefined || byok(endpoint)) && guardrails.every((guardrail) => refusal(guardrail, endpoint) === undefined);
      },
      organizations, rollups, endpointFailures: engine.endpointFailures, clock, log,
    }),
    ...createWorkspaceOperations({ workspaces, keys, interns, vault, byok, invalidateCredentials, members: deps.members, clock, leaseTermsLag, scopedTo }),
    ...createCreditOperations({ organizations, credits, clock }),
    ...createGenerationOperations({ generations: engine.generations, ledger: engine.ledger, providerNames: names, clock }),
    ...createAnalyticsOperations({ rollups, keys, providerNames: names, clock }),
    ...createVaultOperations({ vault, organizations, interns, settings: config.vault }),
    ...createInternOperations({ interns, organizations, keys, keyCache, vault, clock, hosts: config.vault.hosts }),
    // Inference's preset cache is read through deps at call time, like the key cache.
    ...createPresetOperations({ presets: deps.presets, source: { saved: (scope, preset) => deps.engine.presets?.saved(scope, preset) }, clock }),
    ...createGuardrailOperations({ guardrails: deps.guardrails, keys, workspaces, members: deps.members, invalidate: (orgId) => deps.engine.guardrails?.invalidate(orgId), clock }),
    ...createObservabilityOperations({
      destinations: deps.observability.destinations, secrets: deps.observability.secrets, workspaces, keys,
      invalidate: (orgId) => deps.observability.source.invalidate(orgId), clock, allowPrivateHosts: config.observability.allowPrivateHosts, timeoutMs: config.observability.timeoutMs,
    }),
    ...createPrivateEndpointOperations({
      endpoints: deps.privateEndpoints, vault,
      apiKey: (endpoint) => (deps.engine.privateEndpoints ? deps.engine.privateEndpoints.apiKey(endpoint) : Promise.reject(new Error('private endpoints are not routed here'))),
      catalog: engine.catalog, adapters: engine.adapters, workspaces,
      invalidate: (orgId) => deps.engine.privateEndpoints?.invalidate(orgId), clock, allowPrivateHosts: config.privateEndpointsAllowPrivateHosts,
    }),
    ...createScimOperations({ scim: deps.scim, members: deps.members, workspaces, clock }),
    ...createEndUserOperations({ endUsers: deps.endUsers, invalidate: (orgId) => deps.engine.endUsers?.invalidate(orgId), clock }),
    ...createByokOperations({ byok, vault, providers: byokProviders(engine.catalog), keys, workspaces, invalidateCredentials, clock }),
    ...createBatchOperations({
      batches: batches.repository, results: batches.results, uploads: batches.uploads, objects: batches.objects, executions: () => batches.executions, clock, log, windowSeconds: config.batches.windowSeconds,
      knowsModel: (id) => engine.catalog.byId.has(id),
      affords: batchAffordability(engine),
    }),
  };
}

const management = new WeakMap<GatewayDeps, ManagementOperations>();

/** The management operations over these deps, composed on first use. */
export function managementOperationsOf(deps: GatewayDeps): ManagementOperations {
  let operations = management.get(deps);
  if (!operations) management.set(deps, operations = createManagementOperations(deps));
  return operations;
}
