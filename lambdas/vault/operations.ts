// Vault routes: secrets of the key's scope (its workspace, or the intern an intern's key belongs to) and of
// an intern of the key's workspace, copying workspace secrets to an intern, and an intern's effective
// secrets. Scope rules in scope.ts; writes answer 503 while vault writes are disabled.
import { ConflictError, InvalidInputError, NotFoundError, UnavailableError } from '../platform/errors.js';
import type { OrganizationRepository } from '../organizations/index.js';
import type { VaultRef } from './envelope.js';
import { HostError, normalizeHosts } from './hosts.js';
import type { SecretMetadata, Vault } from './vault.js';
import { callerOf, internOf, internVault, keyScope, notForInternKeys, workspaceVault, type Caller, type InternLookup } from './scope.js';
import type { VaultOperations } from './routes.js';
import type { VaultSettings } from './settings.js';

export interface VaultPorts {
  /** Undefined without a KMS key: then every vault route answers 503. */
  vault: Vault | undefined;
  /** The caller's organization: in the intern programme, vault writes enabled. */
  organizations: Pick<OrganizationRepository, 'get'>;
  /** The interns whose private vaults the intern secret routes reach. */
  interns: InternLookup;
  /** The deployment's vault switch and host rules (read once per process). */
  settings: VaultSettings;
}

function vaultOf(deps: VaultPorts): Vault {
  if (!deps.vault) throw new UnavailableError('The vault is not configured on this deployment (no KMS key)');
  return deps.vault;
}

function writable(caller: Caller, settings: VaultSettings): void {
  if (caller.org.vault_writes_disabled || settings.writesDisabled) {
    throw new UnavailableError('Vault writes are disabled for this account; try again later');
  }
}

function hostsOf(hosts: string[]): string[] {
  try {
    return normalizeHosts(hosts);
  } catch (err) {
    if (err instanceof HostError) throw new InvalidInputError(err.message);
    throw err;
  }
}

function page<T>(all: T[], query: { limit?: number | undefined; offset?: number | undefined }): { data: T[]; has_more: boolean } {
  const offset = query.offset ?? 0;
  const limit = query.limit ?? 100;
  return { data: all.slice(offset, offset + limit), has_more: offset + limit < all.length };
}

async function putSecret(vault: Vault, ref: VaultRef, name: string, body: { hosts: string[]; value: string }): Promise<{ data: SecretMetadata }> {
  return { data: await vault.put(ref, name, hostsOf(body.hosts), body.value) };
}

export function createVaultOperations(deps: VaultPorts): VaultOperations {
  return {
    async listVaultSecrets({ principal, request, query }) {
      const caller = await callerOf(principal, request, deps.organizations, deps.settings.hosts);
      return { body: page(await vaultOf(deps).list(keyScope(caller)), query) };
    },

    async getVaultSecret({ principal, request, params }) {
      const caller = await callerOf(principal, request, deps.organizations, deps.settings.hosts);
      const { name } = params;
      const secret = await vaultOf(deps).get(keyScope(caller), name);
      if (!secret) throw new NotFoundError(`Secret not found: ${name}`);
      return { body: { data: secret } };
    },

    async putVaultSecret({ principal, request, params, body }) {
      const caller = await callerOf(principal, request, deps.organizations, deps.settings.hosts);
      const { name } = params;
      writable(caller, deps.settings);
      return { body: await putSecret(vaultOf(deps), keyScope(caller), name, body) };
    },

    async deleteVaultSecret({ principal, request, params }) {
      const caller = await callerOf(principal, request, deps.organizations, deps.settings.hosts);
      const { name } = params;
      writable(caller, deps.settings);
      if (!(await vaultOf(deps).delete(keyScope(caller), name))) throw new NotFoundError(`Secret not found: ${name}`);
      return { status: 204, body: undefined };
    },

    async listInternVaultSecrets({ principal, request, params, query }) {
      const caller = await callerOf(principal, request, deps.organizations, deps.settings.hosts);
      const intern = await internOf(caller, deps.interns, params.internId);
      return { body: page(await vaultOf(deps).list(internVault(caller.key, intern.id)), query) };
    },

    async getInternVaultSecret({ principal, request, params }) {
      const caller = await callerOf(principal, request, deps.organizations, deps.settings.hosts);
      const intern = await internOf(caller, deps.interns, params.internId);
      const { name } = params;
      const secret = await vaultOf(deps).get(internVault(caller.key, intern.id), name);
      if (!secret) throw new NotFoundError(`Secret not found: ${name}`);
      return { body: { data: secret } };
    },

    async putInternVaultSecret({ principal, request, params, body }) {
      const caller = await callerOf(principal, request, deps.organizations, deps.settings.hosts);
      const intern = await internOf(caller, deps.interns, params.internId);
      const { name } = params;
      writable(caller, deps.settings);
      return { body: await putSecret(vaultOf(deps), internVault(caller.key, intern.id), name, body) };
    },

    async deleteInternVaultSecret({ principal, request, params }) {
      const caller = await callerOf(principal, request, deps.organizations, deps.settings.hosts);
      const intern = await internOf(caller, deps.interns, params.internId);
      const { name } = params;
      writable(caller, deps.settings);
      if (!(await vaultOf(deps).delete(internVault(caller.key, intern.id), name))) throw new NotFoundError(`Secret not found: ${name}`);
      return { status: 204, body: undefined };
    },

    async copyVaultSecretsToIntern({ principal, request, params, body }) {
      const caller = await callerOf(principal, request, deps.organizations, deps.settings.hosts);
      notForInternKeys(caller);
      const intern = await internOf(caller, deps.interns, params.internId);
      writable(caller, deps.settings);
      const result = await vaultOf(deps).copy(workspaceVault(caller.key), internVault(caller.key, intern.id), body.names);
      if ('missing' in result) throw new NotFoundError(`Secret not found in the workspace vault: ${result.missing}`);
      if ('unbound' in result) throw new ConflictError(`Secret ${result.unbound} has no bound hosts; store it again with hosts before copying it`);
      return { body: { data: result.copied } };
    },

    async listInternEffectiveSecrets({ principal, request, params, query }) {
      const caller = await callerOf(principal, request, deps.organizations, deps.settings.hosts);
      const intern = await internOf(caller, deps.interns, params.internId);
      const vault = vaultOf(deps);
      const own = await vault.list(internVault(caller.key, intern.id));
      const workspace = await vault.list(workspaceVault(caller.key));
      const byName = new Map<string, SecretMetadata & { scope: 'intern' | 'attached' | 'workspace' }>();
      for (const secret of workspace) byName.set(secret.name, { ...secret, scope: 'workspace' });
      for (const secret of own) byName.set(secret.name, { ...secret, scope: 'intern' });
      const merged = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
      return { body: page(merged, query) };
    },
  };
}
