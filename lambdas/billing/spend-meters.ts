// Limits beyond a key's own limit, its workspace's budgets and its organization's credits that a request's
// spend counts against, and the meters they count on:
// - an end user's limit (the request's `user`, hashed), on the end user's own meter, when the organization
//   registered that end user (end-users/);
// - a guardrail's spend limit (limit_usd per reset_interval): on the key's own meter when the guardrail is
//   assigned to the key, on the member's meter when it is assigned to the member who created the key (all
//   their keys count together). Each key and each member has its own allowance, as OpenRouter's do.
// A request any of these limits counts takes an exact hold, checked in the same transaction as the others
// (ledger-repository.ts); leases are carved from the organization, key and workspace only. A registered end
// user without a limit still has its spend counted (the record names its meter; the aggregator applies it).
import type { Nanos } from '../platform/money.js';
import type { Window } from './meter.js';
import type { ExtraMeterRef } from './meter-writes.js';

export type SpendLimitReason = 'key_limit' | 'end_user_limit' | 'guardrail_limit';

export interface SpendLimit {
  window: Window;
  amount: Nanos;
  withByok: boolean;
  reason: SpendLimitReason;
  /** Names the limit in a refusal, e.g. "End user alice's" or "Guardrail Interns'". */
  owner: string;
  /** What a refusal calls a limit without a reset window (default "lifetime"; a key's is its "total" limit). */
  totalName?: string;
  /** Tells a caller how to lift it. */
  remedy: string;
  /** Added to the refusal's error.metadata. */
  metadata: Record<string, unknown>;
}

/**
 * A meter beyond the key's and the workspace's, with the limits the request is checked against on it: a
 * member's (a guardrail's limit; made on its first limited request), or an end user's.
 */
export type ExtraMeter = MemberMeter | EndUserMeter;

export interface MemberMeter {
  ref: Extract<ExtraMeterRef, { of: 'member' }>;
  limits: SpendLimit[];
}

export interface EndUserMeter {
  ref: Extract<ExtraMeterRef, { of: 'end-user' }>;
  limits: SpendLimit[];
  /** The settings version the limits were read at (a PATCH moves it), checked by the hold. */
  version: number;
  /** The limits as now stored, from its item (a refused hold returns it); undefined: it limits nothing now. May throw the request's refusal (a disabled end user). */
  refresh: (item: Record<string, unknown>) => ExtraMeter | undefined;
  /** The end user as it now stands, read again when its meter is gone (deleted, or registered again as another meter); undefined: it limits nothing now. */
  reload: () => Promise<ExtraMeter | undefined>;
}

export function isEndUserMeter(meter: ExtraMeter): meter is EndUserMeter {
  return meter.ref.of === 'end-user';
}

/** What a request's spend counts on beyond the key, the workspace and the organization. */
export interface SpendMeters {
  /** Guardrail limits on the key's own meter. */
  key: SpendLimit[];
  extras: ExtraMeter[];
}

/** Whether any limit counts this request (it then holds exactly, never from a lease). */
export function limitsAny(spend: SpendMeters | undefined): boolean {
  return spend !== undefined && (spend.key.length > 0 || spend.extras.some((meter) => meter.limits.length > 0));
}

/** A record's charge to an extra meter: `held`, when its exact hold held on the meter too. */
export interface MeterCharge {
  meter: ExtraMeterRef;
  held: boolean;
}
