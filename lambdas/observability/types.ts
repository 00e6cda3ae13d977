// Observability destinations: where each generation is delivered after its reply (public OpenRouter API:
// ObservabilityDestination). A destination's secret settings (a webhook's signing secret, headers, a
// Langfuse key pair, S3 keys) live sealed in the vault, bound to the destination's host; the item keeps
// them masked only.

export const DESTINATION_TYPES = ['webhook', 'otel-collector', 'langfuse', 's3'] as const;
export type DestinationType = (typeof DESTINATION_TYPES)[number];

export const FILTER_FIELDS = [
  'model', 'provider', 'session_id', 'user_id', 'api_key_name', 'finish_reason', 'input', 'output',
  'total_cost', 'total_tokens', 'prompt_tokens', 'completion_tokens',
] as const;
export type FilterField = (typeof FILTER_FIELDS)[number];

export const FILTER_OPERATORS = [
  'equals', 'not_equals', 'contains', 'not_contains', 'regex', 'starts_with', 'ends_with', 'gt', 'lt', 'gte', 'lte', 'exists', 'not_exists',
] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

export interface FilterRule {
  field: FilterField;
  operator: FilterOperator;
  value?: string | number;
}

export interface FilterRules {
  enabled: boolean;
  groups: Array<{ logic: 'and' | 'or'; rules: FilterRule[] }>;
}

export interface Destination {
  id: string;
  org_id: string;
  workspace_id: string;
  name: string | null;
  type: DestinationType;
  /** The config as replies show it: secret fields masked. */
  config: Record<string, unknown>;
  /** Names of the config fields whose values are sealed in the vault (a header map counts as `headers`). */
  secret_fields: string[];
  /** The vault secret holding them: a new name each time they change, so the item and the vault never disagree. */
  secret_name: string;
  /** The hostname the sealed secrets are released to (and only to). */
  host: string;
  enabled: boolean;
  sampling_rate: number;
  privacy_mode: boolean;
  /** Only these keys' generations; null: every key's. */
  api_key_hashes: string[] | null;
  filter_rules: FilterRules | null;
  broadcast_generation_cost: boolean;
  broadcast_generation_identity: boolean;
  broadcast_generation_request_context: boolean;
  regions: string[];
  created_at: string;
  updated_at: string;
}

/** The vault holding an organization's destination secrets, per workspace. */
export const observabilityVaultRef = (orgId: string, workspaceId: string) => ({ orgId, workspaceId, purpose: 'observability' as const });
