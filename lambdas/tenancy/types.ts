// Tenancy: organization (or personal account) → workspaces → keys.
import type { Nanos } from '../shared/money.js';

export type AccountKind = 'organization' | 'personal';

export interface OrganizationSettings {
  is_filtered_model_catalog_enabled: boolean;
}

export interface Organization {
  id: string;
  name: string;
  kind: AccountKind;
  settings: OrganizationSettings;
  total_credits: Nanos;
  total_usage: Nanos;
  created_at: string;
  updated_at: string;
}

export interface Workspace {
  id: string;
  org_id: string;
  name: string;
  slug: string;
  created_at: string;
  updated_at: string;
}
