// What a request's spend counts on beyond its key's limit, its workspace's budgets and its organization's
// credits (billing/spend-meters.ts): its guardrails' spend limits, on the key's own meter (a guardrail
// assigned to the key) or on the meter of the member who created the key (one assigned to the member), and
// its end user's meter with that end user's limit, when the organization registered the request's `user`.
// Read from caches (the guardrail policy the guardrail middleware loaded, the organization's end users);
// a request that names no user and whose key no limited guardrail covers costs two map lookups.
import { ForbiddenError } from '../platform/errors.js';
import { endUserFromItem, endUserHash, type EndUser } from '../end-users/index.js';
import type { Guardrail, GuardrailPolicy } from '../guardrails/index.js';
import type { EndUserMeter, ExtraMeter, SpendLimit, SpendMeters } from '../billing/spend-meters.js';
import type { Caller, EngineDeps } from './engine.js';
import type { InferenceRequest } from './inference-request.js';

function guardrailLimit(guardrail: Guardrail, scope: 'key' | 'member'): SpendLimit | undefined {
  if (guardrail.limit == null) return undefined;
  return {
    window: guardrail.reset_interval ?? 'total',
    amount: guardrail.limit,
    withByok: guardrail.include_byok_in_budgets,
    reason: 'guardrail_limit',
    owner: scope === 'key' ? `Guardrail ${guardrail.name}'s per-key` : `Guardrail ${guardrail.name}'s per-member`,
    remedy: "raise the guardrail's limit_usd",
    metadata: { guardrail_id: guardrail.id, guardrail_scope: scope },
  };
}

function endUserMeter(endUser: EndUser, reload: () => Promise<EndUser | undefined>): EndUserMeter {
  const limits: SpendLimit[] = endUser.limit === null ? [] : [{
    window: endUser.limit_reset ?? 'total',
    amount: endUser.limit,
    withByok: endUser.include_byok_in_limit,
    reason: 'end_user_limit',
    owner: `End user ${endUser.user}'s`,
    remedy: "raise the end user's limit",
    metadata: { user: endUser.user },
  }];
  return {
    ref: { of: 'end-user', orgId: endUser.org_id, userHash: endUser.user_hash, epoch: endUser.epoch },
    limits,
    version: endUser.settings_version,
    // A hold met a newer copy: its limits now, or its refusal.
    refresh: (item) => endUserMeter(usable(endUserFromItem(item)), reload),
    // Its meter is gone (deleted, or registered again): as it now stands.
    reload: async () => {
      const now = await reload();
      return now ? endUserMeter(usable(now), reload) : undefined;
    },
  };
}

function usable(endUser: EndUser): EndUser {
  if (endUser.disabled) throw new ForbiddenError(`End user ${endUser.user} is disabled`, { metadata: { reason: 'end_user_disabled' } });
  return endUser;
}

function build(caller: Caller, policy: GuardrailPolicy | undefined, endUser: EndUser | undefined, endUsers: EngineDeps['endUsers'], hash: string | undefined): SpendMeters | undefined {
  const keyLimits = (policy?.byKey.get(caller.keyHash) ?? []).flatMap((guardrail) => guardrailLimit(guardrail, 'key') ?? []);
  const creator = caller.key.creator_user_id;
  const memberLimits = creator === null ? [] : (policy?.byMember.get(creator) ?? []).flatMap((guardrail) => guardrailLimit(guardrail, 'member') ?? []);
  const extras: ExtraMeter[] = [];
  if (memberLimits.length) extras.push({ ref: { of: 'member', orgId: caller.orgId, userId: creator! }, limits: memberLimits });
  // The reload is made only for a request that names a registered end user.
  if (endUser) extras.push(endUserMeter(usable(endUser), () => endUsers!.reload(caller.orgId, hash!)));
  return keyLimits.length || extras.length ? { key: keyLimits, extras } : undefined;
}

/** The request's spend meters and limits beyond the key's, workspace's and organization's; undefined: none. */
export function spendMetersFor(request: Pick<InferenceRequest, 'user' | 'safetyIdentifier'>, caller: Caller, deps: Pick<EngineDeps, 'guardrails' | 'endUsers'>): SpendMeters | undefined | Promise<SpendMeters | undefined> {
  const policy = deps.guardrails?.policyFor(caller.orgId);
  const user = request.user ?? request.safetyIdentifier;
  const hash = user === undefined ? undefined : endUserHash(caller.orgId, user);
  const endUsers = deps.endUsers;
  const endUser = hash !== undefined ? endUsers?.find(caller.orgId, hash) : undefined;
  if (policy instanceof Promise || endUser instanceof Promise) {
    return Promise.all([policy, endUser]).then(([loaded, found]) => build(caller, loaded, found, endUsers, hash));
  }
  return build(caller, policy, endUser, endUsers, hash);
}
