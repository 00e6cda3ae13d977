// Private endpoints (public OpenRouter API: PrivateEndpoint): a workspace's own deployment of a catalog
// model, added to that model's endpoints for the workspace's requests once validated and activated, at its
// own prices, called with its own upstream key (sealed in the vault, released only to its base URL's host).

export type PrivateEndpointStatus = 'draft' | 'active' | 'disabled';

export interface ValidationCheck {
  name: 'model_found' | 'provider_found' | 'auth_ok' | 'upstream_ok' | 'usage_reported';
  passed: boolean;
  reason?: string;
  upstream_status?: number;
  upstream_message?: string | null;
  actual_model?: string | null;
}

export interface Validation {
  passed: boolean;
  checks: ValidationCheck[];
  at: string;
  /** What was validated (upstream, base URL, provider, key): a change makes the validation stale. */
  fingerprint: string;
}

export interface PrivateEndpoint {
  id: string;
  org_id: string;
  /** The workspace whose requests it serves. */
  workspace_id: string;
  /** The catalog model it serves (its id), under which requests name it. */
  model_permaslug: string;
  /** A catalog provider whose wire format it speaks. */
  provider_slug: string;
  upstream_model_id: string;
  base_url: string;
  declared_region: 'global' | 'europe' | 'us' | null;
  declared_zdr: boolean | null;
  /** USD per token, as sent (decimal strings); null: none reported (its generations cost nothing here). */
  pricing: { prompt: string; completion: string } | null;
  status: PrivateEndpointStatus;
  validation: Validation | null;
  /** The vault secret holding its upstream key (a new name at each change of the key or host). */
  secret_name: string;
  /** Ever active: a draft_only delete refuses it. */
  activated: boolean;
  created_at: string;
  updated_at: string;
}

export const privateEndpointVaultRef = (orgId: string, workspaceId: string) => ({ orgId, workspaceId, purpose: 'private-endpoint' as const });
