// End users: the people an organization's application serves, named by the `user` (or `safety_identifier`)
// its requests carry. An organization registers the ones it wants to see and limit; each registration has a
// spend meter (billing/meter.ts) on its record, kept by the meter aggregator from the records of its
// requests, and an optional spending limit per reset window that a request is held against before it
// reaches a provider.
import type { Meter } from '../billing/meter.js';
import type { Interval } from '../billing/periods.js';
import type { Nanos } from '../platform/money.js';
import { sha256Hex } from '../platform/sha256.js';

export interface EndUser {
  org_id: string;
  /** The id as the organization's requests send it (`user`); only its hash goes upstream or into records. */
  user: string;
  user_hash: string;
  /** This registration's own id: registered again after a delete, the same user is another record and meter. */
  epoch: string;
  name: string | null;
  limit: Nanos | null;
  limit_reset: Interval | null;
  include_byok_in_limit: boolean;
  /** Its requests are refused (403). */
  disabled: boolean;
  /** Moves with every change of its limit or state: a hold checked against an older copy is refused and retried. */
  settings_version: number;
  meter: Meter;
  created_at: string;
  updated_at: string;
}

/** An end-user id folded into a per-organization hash: what providers are told and records keep, never the id. */
export function endUserHash(orgId: string, user: string): string {
  return sha256Hex(`${orgId}:${user}`).slice(0, 32);
}
