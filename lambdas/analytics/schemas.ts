// Wire shapes of the activity and analytics routes (docs/API.md "Analytics"; shaped as the public
// OpenRouter API's ActivityResponse, analytics meta and query).
import * as z from 'zod';

export const activityQuery = z.object({
  date: z.iso.date().optional().describe('One UTC day (YYYY-MM-DD) within the last 30; default: all of the last 30 days'),
  api_key_hash: z.string().regex(/^[0-9a-f]{64}$/, 'must be a key hash (64 hex characters)').optional(),
  user_id: z.string().min(1).max(256).optional(),
  workspace_id: z.string().min(1).max(128).optional(),
  group_by: z.enum(['workspace']).optional(),
});

export const activityReply = z.object({
  data: z.array(z.object({
    date: z.string(),
    model: z.string(),
    model_permaslug: z.string(),
    endpoint_id: z.string(),
    provider_name: z.string(),
    usage: z.number(),
    byok_usage_inference: z.number(),
    requests: z.number(),
    prompt_tokens: z.number(),
    completion_tokens: z.number(),
    reasoning_tokens: z.number(),
    workspace_id: z.string().optional(),
  })),
});

export const ANALYTICS_DIMENSIONS = ['model', 'provider', 'api_key', 'workspace'] as const;
export const ANALYTICS_GRANULARITIES = ['hour', 'day', 'week', 'month'] as const;
export const ANALYTICS_OPERATORS = ['eq', 'neq', 'in', 'not_in'] as const;

export const analyticsMetaReply = z.object({
  data: z.object({
    dimensions: z.array(z.object({ name: z.string(), display_label: z.string() })),
    granularities: z.array(z.object({ name: z.string(), display_label: z.string() })),
    metrics: z.array(z.object({ name: z.string(), display_label: z.string(), display_format: z.string(), is_rate: z.boolean() })),
    operators: z.array(z.object({ name: z.string(), value_type: z.string() })),
  }),
});

const filterValue = z.union([z.string().max(256), z.number(), z.array(z.union([z.string().max(256), z.number()])).max(100)]);

export const analyticsQueryBody = z.strictObject({
  metrics: z.array(z.string().min(1).max(64)).min(1).max(20),
  dimensions: z.array(z.string().min(1).max(64)).max(4).optional(),
  filters: z.array(z.strictObject({ field: z.string().min(1).max(64), operator: z.string().min(1).max(16), value: filterValue, include_unset: z.boolean().optional() })).max(20).optional(),
  granularity: z.string().min(1).max(16).optional(),
  time_range: z.strictObject({ start: z.iso.datetime({ offset: true }), end: z.iso.datetime({ offset: true }) }).optional(),
  order_by: z.strictObject({ field: z.string().min(1).max(64), direction: z.enum(['asc', 'desc']) }).optional(),
  limit: z.number().int().min(1).max(10_000).optional(),
  group_limit: z.number().int().min(1).max(1000).optional(),
  classifier_dimensions: z.unknown().optional(),
  classifier_filters: z.unknown().optional(),
});

export const analyticsQueryReply = z.object({
  data: z.object({
    data: z.array(z.record(z.string(), z.union([z.string(), z.number(), z.null()]))),
    metadata: z.object({ query_time_ms: z.number(), row_count: z.number().int(), truncated: z.boolean() }),
    warnings: z.array(z.string()).optional(),
  }),
});
