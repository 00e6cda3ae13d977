// Builds a new key record and its text; the text leaves this function once, for the creation reply.
import type { ApiKey, KeyKind, LimitReset } from './types.js';
import { newMeter } from '../billing/meter.js';
import { generateKeyText, hashKey, labelFor } from './key-format.js';
import type { AccountKind } from '../organizations/index.js';
import type { Nanos } from '../platform/money.js';

export interface NewKeyInput {
  orgId: string;
  orgKind: AccountKind;
  workspaceId: string;
  kind: KeyKind;
  name: string;
  limit?: Nanos | null;
  limitReset?: LimitReset | null;
  includeByokInLimit?: boolean;
  expiresAt?: string | null;
  creatorUserId?: string | null;
  internId?: string | null;
  now: Date;
  /** Use this exact text instead of generating one (the operator's GATEWAY_ADMIN_KEY). */
  text?: string;
}

export function newApiKey(input: NewKeyInput): { key: ApiKey; text: string } {
  const text = input.text ?? generateKeyText();
  const key: ApiKey = {
    hash: hashKey(text),
    org_id: input.orgId,
    org_kind: input.orgKind,
    workspace_id: input.workspaceId,
    kind: input.kind,
    name: input.name,
    label: labelFor(text),
    disabled: false,
    limit: input.limit ?? null,
    limit_reset: input.limitReset ?? null,
    include_byok_in_limit: input.includeByokInLimit ?? false,
    expires_at: input.expiresAt ? new Date(input.expiresAt).toISOString() : null,
    created_at: input.now.toISOString(),
    updated_at: null,
    creator_user_id: input.creatorUserId ?? null,
    intern_id: input.internId ?? null,
    settings_version: 0,
    meter: newMeter(input.now),
  };
  return { key, text };
}
