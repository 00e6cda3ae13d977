// How an API key is stored: one item under its hash (listed per organization through gsi1), its settings
// as top-level attributes and its meter beside them (billing/meter-item.ts). Read by the key repository and
// by the ledger, whose transactions see the key's item when a reservation is refused.
import type { ApiKey } from './types.js';
import { meterFromItem, meterToItem } from '../billing/meter-item.js';
import { nanosFromStore, nanosToStore } from '../platform/money.js';
import { itemKeys } from '../platform/dynamo/item-keys.js';

export function keyToItem(key: ApiKey): Record<string, unknown> {
  const { meter, ...settings } = key;
  return {
    ...itemKeys.apiKey(key.hash),
    ...itemKeys.apiKeyListing(key.org_id, key.created_at, key.hash),
    type: 'api_key',
    ...settings,
    limit: key.limit === null ? null : nanosToStore(key.limit),
    ...meterToItem(meter),
  };
}

export function keyFromItem(item: Record<string, unknown>): ApiKey {
  return {
    hash: item.hash as string,
    org_id: item.org_id as string,
    org_kind: item.org_kind as ApiKey['org_kind'],
    workspace_id: item.workspace_id as string,
    kind: item.kind as ApiKey['kind'],
    name: item.name as string,
    label: item.label as string,
    disabled: item.disabled === true,
    limit: item.limit === null || item.limit === undefined ? null : nanosFromStore(item.limit),
    limit_reset: (item.limit_reset ?? null) as ApiKey['limit_reset'],
    include_byok_in_limit: item.include_byok_in_limit === true,
    expires_at: (item.expires_at ?? null) as string | null,
    created_at: item.created_at as string,
    updated_at: (item.updated_at ?? null) as string | null,
    creator_user_id: (item.creator_user_id ?? null) as string | null,
    intern_id: (item.intern_id ?? null) as string | null,
    settings_version: typeof item.settings_version === 'number' ? item.settings_version : 0,
    meter: meterFromItem(item),
  };
}
