// Request fields shared by /chat/completions and /responses, with their limits (docs/API.md "Inference" lists them).
import * as z from 'zod';
import { usdAmount } from '../../platform/http/usd-amount.js';

export const SERVICE_TIERS = ['auto', 'default', 'fast', 'flex', 'priority', 'scale', 'ultrafast'] as const;
export const REASONING_EFFORTS = ['max', 'xhigh', 'high', 'medium', 'low', 'minimal', 'none'] as const;
export const PLUGIN_IDS = [
  'alignment', 'auto-beta-router', 'auto-router', 'context-compression', 'file-parser', 'fusion', 'jev-router',
  'moderation', 'pareto-router', 'response-healing', 'switchyard-router', 'web', 'web-fetch',
] as const;

export const modelIdSchema = z.string().min(1).max(256);
export const modelsSchema = z.array(modelIdSchema).min(1).max(64);
/** A preset's slug: 1 to 128 URL-safe characters (RFC 3986's unreserved ones), starting with a letter or digit. */
export const PRESET_SLUG = /^[A-Za-z0-9][A-Za-z0-9._~-]{0,127}$/;
export const PRESET_SLUG_RULE = '1 to 128 URL-safe characters (letters, digits, ".", "_", "~", "-"), starting with a letter or digit';
export const presetSlugSchema = z.string().regex(PRESET_SLUG, `a preset slug is ${PRESET_SLUG_RULE}`);

export const metadataSchema = z.record(
  z.string().max(64, 'metadata keys are at most 64 characters').regex(/^[^[\]]*$/, 'metadata keys must not contain brackets'),
  z.string().max(512, 'metadata values are at most 512 characters'),
).refine((value) => Object.keys(value).length <= 16, 'metadata has at most 16 pairs');

const HTTP_URL = /^https?:\/\/[^\s]+$/i;
/** A URL a provider fetches: http(s), or s3:// (Bedrock reads images from S3). */
const FETCHED_URL = /^(?:https?|s3):\/\/[^\s]+$/i;
/**
 * A data URL's head, up to its comma, with a media type: only the head is read (the payload may be
 * megabytes). Which types an endpoint takes is its provider's to say (Gemini takes PDFs and audio this way).
 */
const DATA_URL_HEAD = /^data:[a-z]+\/[a-z0-9.+-]+(?:;[^;,]*)*,/i;
/** A file or image fetched by the provider: an http(s) URL. */
export const httpUrlSchema = z.string().min(1).regex(HTTP_URL, 'an http(s) URL');
/** An image sent by URL: fetched (http(s), s3://), or inline as a data URL. */
export const imageUrlSchema = z.string().min(1).refine(
  (url) => (/^data:/i.test(url) ? DATA_URL_HEAD.test(url.slice(0, 4096)) : FETCHED_URL.test(url)),
  'an image is an http(s) URL or a data URL (data:image/<type>;base64,<data>)',
);
export const sessionIdSchema = z.string().max(256);
export const userSchema = z.string().max(256);
export const temperatureSchema = z.number().min(0).max(2);
export const topPSchema = z.number().min(0).max(1);
export const penaltySchema = z.number().min(-2).max(2);
export const topLogprobsSchema = z.number().int().min(0).max(20);
export const serviceTierSchema = z.enum(SERVICE_TIERS).nullable();
export const reasoningEffortSchema = z.enum(REASONING_EFFORTS).nullable();

export const cacheControlSchema = z.object({
  type: z.literal('ephemeral'),
  ttl: z.enum(['5m', '1h']).optional(),
});

const priceLimit = usdAmount({ text: true });

export const providerPreferencesSchema = z.object({
  allow_fallbacks: z.boolean().nullish(),
  require_parameters: z.boolean().nullish(),
  data_collection: z.enum(['allow', 'deny']).nullish(),
  zdr: z.boolean().nullish(),
  enforce_distillable_text: z.boolean().nullish(),
  order: z.array(z.string().min(1)).max(64).nullish(),
  only: z.array(z.string().min(1)).max(64).nullish(),
  ignore: z.array(z.string().min(1)).max(64).nullish(),
  quantizations: z.array(z.string()).nullish(),
  sort: z.union([
    z.enum(['price', 'throughput', 'latency', 'exacto']),
    z.object({ by: z.enum(['price', 'throughput', 'latency', 'exacto']).nullish(), partition: z.enum(['model', 'none']).nullish() }),
  ]).nullish(),
  max_price: z.object({ prompt: priceLimit.optional(), completion: priceLimit.optional(), request: priceLimit.optional(), image: priceLimit.optional(), audio: priceLimit.optional() })
    .describe('Highest prices in USD (prompt and completion per million tokens, request per request), as numbers or decimal text, rounded to the nearest nano-dollar (1e-9)').optional(),
  preferred_min_throughput: z.union([z.number(), z.record(z.string(), z.number())]).nullish(),
  preferred_max_latency: z.union([z.number(), z.record(z.string(), z.number())]).nullish(),
});
export type ProviderPreferences = z.infer<typeof providerPreferencesSchema>;

export const reasoningSchema = z.object({
  effort: reasoningEffortSchema.optional(),
  max_tokens: z.number().int().min(0).nullish(),
  exclude: z.boolean().nullish(),
  enabled: z.boolean().nullish(),
  summary: z.enum(['auto', 'concise', 'detailed']).nullish(),
});

const routerPatterns = z.array(z.string().max(1024)).max(1024)
  .refine((patterns) => patterns.reduce((sum, pattern) => sum + pattern.length, 0) <= 65536, 'router patterns total at most 65536 characters');

export const pluginSchema = z.discriminatedUnion('id', [
  z.strictObject({
    id: z.literal('alignment'),
    rules: z.array(z.string().min(1).max(200).regex(/^[^\r\n]*$/, 'rules must not contain line breaks')).min(1).max(128),
    mode: z.enum(['enforce', 'audit']).optional(),
    instruct: z.boolean().optional(),
    max_retries: z.number().int().min(0).optional(),
    threshold: z.number().min(0).max(1).optional(),
  }),
  z.object({
    id: z.literal('auto-beta-router'),
    enabled: z.boolean().optional(),
    allowed_models: routerPatterns.optional(),
    excluded_models: routerPatterns.optional(),
    cost_tier: z.enum(['low', 'medium', 'high', 'xhigh', 'max']).optional(),
    cost_quality_tradeoff: z.number().int().min(0).max(10).optional(),
  }),
  z.object({
    id: z.literal('auto-router'),
    enabled: z.boolean().optional(),
    allowed_models: routerPatterns.optional(),
    excluded_models: routerPatterns.optional(),
    cost_tier: z.enum(['low', 'medium', 'high', 'xhigh', 'max']).optional(),
    pin_model: z.boolean().optional(),
  }),
  ...(['context-compression', 'file-parser', 'fusion', 'jev-router', 'moderation', 'pareto-router', 'response-healing', 'switchyard-router', 'web', 'web-fetch'] as const)
    .map((id) => z.looseObject({ id: z.literal(id), enabled: z.boolean().optional() })),
]);
export type Plugin = z.infer<typeof pluginSchema>;

export const traceSchema = z.record(z.string(), z.unknown());
export const debugSchema = z.object({
  echo_upstream_body: z.boolean().optional().describe('Streaming only: the stream opens with the request body sent to the provider (a chat chunk without choices, or a response.debug event)'),
});
export const imageConfigSchema = z.record(z.string(), z.union([z.string(), z.number(), z.array(z.unknown())]));

export const stopServerToolsWhenSchema = z.array(z.discriminatedUnion('type', [
  z.object({ type: z.literal('step_count_is'), step_count: z.number().int().min(1) }),
  z.object({ type: z.literal('max_cost'), max_cost_in_dollars: z.number().min(0) }),
])).min(1);

export const jsonSchemaObject = z.record(z.string(), z.unknown());
