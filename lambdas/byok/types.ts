// A provider credential brought by the customer (BYOK): stored sealed under the organization's BYOK vault
// data key (KMS envelope encryption, like vault secrets), never returned in clear.
export interface ByokCredential {
  id: string;
  org_id: string;
  /** Catalog provider slug whose upstream calls may use it. */
  provider: string;
  name: string | null;
  /** Masked snippet of the key ("sk-…c3d4"). */
  label: string;
  disabled: boolean;
  /** Tried only after the gateway's own credentials for the provider. */
  is_fallback: boolean;
  /** The gateway's own credentials are not used for the models this credential applies to. */
  is_required: boolean;
  /** The gateway's own credentials are never used for this provider. */
  is_byok_only: boolean;
  sort_order: number;
  allowed_models: string[] | null;
  allowed_user_ids: string[] | null;
  allowed_api_key_hashes: string[] | null;
  declared_zdr: boolean | null;
  /** Null: every workspace of the organization. */
  workspace_id: string | null;
  /** base64 of the sealed key (vault/envelope.ts). */
  sealed: string;
  created_at: string;
  updated_at: string;
}

export const byokVaultRef = (orgId: string) => ({ orgId, workspaceId: '-', purpose: 'byok' as const });

/** Enough to recognise a key, never enough to use it: at most about a third of it is shown. */
export function maskKey(key: string): string {
  const [head, tail] = key.length >= 20 ? [3, 4] : key.length >= 12 ? [2, 2] : [0, 0];
  return `${key.slice(0, head)}…${tail ? key.slice(-tail) : ''}`;
}
