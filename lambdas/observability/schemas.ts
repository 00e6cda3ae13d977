// Wire shapes of the observability routes (public OpenRouter API: ObservabilityDestination,
// CreateObservabilityDestinationRequest, UpdateObservabilityDestinationRequest), as @openrouter/sdk's
// observability.* send and parse them.
import * as z from 'zod';
import { queryInt } from '../platform/http/query-int.js';
import { patternProblem } from '../guardrails/index.js';
import { DESTINATION_TYPES, FILTER_FIELDS, FILTER_OPERATORS } from './types.js';

/** Every type of the public API; the ones this gateway does not deliver to are refused by name. */
const PUBLIC_TYPES = ['arize', 'braintrust', 'clickhouse', 'datadog', 'grafana', 'langfuse', 'langsmith', 'newrelic', 'opik', 'otel-collector', 'posthog', 'ramp', 's3', 'sentry', 'snowflake', 'weave', 'webhook'] as const;

const destinationType = z.enum(PUBLIC_TYPES).refine((type) => (DESTINATION_TYPES as readonly string[]).includes(type), {
  message: `this gateway delivers to ${DESTINATION_TYPES.join(', ')} (an OpenTelemetry collector takes what most of the others accept)`,
});

const rule = z.strictObject({
  field: z.enum(FILTER_FIELDS),
  operator: z.enum(FILTER_OPERATORS),
  value: z.union([z.string().max(1000), z.number()]).optional(),
}).superRefine((entry, ctx) => {
  if (entry.operator !== 'exists' && entry.operator !== 'not_exists' && entry.value === undefined) ctx.addIssue({ code: 'custom', message: `operator ${entry.operator} needs a value`, path: ['value'] });
  if (['gt', 'lt', 'gte', 'lte'].includes(entry.operator) && entry.value !== undefined && !Number.isFinite(Number(entry.value))) ctx.addIssue({ code: 'custom', message: `operator ${entry.operator} needs a number`, path: ['value'] });
  if (entry.operator === 'regex' && typeof entry.value === 'string') {
    const problem = patternProblem(entry.value);
    if (problem) ctx.addIssue({ code: 'custom', message: `the pattern ${problem}`, path: ['value'] });
  }
});

const filterRules = z.strictObject({
  enabled: z.boolean().default(true),
  groups: z.array(z.strictObject({ logic: z.enum(['and', 'or']).default('and'), rules: z.array(rule).min(1).max(20) })).max(20),
});

const keyHashes = z.array(z.string().regex(/^[0-9a-f]{64}$/, 'must be API key hashes (64 hex characters)')).min(1, 'must contain at least one key hash (null: every key)').max(1000);

const settings = {
  enabled: z.boolean().optional(),
  sampling_rate: z.number().min(0.0001).max(1).optional(),
  privacy_mode: z.boolean().optional(),
  api_key_hashes: keyHashes.nullable().optional(),
  filter_rules: filterRules.nullable().optional(),
  broadcast_generation_cost: z.boolean().optional(),
  broadcast_generation_identity: z.boolean().optional(),
  broadcast_generation_request_context: z.boolean().optional(),
  regions: z.array(z.enum(['global', 'europe', 'us'])).max(3).optional()
    .refine((regions) => !regions || regions.every((region) => region === 'global'), 'this gateway delivers from its own deployment: only the global region is accepted'),
};

export const createDestinationBody = z.strictObject({
  name: z.string().min(1).max(256),
  type: destinationType,
  config: z.record(z.string(), z.unknown()),
  workspace_id: z.string().min(1).max(128).optional(),
  ...settings,
});

export const updateDestinationBody = z.strictObject({
  name: z.string().min(1).max(256).optional(),
  config: z.record(z.string(), z.unknown()).optional(),
  ...settings,
});

export const destinationListQuery = z.object({
  offset: queryInt(0, 1_000_000).optional(),
  limit: queryInt(1, 100).optional(),
  workspace_id: z.string().min(1).max(128).optional(),
});

const ruleView = z.object({ field: z.string(), operator: z.string(), value: z.union([z.string(), z.number()]).optional() });

export const destinationSchema = z.object({
  id: z.string(),
  name: z.string().nullable(),
  type: z.string(),
  config: z.record(z.string(), z.unknown()),
  workspace_id: z.string(),
  enabled: z.boolean(),
  sampling_rate: z.number(),
  privacy_mode: z.boolean(),
  api_key_hashes: z.array(z.string()).nullable(),
  filter_rules: z.object({ enabled: z.boolean(), groups: z.array(z.object({ logic: z.string(), rules: z.array(ruleView) })) }).nullable(),
  broadcast_generation_cost: z.boolean(),
  broadcast_generation_identity: z.boolean(),
  broadcast_generation_request_context: z.boolean(),
  regions: z.array(z.string()),
  created_at: z.string(),
  updated_at: z.string(),
});

export const destinationReply = z.object({ data: destinationSchema });
export const destinationListReply = z.object({ data: z.array(destinationSchema), total_count: z.number().int() });
export const connectivityReply = z.object({
  data: z.object({ ok: z.boolean(), status_code: z.number().int().nullable(), latency_ms: z.number().int(), error: z.string().nullable() }),
});
