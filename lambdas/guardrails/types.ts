// Guardrails: an organization's policies on what its keys may use and send, assigned to keys: allowed and
// ignored models and providers, and content filters (built-in detectors and the caller's own patterns).
import type { BuiltinFilter, ContentFilter } from './content-filters.js';
import type { Nanos } from '../platform/money.js';
import type { Interval } from '../billing/periods.js';

export interface Guardrail {
  id: string;
  org_id: string;
  name: string;
  description: string | null;
  workspace_id: string | null;
  allowed_models: string[] | null;
  ignored_models: string[] | null;
  allowed_providers: string[] | null;
  ignored_providers: string[] | null;
  include_byok_in_budgets: boolean;
  /** Spend limit of each key and each member it applies to (each their own), per `reset_interval` (null: lifetime). */
  limit?: Nanos | null;
  reset_interval?: Interval | null;
  content_filters: ContentFilter[] | null;
  content_filter_builtins: BuiltinFilter[] | null;
  created_at: string;
  updated_at: string;
}

export interface KeyAssignment {
  id: string;
  guardrail_id: string;
  key_hash: string;
  key_name: string;
  key_label: string;
  assigned_by: string | null;
  created_at: string;
}

/** A guardrail assigned to a member of the organization: it applies to every key the member created. */
export interface MemberAssignment {
  id: string;
  guardrail_id: string;
  user_id: string;
  organization_id: string;
  assigned_by: string | null;
  created_at: string;
}

/** An organization's guardrails and which keys each applies to: what inference reads (cached). */
export interface GuardrailPolicy {
  guardrails: Map<string, Guardrail>;
  /** Key hash → the guardrails assigned to it. */
  byKey: Map<string, Guardrail[]>;
  /** Member user id → the guardrails assigned to them (they apply to the keys whose creator_user_id it is). */
  byMember: Map<string, Guardrail[]>;
}

/** The guardrails a key's requests answer to: the key's own, and those of the member who created it. */
export function guardrailsOf(policy: GuardrailPolicy, key: { hash: string; creator_user_id: string | null }): Guardrail[] | undefined {
  const own = policy.byKey.get(key.hash);
  const member = key.creator_user_id === null ? undefined : policy.byMember.get(key.creator_user_id);
  if (!member) return own;
  if (!own) return member;
  return [...own, ...member.filter((guardrail) => !own.includes(guardrail))];
}
