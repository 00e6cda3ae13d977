// Envelope encryption of vault secrets and BYOK credentials. Each vault (a workspace's, an intern's, a
// workspace's BYOK credentials) has one 256-bit data key from KMS GenerateDataKey, stored only encrypted;
// its KMS encryption context binds organization, workspace, intern and purpose, so a data key moved to
// another vault does not decrypt. Values are sealed with AES-256-GCM under the data key, with the vault and
// the secret's name as additional authenticated data, so a ciphertext moved to another name or vault does
// not open. Fingerprints are HMAC-SHA-256 of the value under a key derived (HKDF) from the data key: equal
// values in one vault match, the same value in two vaults does not.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

export type VaultPurpose = 'vault' | 'byok' | 'observability' | 'private-endpoint';

export interface VaultRef {
  orgId: string;
  workspaceId: string;
  internId?: string | undefined;
  purpose: VaultPurpose;
}

/**
 * A vault secret name for a feature's own secret of one record (a destination's, a private endpoint's), new at
 * each change: the record names the one it uses, so it and the vault never disagree mid-change.
 */
export const versionedSecretName = (prefix: string, recordId: string): string => `${prefix}_${recordId.replace(/-/g, '')}_${randomBytes(8).toString('hex')}`;

export const vaultIdOf = (ref: VaultRef): string =>
  `${ref.purpose}:${ref.orgId}/${ref.workspaceId}${ref.internId ? `/${ref.internId}` : ''}`;

/** The KMS encryption context of a vault's data key: every field is bound, including the absent intern. */
export function encryptionContextOf(ref: VaultRef): Record<string, string> {
  return { organization: ref.orgId, workspace: ref.workspaceId, intern: ref.internId ?? '-', purpose: ref.purpose };
}

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

function aad(vaultId: string, name: string): Buffer {
  return Buffer.from(`${vaultId}\u0000${name}`, 'utf8');
}

/** Seals a value: base64 of version | iv | tag | ciphertext. */
export function seal(dataKey: Buffer, vaultId: string, name: string, value: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', dataKey, iv);
  cipher.setAAD(aad(vaultId, name));
  const sealed = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), sealed]).toString('base64');
}

export class SealedValueError extends Error {
  override name = 'SealedValueError';
}

/** Opens a sealed value; throws SealedValueError if it was sealed for another vault or name, or altered. */
export function open(dataKey: Buffer, vaultId: string, name: string, sealed: string): string {
  const blob = Buffer.from(sealed, 'base64');
  if (blob.length < 1 + IV_BYTES + TAG_BYTES || blob[0] !== VERSION) throw new SealedValueError('not a sealed value');
  try {
    const decipher = createDecipheriv('aes-256-gcm', dataKey, blob.subarray(1, 1 + IV_BYTES));
    decipher.setAAD(aad(vaultId, name));
    decipher.setAuthTag(blob.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(blob.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw new SealedValueError('the sealed value does not belong to this vault and name, or was altered');
  }
}

/** `sha256:<hex>`: HMAC-SHA-256 of the value under a fingerprint key derived from the vault's data key. */
export function fingerprint(dataKey: Buffer, value: string): string {
  const key = Buffer.from(hkdfSync('sha256', dataKey, Buffer.alloc(0), 'model-gateway vault fingerprint v1', 32));
  return `sha256:${createHmac('sha256', key).update(value, 'utf8').digest('hex')}`;
}
