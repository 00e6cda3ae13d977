// Tenancy: organization (or personal account) → workspaces → keys.
import type { Nanos } from '../platform/money.js';
import type { Meter } from '../billing/meter.js';
import { BUDGET_INTERVALS, type BudgetInterval } from '../billing/periods.js';

export type AccountKind = 'organization' | 'personal';

export interface OrganizationSettings {
  is_filtered_model_catalog_enabled: boolean;
}

export interface Organization {
  id: string;
  name: string;
  kind: AccountKind;
  settings: OrganizationSettings;
  /** Credits ever added. */
  total_credits: Nanos;
  /** Credits ever spent (settled). */
  total_usage: Nanos;
  /** Reserved by requests in flight. The balance a request may reserve from is total_credits − total_usage − held. */
  held: Nanos;
  /** Access to the intern programme: every vault and intern route answers 404 without it. */
  intern_programme: boolean;
  /** Vault writes answer 503 while this is set (an operator's switch, e.g. during a key rotation). */
  vault_writes_disabled: boolean;
  created_at: string;
  updated_at: string;
}

// Budget windows are billing's periods.
export { BUDGET_INTERVALS, type BudgetInterval };

export interface Budget {
  id: string;
  limit: Nanos;
  created_at: string;
  updated_at: string;
}

/** The settings of a workspace as the API shows them (public OpenRouter workspace record). */
export interface WorkspaceSettings {
  name: string;
  slug: string;
  description: string | null;
  default_text_model: string | null;
  default_image_model: string | null;
  default_provider_sort: string | null;
  disabled_server_tools: string[] | null;
  io_logging_api_key_ids: number[] | null;
  io_logging_sampling_rate: number;
  is_data_discount_logging_enabled: boolean;
  is_observability_broadcast_enabled: boolean;
  is_observability_io_logging_enabled: boolean;
}

export interface Workspace extends WorkspaceSettings {
  id: string;
  org_id: string;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  budgets: Partial<Record<BudgetInterval, Budget>>;
  include_byok_in_budgets: boolean;
  /** Bumped by every budget change, so reservations made with an older copy are retried. */
  budget_version: number;
  /** What the workspace's keys have spent and hold, per window: what its budgets are checked against. */
  meter: Meter;
}

export const DEFAULT_WORKSPACE_SETTINGS: Omit<WorkspaceSettings, 'name' | 'slug'> = {
  description: null,
  default_text_model: null,
  default_image_model: null,
  default_provider_sort: null,
  disabled_server_tools: null,
  io_logging_api_key_ids: null,
  io_logging_sampling_rate: 1,
  is_data_discount_logging_enabled: false,
  is_observability_broadcast_enabled: false,
  is_observability_io_logging_enabled: false,
};
