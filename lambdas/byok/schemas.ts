// Wire shapes of the BYOK routes (public OpenRouter API: BYOKKey, CreateBYOKKeyRequest, UpdateBYOKKeyRequest).
import * as z from 'zod';
import { queryInt } from '../platform/http/query-int.js';
import { keyText } from '../platform/http/header-text.js';

// Bounded so that a credential's item stays far below DynamoDB's 400 KB item limit.
const stringList = z.array(z.string().min(1).max(200)).max(200).nullable();
const hashList = z.array(z.string().regex(/^[0-9a-f]{64}$/, 'must be API key hashes (64 hex characters)')).min(1, 'must contain at least one hash').max(200).nullable();

const optionalFields = {
  name: z.string().max(256).nullable().optional(),
  disabled: z.boolean().optional(),
  is_fallback: z.boolean().optional(),
  is_required: z.boolean().optional(),
  is_byok_only: z.boolean().optional(),
  allowed_models: stringList.optional(),
  allowed_user_ids: stringList.optional(),
  allowed_api_key_hashes: hashList.optional(),
  declared_zdr: z.boolean().nullable().optional(),
};

export const createByokBody = z.strictObject({
  provider: z.string().min(1).max(64),
  key: keyText(1, 8192),
  workspace_id: z.string().min(1).max(128).optional(),
  ...optionalFields,
});

export const updateByokBody = z.strictObject({
  key: keyText(1, 8192).optional(),
  ...optionalFields,
});

export const listByokQuery = z.object({
  offset: queryInt(0, 1_000_000).optional(),
  limit: queryInt(1, 100).optional(),
  provider: z.string().min(1).max(64).optional(),
  workspace_id: z.string().min(1).max(128).optional(),
});

export const byokSchema = z.object({
  id: z.string(),
  provider: z.string(),
  name: z.string().nullable(),
  label: z.string(),
  disabled: z.boolean(),
  is_fallback: z.boolean(),
  is_required: z.boolean(),
  is_byok_only: z.boolean(),
  sort_order: z.number().int(),
  allowed_models: z.array(z.string()).nullable(),
  allowed_user_ids: z.array(z.string()).nullable(),
  allowed_api_key_hashes: z.array(z.string()).nullable(),
  declared_zdr: z.boolean().nullable(),
  workspace_id: z.string().nullable(),
  created_at: z.string(),
});

export const byokReply = z.object({ data: byokSchema });
export const byokListReply = z.object({ data: z.array(byokSchema), total_count: z.number().int() });
