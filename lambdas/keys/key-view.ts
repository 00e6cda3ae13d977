// The API key record as the API shows it (docs/API.md "API Keys": the public OpenRouter fields).
import type { z } from 'zod';
import type { ApiKey } from './types.js';
import { nanosToUsd, type Nanos } from '../platform/money.js';
import { meterAt, spent } from '../billing/meter.js';
import type { currentKeyReply, keyRecordSchema } from './schemas.js';

export type KeyRecordView = z.infer<typeof keyRecordSchema>;

/** What carries a spend limit on its own meter: an API key, an end user. */
export type LimitedMeter = Pick<ApiKey, 'limit' | 'limit_reset' | 'include_byok_in_limit' | 'meter'>;

/** Usage counted against the limit in the key's current reset window (as of `now`). */
export function usageAgainstLimit(key: LimitedMeter, now: Date): Nanos {
  return spent(meterAt(key.meter, now), key.limit_reset ?? 'total', key.include_byok_in_limit);
}

export function limitRemaining(key: LimitedMeter, now: Date): Nanos | null {
  if (key.limit === null) return null;
  const remaining = key.limit - usageAgainstLimit(key, now);
  return remaining > 0n ? remaining : 0n;
}

/** The limit and the usage per window (limitUsageFields), as of `now`. */
export function usageFields(stored: LimitedMeter, now: Date) {
  const key = { ...stored, ...meterAt(stored.meter, now) };
  const remaining = limitRemaining(stored, now);
  return {
    limit: key.limit === null ? null : nanosToUsd(key.limit),
    limit_remaining: remaining === null ? null : nanosToUsd(remaining),
    limit_reset: key.limit_reset,
    include_byok_in_limit: key.include_byok_in_limit,
    usage: nanosToUsd(key.usage.total),
    usage_daily: nanosToUsd(key.usage.daily),
    usage_weekly: nanosToUsd(key.usage.weekly),
    usage_monthly: nanosToUsd(key.usage.monthly),
    byok_usage: nanosToUsd(key.byok_usage.total),
    byok_usage_daily: nanosToUsd(key.byok_usage.daily),
    byok_usage_weekly: nanosToUsd(key.byok_usage.weekly),
    byok_usage_monthly: nanosToUsd(key.byok_usage.monthly),
  };
}

export function keyView(key: ApiKey, now: Date): KeyRecordView {
  return {
    hash: key.hash,
    name: key.name,
    label: key.label,
    disabled: key.disabled,
    ...usageFields(key, now),
    created_at: key.created_at,
    updated_at: key.updated_at,
    expires_at: key.expires_at,
    creator_user_id: key.creator_user_id,
    external_user: null,
    workspace_id: key.workspace_id,
  };
}

export function currentKeyView(key: ApiKey, now: Date): z.infer<typeof currentKeyReply>['data'] {
  const isManagement = key.kind === 'management';
  return {
    label: key.label,
    ...usageFields(key, now),
    expires_at: key.expires_at,
    creator_user_id: key.creator_user_id,
    is_management_key: isManagement,
    is_provisioning_key: isManagement,
    is_free_tier: false,
    organization_id: key.org_kind === 'organization' ? key.org_id : null,
    workspace_id: key.workspace_id,
    allowed_data_regions: ['global'],
    rate_limit: { requests: -1, interval: '10s', note: 'This gateway applies no per-key request rate limit.' },
    free_model_daily_requests: { limit: 0, remaining: 0, used: 0 },
  };
}
