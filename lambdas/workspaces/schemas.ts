// Wire shapes of the workspace and workspace budget routes (public OpenRouter API: Workspace,
// WorkspaceBudget, UpsertWorkspaceBudgetRequest).
import * as z from 'zod';
import { queryInt } from '../platform/http/query-int.js';
import { usdAmount } from '../platform/http/usd-amount.js';
import { SLUG_PATTERN } from '../organizations/index.js';
import { UUID } from '../platform/http/path-params.js';

const SERVER_TOOLS = [
  'openrouter:advisor', 'openrouter:apply_patch', 'openrouter:bash', 'openrouter:datetime', 'openrouter:fusion',
  'openrouter:image_generation', 'openrouter:experimental__search_models', 'openrouter:shell', 'openrouter:subagent',
  'openrouter:tool_search', 'openrouter:web_fetch', 'openrouter:web_search',
] as const;

// A workspace is addressed by its id (a UUID) or its slug in the same path segment: a slug shaped like a UUID
// would be read as an id (another workspace's, or none), and the workspace could not be reached by it.
const slug = z.string().min(1).max(64).regex(SLUG_PATTERN, 'must be lowercase letters and digits in segments separated by single hyphens')
  .refine((value) => !UUID.test(value), 'must not be shaped like a UUID (paths read those as workspace ids)');
const sort = z.enum(['price', 'throughput', 'latency', 'exacto']);
const modelId = z.string().min(1).max(256);

const settingsFields = {
  description: z.string().max(1024).nullable().optional(),
  default_text_model: modelId.nullable().optional(),
  default_image_model: modelId.nullable().optional(),
  default_provider_sort: sort.nullable().optional(),
  // A tool named twice is disabled once (stored once).
  disabled_server_tools: z.array(z.enum(SERVER_TOOLS)).max(SERVER_TOOLS.length).transform((tools) => [...new Set(tools)]).nullable().optional(),
  io_logging_api_key_ids: z.array(z.number().int().nonnegative()).max(1000).nullable().optional(),
  io_logging_sampling_rate: z.number().min(0.0001).max(1).optional(),
  is_data_discount_logging_enabled: z.boolean().optional(),
  is_observability_broadcast_enabled: z.boolean().optional(),
  is_observability_io_logging_enabled: z.boolean().optional(),
};

export const createWorkspaceBody = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').max(128),
  slug,
  ...settingsFields,
});

export const updateWorkspaceBody = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').max(128).optional(),
  slug: slug.optional(),
  ...settingsFields,
});

export const listWorkspacesQuery = z.object({
  offset: queryInt(0, 1_000_000).optional(),
  limit: queryInt(1, 100).optional(),
});

export const workspaceSchema = z.object({
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  description: z.string().nullable(),
  default_text_model: z.string().nullable(),
  default_image_model: z.string().nullable(),
  default_provider_sort: z.string().nullable(),
  default_guardrail_id: z.string().describe('grd_ and the workspace id: the workspace\'s budgets are its settings (the guardrail routes answer it with a 404 that says so)'),
  disabled_server_tools: z.array(z.string()).nullable(),
  io_logging_api_key_ids: z.array(z.number().int()).nullable(),
  io_logging_sampling_rate: z.number(),
  is_data_discount_logging_enabled: z.boolean(),
  is_observability_broadcast_enabled: z.boolean(),
  is_observability_io_logging_enabled: z.boolean(),
  include_byok_in_budgets: z.boolean(),
  created_by: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string().nullable(),
});

export const workspaceReply = z.object({ data: workspaceSchema });
export const workspaceListReply = z.object({ data: z.array(workspaceSchema), total_count: z.number().int() });
export const deletedReply = z.object({ deleted: z.literal(true) });

export const budgetSchema = z.object({
  id: z.string(),
  workspace_id: z.string(),
  limit_usd: z.number(),
  reset_interval: z.enum(['daily', 'weekly', 'monthly']).nullable().describe('null for the lifetime budget'),
  usage_usd: z.number().describe('Spend counted against this budget in its current window'),
  remaining_usd: z.number().describe('limit_usd − usage_usd − what requests in flight hold, not below 0'),
  resets_at: z.string().nullable().describe('When the current window ends (null for lifetime)'),
  created_at: z.string(),
  updated_at: z.string(),
});

export const budgetReply = z.object({ data: budgetSchema, include_byok_in_budgets: z.boolean() });
export const budgetListReply = z.object({ data: z.array(budgetSchema), include_byok_in_budgets: z.boolean() });

export const upsertBudgetBody = z.strictObject({
  limit_usd: usdAmount().describe('Budget in USD for the interval, rounded to the nearest nano-dollar (1e-9)'),
  include_byok_in_budgets: z.boolean().optional().describe('Workspace-wide: whether BYOK spend counts toward every budget'),
});

export const userIdsBody = z.strictObject({ user_ids: z.array(z.string().min(1).max(128)).min(1, 'must name at least one member').max(500) });

const workspaceMember = z.object({ id: z.string(), workspace_id: z.string(), user_id: z.string(), role: z.enum(['admin', 'member']), created_at: z.string() });
export const workspaceMemberListReply = z.object({ data: z.array(workspaceMember), total_count: z.number().int() });
export const workspaceMembersAddedReply = z.object({ added_count: z.number().int(), data: z.array(workspaceMember) });
export const workspaceMembersRemovedReply = z.object({ removed_count: z.number().int() });
