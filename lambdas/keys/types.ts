// An API key: identified by the SHA-256 of its text, never by the text itself.
import type { Nanos } from '../platform/money.js';
import type { AccountKind } from '../organizations/index.js';
import type { Meter } from '../billing/meter.js';

export type KeyKind = 'management' | 'standard';
export type LimitReset = 'daily' | 'weekly' | 'monthly';

export interface ApiKey {
  hash: string;
  org_id: string;
  org_kind: AccountKind;
  workspace_id: string;
  kind: KeyKind;
  name: string;
  label: string;
  disabled: boolean;
  limit: Nanos | null;
  limit_reset: LimitReset | null;
  include_byok_in_limit: boolean;
  expires_at: string | null;
  created_at: string;
  updated_at: string | null;
  creator_user_id: string | null;
  /** Set for an intern's own key: the key is confined to that intern (vault scope, no other routes). */
  intern_id: string | null;
  /** Bumped by every change of the fields a reservation relies on (limit, limit_reset, include_byok_in_limit, disabled). */
  settings_version: number;
  /** What the key has spent and holds, per window: what its limit is checked against. */
  meter: Meter;
}
