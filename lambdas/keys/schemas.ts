// Wire shapes of the key management routes (request bodies, query and replies), as docs/API.md "API Keys" shows them.
import * as z from 'zod';
import { queryInt } from '../platform/http/query-int.js';
import { MAX_CLIENT_USD, usdAmount } from '../platform/http/usd-amount.js';

export const limitResetSchema = z.enum(['daily', 'weekly', 'monthly']).nullable()
  .describe('Reset interval of the credit limit: null (never), daily (midnight UTC), weekly (Monday 00:00 UTC) or monthly (1st, 00:00 UTC)');

const limitSchema = usdAmount().nullable();
const LIMIT = `Credit limit in USD, 0 to ${MAX_CLIENT_USD}, rounded to the nearest nano-dollar (1e-9)`;

export const keyNameSchema = z.string().trim().min(1, 'must not be empty').max(256);

export const createKeyBody = z.strictObject({
  name: keyNameSchema,
  limit: limitSchema.optional().describe(`${LIMIT}; null or absent means unlimited`),
  limit_reset: limitResetSchema.optional(),
  include_byok_in_limit: z.boolean().optional(),
  expires_at: z.iso.datetime({ offset: true }).nullable().optional().describe('ISO 8601 expiry; fixed at creation'),
  workspace_id: z.string().min(1).max(128).optional().describe('Workspace of the new key; defaults to the calling key\'s workspace'),
  creator_user_id: z.string().min(1).max(256).nullable().optional(),
});

export const updateKeyBody = z.strictObject({
  name: keyNameSchema.optional(),
  disabled: z.boolean().optional(),
  include_byok_in_limit: z.boolean().optional(),
  limit: limitSchema.optional().describe(`${LIMIT}; null means unlimited`),
  limit_reset: limitResetSchema.optional(),
});

const booleanQuery = z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1');

export const listKeysQuery = z.object({
  offset: queryInt(0, 1_000_000).optional(),
  include_disabled: booleanQuery.optional(),
  workspace_id: z.string().min(1).max(128).optional(),
});


/** A spend limit and the usage of its meter per window: an API key's fields, and an end user's. */
export const limitUsageFields = {
  limit: z.number().nullable(),
  limit_remaining: z.number().nullable(),
  limit_reset: limitResetSchema,
  include_byok_in_limit: z.boolean(),
  usage: z.number(),
  usage_daily: z.number(),
  usage_weekly: z.number(),
  usage_monthly: z.number(),
  byok_usage: z.number(),
  byok_usage_daily: z.number(),
  byok_usage_weekly: z.number(),
  byok_usage_monthly: z.number(),
};

export const keyRecordSchema = z.object({
  hash: z.string(),
  name: z.string(),
  label: z.string(),
  disabled: z.boolean(),
  ...limitUsageFields,
  created_at: z.string(),
  updated_at: z.string().nullable(),
  expires_at: z.string().nullable(),
  creator_user_id: z.string().nullable(),
  external_user: z.string().nullable(),
  workspace_id: z.string(),
});

export const keyReply = z.object({ data: keyRecordSchema });
export const keyListReply = z.object({ data: z.array(keyRecordSchema) });
export const createKeyReply = z.object({ data: keyRecordSchema, key: z.string().describe('The key text; shown only in this reply') });
export const deleteKeyReply = z.object({ deleted: z.literal(true) });

export const currentKeyReply = z.object({
  data: keyRecordSchema.omit({ hash: true, name: true, disabled: true, created_at: true, updated_at: true, external_user: true, workspace_id: true }).extend({
    is_management_key: z.boolean(),
    is_provisioning_key: z.boolean(),
    is_free_tier: z.boolean(),
    organization_id: z.string().nullable(),
    workspace_id: z.string().nullable(),
    allowed_data_regions: z.array(z.string()),
    rate_limit: z.object({ requests: z.number(), interval: z.string(), note: z.string() }),
    free_model_daily_requests: z.object({ limit: z.number(), remaining: z.number(), used: z.number() }),
  }),
});
