// What inference needs of BYOK: an organization's usable credentials (cached briefly, like keys) and, for
// the candidate about to be called, the credential's key in clear, opened from its sealed form with the
// BYOK vault's data key (itself cached; one KMS Decrypt per cold data key).
import type { ByokRepository } from './byok-repository.js';
import { RecordCache } from '../platform/record-cache.js';
import type { Vault } from '../vault/index.js';
import { byokVaultRef, type ByokCredential } from './types.js';

export class ByokSource {
  private readonly cache: RecordCache<ByokCredential[]>;

  private readonly load: (orgId: string) => Promise<ByokCredential[]>;

  constructor(private readonly repository: ByokRepository, private readonly vault: Vault, ttlMs = 2000) {
    this.cache = new RecordCache<ByokCredential[]>(ttlMs);
    this.load = (orgId) => this.repository.list(orgId);
  }

  /** The organization's enabled credentials, synchronously when cached. */
  credentialsFor(orgId: string): ByokCredential[] | Promise<ByokCredential[]> {
    const cached = this.cache.fresh(orgId, this.load);
    return cached ? enabled(cached) : this.cache.getOrLoad(orgId, this.load).then((all) => enabled(all ?? []));
  }

  /** Starts reading the credentials when they are not cached (RecordCache.warm). */
  warm(orgId: string): void {
    this.cache.warm(orgId, this.load);
  }

  invalidate(orgId: string): void {
    this.cache.invalidate(orgId);
  }

  apiKey(credential: ByokCredential): Promise<string> {
    return this.vault.openValue(byokVaultRef(credential.org_id), credential.id, credential.sealed);
  }

  /** KMS requests made for BYOK so far (shared with the vault). */
  get kmsCalls(): number {
    return this.vault.kmsCalls;
  }
}

function enabled(credentials: ByokCredential[]): ByokCredential[] {
  return credentials.filter((credential) => !credential.disabled);
}
