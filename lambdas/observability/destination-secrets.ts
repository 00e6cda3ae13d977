// A destination's secret config fields, sealed as one vault secret bound to the destination's host: stored
// when the destination is created or its secrets change, released (and audited) only for a request to that
// host, deleted with the destination.
import type { Vault } from '../vault/index.js';
import { observabilityVaultRef, type Destination } from './types.js';

export class DestinationSecrets {
  constructor(private readonly vault: Pick<Vault, 'put' | 'release' | 'delete'>) {}

  async store(destination: Pick<Destination, 'org_id' | 'workspace_id' | 'host' | 'secret_name'>, secrets: Record<string, unknown>): Promise<void> {
    await this.vault.put(observabilityVaultRef(destination.org_id, destination.workspace_id), destination.secret_name, [destination.host], JSON.stringify(secrets));
  }

  /** The secrets, for a request to `url` (refused with ReleaseRefused unless its host is the bound one). */
  async release(destination: Pick<Destination, 'id' | 'org_id' | 'workspace_id' | 'secret_fields' | 'secret_name'>, url: string): Promise<Record<string, unknown>> {
    if (destination.secret_fields.length === 0) return {};
    const value = await this.vault.release(observabilityVaultRef(destination.org_id, destination.workspace_id), destination.secret_name, url, `observability:${destination.id}`);
    return JSON.parse(value) as Record<string, unknown>;
  }

  async remove(destination: Pick<Destination, 'org_id' | 'workspace_id' | 'secret_name'>): Promise<void> {
    await this.vault.delete(observabilityVaultRef(destination.org_id, destination.workspace_id), destination.secret_name);
  }
}
