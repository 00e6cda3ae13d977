// Wire shapes of the guardrail routes (public OpenRouter API: Guardrail, CreateGuardrailRequest,
// UpdateGuardrailRequest, KeyAssignment), as @openrouter/sdk's guardrails.* send and parse them.
import * as z from 'zod';
import { queryInt } from '../platform/http/query-int.js';
import { BUILTIN_SLUGS, patternProblem } from './content-filters.js';
import { usdAmount } from '../platform/http/usd-amount.js';

/** A model id or a wildcard pattern (`openai/*`, `*-mini`). */
const modelPattern = z.string().min(1).max(256);
const patterns = z.array(modelPattern).max(1000).nullable();
const providers = z.array(z.string().min(1).max(128)).max(200).nullable();
const hashes = z.array(z.string().regex(/^[0-9a-f]{64}$/, 'must be API key hashes (64 hex characters)')).min(1, 'must contain at least one key hash').max(1000);

/** Parts of the public shape this gateway does not enforce yet: refused, never stored and silently ignored. */
function notYet(what: string) {
  return z.unknown().refine((value) => value === undefined || value === null || (Array.isArray(value) && value.length === 0) || value === false, `${what} is not enforced by this gateway yet; leave it out`);
}

const settings = {
  description: z.string().max(1000).nullable().optional(),
  allowed_models: patterns.optional(),
  ignored_models: patterns.optional(),
  allowed_providers: providers.optional(),
  ignored_providers: providers.optional(),
  include_byok_in_budgets: z.boolean().optional(),
  limit_usd: usdAmount().nullable().optional().describe('Spend limit in USD of each key (and each member) the guardrail applies to, rounded to the nearest nano-dollar; null removes it'),
  reset_interval: z.enum(['daily', 'weekly', 'monthly']).nullable().optional().describe('When the limit starts again (midnight UTC, Monday, the 1st); null: a lifetime limit'),
  content_filters: z.array(z.strictObject({
    action: z.enum(['block', 'redact', 'flag']),
    pattern: z.string().min(1).max(1000).superRefine((pattern, ctx) => {
      const problem = patternProblem(pattern);
      if (problem) ctx.addIssue({ code: 'custom', message: `the pattern ${problem}` });
    }),
    label: z.string().min(1).max(64).nullable().optional(),
  })).max(100).nullable().optional(),
  content_filter_builtins: z.array(z.strictObject({
    slug: z.enum([...BUILTIN_SLUGS, 'person-name', 'address']).refine((slug) => slug !== 'person-name' && slug !== 'address', 'person-name and address detection is not available on this gateway (they need a language model); use a pattern'),
    action: z.enum(['block', 'redact', 'flag']),
    label: z.string().min(1).max(64).optional(),
    scan_scope: z.string().max(64).optional(),
  })).max(20)
    // One action per detector: block and redact of the same one contradict each other.
    .refine((builtins) => new Set(builtins.map((builtin) => builtin.slug)).size === builtins.length, 'each builtin detector may be named once (one action each)')
    .nullable().optional(),
  allowed_data_regions: z.array(z.enum(['global', 'europe', 'us'])).nullable().optional()
    .refine((regions) => !regions || regions.length === 0 || regions.includes('global'), 'data regions other than global are not enforced by this gateway yet'),
  enforce_zdr: notYet('zero data retention (enforce_zdr)').optional(),
  enforce_zdr_anthropic: notYet('enforce_zdr_anthropic').optional(),
  enforce_zdr_google: notYet('enforce_zdr_google').optional(),
  enforce_zdr_openai: notYet('enforce_zdr_openai').optional(),
  enforce_zdr_other: notYet('enforce_zdr_other').optional(),
  enforce_zdr_xai: notYet('enforce_zdr_xai').optional(),
  enable_free_model_publication: notYet('enable_free_model_publication').optional(),
  enable_free_model_training: notYet('enable_free_model_training').optional(),
  enable_paid_model_training: notYet('enable_paid_model_training').optional(),
};

export const createGuardrailBody = z.strictObject({
  name: z.string().min(1).max(256),
  workspace_id: z.string().min(1).max(128).optional(),
  ...settings,
});

export const updateGuardrailBody = z.strictObject({
  name: z.string().min(1).max(256).optional(),
  ...settings,
});

export const guardrailListQuery = z.object({
  offset: queryInt(0, 1_000_000).optional(),
  limit: queryInt(1, 100).optional(),
  workspace_id: z.string().min(1).max(128).optional(),
});

export const pageQuery = z.object({
  offset: queryInt(0, 1_000_000).optional(),
  limit: queryInt(1, 100).optional(),
});

export const keyHashesBody = z.strictObject({ key_hashes: hashes });

export const memberIdsBody = z.strictObject({
  member_user_ids: z.array(z.string().min(1).max(256)).min(1, 'must contain at least one member user id').max(1000),
});

export const guardrailSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  workspace_id: z.string().nullable(),
  allowed_models: z.array(z.string()).nullable(),
  ignored_models: z.array(z.string()).nullable(),
  allowed_providers: z.array(z.string()).nullable(),
  ignored_providers: z.array(z.string()).nullable(),
  include_byok_in_budgets: z.boolean(),
  limit_usd: z.number().nullable(),
  reset_interval: z.enum(['daily', 'weekly', 'monthly']).nullable(),
  content_filters: z.array(z.object({ action: z.string(), pattern: z.string(), label: z.string().nullable().optional() })).nullable(),
  content_filter_builtins: z.array(z.object({ slug: z.string(), action: z.string(), label: z.string().optional() })).nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const guardrailReply = z.object({ data: guardrailSchema });
export const guardrailListReply = z.object({ data: z.array(guardrailSchema), total_count: z.number().int() });

export const keyAssignmentSchema = z.object({
  id: z.string(), guardrail_id: z.string(), key_hash: z.string(), key_name: z.string(), key_label: z.string(), assigned_by: z.string().nullable(), created_at: z.string(),
});
export const keyAssignmentListReply = z.object({ data: z.array(keyAssignmentSchema), total_count: z.number().int() });

export const memberAssignmentSchema = z.object({
  id: z.string(), guardrail_id: z.string(), user_id: z.string(), organization_id: z.string(), assigned_by: z.string().nullable(), created_at: z.string(),
});
export const memberAssignmentListReply = z.object({ data: z.array(memberAssignmentSchema), total_count: z.number().int() });
