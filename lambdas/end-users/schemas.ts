// Wire shapes of the end-user routes. SPEC names the routes and leaves the record's fields out; these follow
// an API key's record (limit, limit_reset, include_byok_in_limit, limit_remaining, usage per window), which
// is what an end user's limit works like.
import * as z from 'zod';
import { queryInt } from '../platform/http/query-int.js';
import { usdAmount } from '../platform/http/usd-amount.js';
import { limitUsageFields } from '../keys/index.js';

const limitReset = z.enum(['daily', 'weekly', 'monthly']).nullable()
  .describe('When the limit starts again: null (never), daily (midnight UTC), weekly (Monday 00:00 UTC) or monthly (1st, 00:00 UTC)');

const settings = {
  name: z.string().max(256).nullable().optional(),
  limit: usdAmount().nullable().optional().describe('Spend limit in USD, rounded to the nearest nano-dollar; null or absent: unlimited'),
  limit_reset: limitReset.optional(),
  include_byok_in_limit: z.boolean().optional().describe('Whether BYOK spend counts toward the limit'),
  disabled: z.boolean().optional().describe("Refuse the end user's requests (403)"),
};

export const createEndUserBody = z.strictObject({
  user: z.string().min(1).max(256).describe('The id the requests send as `user` (or `safety_identifier`)'),
  ...settings,
});

export const updateEndUserBody = z.strictObject(settings);

export const endUserSchema = z.object({
  user: z.string(),
  user_hash: z.string().describe('What providers are told and generation records keep (external_user)'),
  name: z.string().nullable(),
  disabled: z.boolean(),
  ...limitUsageFields,
  created_at: z.string(),
  updated_at: z.string(),
});

export const endUserReply = z.object({ data: endUserSchema });
export const endUserListReply = z.object({ data: z.array(endUserSchema), total_count: z.number().int() });

export const endUserListQuery = z.object({
  offset: queryInt(0, 1_000_000).optional(),
  limit: queryInt(1, 100).optional(),
});
