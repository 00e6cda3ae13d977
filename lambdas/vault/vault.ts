// The vault: secrets per workspace or intern, sealed under each vault's own data key (envelope.ts), and the
// one internal API that hands a value to an outbound request, only for an exact bound hostname, with an
// audit entry either way. Plaintext data keys stay in memory for a short TTL and are wiped on expiry.
import type { KmsPort } from '../platform/aws/kms.js';
import type { AuditEntry, SecretRow, VaultRepository } from './vault-repository.js';
import { encryptionContextOf, fingerprint, open, seal, vaultIdOf, type VaultRef } from './envelope.js';
import { hostOfUrl } from './hosts.js';

export interface SecretMetadata {
  name: string;
  hosts: string[] | null;
  fingerprint: string | null;
  created_at: string;
}

export const secretMetadata = (row: SecretRow): SecretMetadata => ({ name: row.name, hosts: row.hosts, fingerprint: row.fingerprint, created_at: row.created_at });

interface CachedKey {
  key: Buffer;
  expiresAt: number;
}

export class ReleaseRefused extends Error {
  override name = 'ReleaseRefused';
}

export class Vault {
  private readonly keys = new Map<string, CachedKey>();
  private readonly loading = new Map<string, Promise<Buffer>>();

  constructor(
    private readonly repository: VaultRepository,
    private readonly kms: KmsPort,
    private readonly clock: () => Date = () => new Date(),
    private readonly keyTtlMs = 5 * 60_000,
  ) {}

  /** KMS requests this process has made (for the cost ledger). */
  get kmsCalls(): number {
    return this.kms.calls;
  }

  /** The plaintext data key of a vault: cached, else decrypted with KMS, else generated and stored once. */
  async dataKey(ref: VaultRef): Promise<Buffer> {
    const vaultId = vaultIdOf(ref);
    const now = this.clock().getTime();
    const cached = this.keys.get(vaultId);
    if (cached && cached.expiresAt > now) return cached.key;
    if (cached) this.forget(vaultId);
    let pending = this.loading.get(vaultId);
    if (!pending) {
      pending = this.loadKey(ref, vaultId).finally(() => this.loading.delete(vaultId));
      this.loading.set(vaultId, pending);
    }
    return pending;
  }

  private async loadKey(ref: VaultRef, vaultId: string): Promise<Buffer> {
    const context = encryptionContextOf(ref);
    let encrypted = await this.repository.getDataKey(vaultId);
    let key: Buffer;
    if (encrypted) {
      key = await this.kms.decrypt(encrypted, context);
    } else {
      const generated = await this.kms.generateDataKey(context);
      if (await this.repository.putDataKey(vaultId, generated.ciphertext, this.clock().toISOString())) {
        key = generated.plaintext;
      } else {
        // Another writer created this vault's key first: use theirs.
        generated.plaintext.fill(0);
        encrypted = (await this.repository.getDataKey(vaultId))!;
        key = await this.kms.decrypt(encrypted, context);
      }
    }
    this.keys.set(vaultId, { key, expiresAt: this.clock().getTime() + this.keyTtlMs });
    return key;
  }

  private forget(vaultId: string): void {
    const cached = this.keys.get(vaultId);
    if (cached) cached.key.fill(0);
    this.keys.delete(vaultId);
  }

  /** Wipes every cached data key (tests; a warm function's shutdown). */
  clearKeys(): void {
    for (const vaultId of [...this.keys.keys()]) this.forget(vaultId);
  }

  /** Seals any value under a vault's data key (BYOK credentials), bound to the vault and `name`. */
  async sealValue(ref: VaultRef, name: string, value: string): Promise<string> {
    return seal(await this.dataKey(ref), vaultIdOf(ref), name, value);
  }

  async openValue(ref: VaultRef, name: string, sealed: string): Promise<string> {
    return open(await this.dataKey(ref), vaultIdOf(ref), name, sealed);
  }

  async put(ref: VaultRef, name: string, hosts: string[], value: string): Promise<SecretMetadata> {
    const key = await this.dataKey(ref);
    const vaultId = vaultIdOf(ref);
    const now = this.clock().toISOString();
    const row = await this.repository.putSecret(vaultId, {
      name, hosts, sealed: seal(key, vaultId, name, value), fingerprint: fingerprint(key, value), created_at: now, updated_at: now,
    });
    return secretMetadata(row);
  }

  async get(ref: VaultRef, name: string): Promise<SecretMetadata | undefined> {
    const row = await this.repository.getSecret(vaultIdOf(ref), name);
    return row ? secretMetadata(row) : undefined;
  }

  async list(ref: VaultRef): Promise<SecretMetadata[]> {
    return (await this.repository.listSecrets(vaultIdOf(ref))).map(secretMetadata);
  }

  delete(ref: VaultRef, name: string): Promise<boolean> {
    return this.repository.deleteSecret(vaultIdOf(ref), name);
  }

  /** Removes a vault entirely (an intern's, when the intern is deleted). */
  async destroy(ref: VaultRef): Promise<void> {
    this.forget(vaultIdOf(ref));
    await this.repository.deleteVault(vaultIdOf(ref));
  }

  /**
   * Copies named secrets from one vault to another, re-sealed under the target's data key (so fingerprints
   * differ). Every name is checked first: 'missing' or 'unbound' (a legacy secret without hosts) names the
   * first culprit and nothing is copied. The copies themselves are separate writes, not one transaction.
   */
  async copy(from: VaultRef, to: VaultRef, names: string[]): Promise<{ copied: SecretMetadata[] } | { missing: string } | { unbound: string }> {
    const rows: SecretRow[] = [];
    for (const name of names) {
      const row = await this.repository.getSecret(vaultIdOf(from), name);
      if (!row) return { missing: name };
      if (row.hosts === null) return { unbound: name };
      rows.push(row);
    }
    const copied: SecretMetadata[] = [];
    for (const row of rows) {
      // The key is fetched per row: a cached key that expires meanwhile is wiped, so none is held across awaits.
      const value = open(await this.dataKey(from), vaultIdOf(from), row.name, row.sealed);
      copied.push(await this.put(to, row.name, row.hosts!, value));
    }
    return { copied };
  }

  /**
   * Gives a secret's value to an outbound request whose URL's hostname is exactly one of the secret's bound
   * hosts. Every call is audited (who, which secret, which host, when); a refusal throws ReleaseRefused.
   */
  async release(ref: VaultRef, name: string, url: string, requester: string): Promise<string> {
    const vaultId = vaultIdOf(ref);
    const host = hostOfUrl(url) ?? '';
    const at = this.clock().toISOString();
    const row = await this.repository.getSecret(vaultId, name);
    const refuse = async (reason: string): Promise<never> => {
      const entry: AuditEntry = { action: 'refuse', secret: name, host, requester, reason, at };
      await this.repository.audit(vaultId, entry);
      throw new ReleaseRefused(`secret ${name} not released to ${host || url}: ${reason}`);
    };
    if (!row) return refuse('no such secret');
    if (!host) return refuse('not an http(s) URL');
    if (row.hosts === null) return refuse('the secret has no bound hosts (store it again to bind hosts)');
    if (!row.hosts.includes(host)) return refuse('host not bound to the secret');
    const value = open(await this.dataKey(ref), vaultId, name, row.sealed);
    await this.repository.audit(vaultId, { action: 'release', secret: name, host, requester, at });
    return value;
  }

  auditTrail(ref: VaultRef): Promise<AuditEntry[]> {
    return this.repository.auditTrail(vaultIdOf(ref));
  }
}
