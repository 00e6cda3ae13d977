// What a preset keeps from the request body it is made from (POST /presets/{slug}/chat/completions,
// /responses, /messages): the fields that are also request settings, in Chat Completions' names, and the
// system prompt. Everything else of the body (messages, input, stream, tools, session_id …) is accepted and
// ignored, as OpenRouter does. Values are checked with the inference schemas, so a preset never holds a
// setting a request could not send, and stored as the caller sent them.
import * as z from 'zod';
import {
  cacheControlSchema, jsonSchemaObject, modelIdSchema, modelsSchema, penaltySchema, pluginSchema, providerPreferencesSchema,
  REASONING_EFFORTS, reasoningSchema, SERVICE_TIERS, sessionIdSchema, stopServerToolsWhenSchema, temperatureSchema, topPSchema, traceSchema, userSchema,
} from '../inference/formats/common-schema.js';
import { chatStopSchema, responseFormatSchema } from '../inference/formats/chat-schema.js';
import { refuseStoredResponseFields } from '../inference/formats/responses-schema.js';
import type { PresetConfig } from './types.js';

/** A value checked against `schema` but kept as sent (the provider preferences' prices would otherwise become nano-dollars). */
function checked(schema: z.ZodType) {
  return z.unknown().superRefine((value, ctx) => {
    const result = schema.safeParse(value);
    if (!result.success) for (const issue of result.error.issues) ctx.addIssue({ ...issue, path: issue.path } as z.core.$ZodRawIssue);
  });
}

const route = z.enum(['fallback', 'sort']);
const speed = z.enum(['fast', 'standard']);
const maxTokens = z.number().int().min(1);
const stopSequences = z.array(z.string()).max(16);

/** A stored config read back for inference: every key optional, each checked as a request's would be. */
export const presetConfigSchema = z.object({
  model: modelIdSchema.optional(),
  models: modelsSchema.optional(),
  provider: providerPreferencesSchema.optional(),
  route: route.optional(),
  plugins: z.array(pluginSchema).optional(),
  service_tier: z.enum(SERVICE_TIERS).optional(),
  speed: speed.optional(),
  max_tokens: maxTokens.optional(),
  temperature: temperatureSchema.optional(),
  top_p: topPSchema.optional(),
  top_k: z.number().int().min(0).optional(),
  frequency_penalty: penaltySchema.optional(),
  presence_penalty: penaltySchema.optional(),
  repetition_penalty: z.number().gt(0).max(2).optional(),
  min_p: z.number().min(0).max(1).optional(),
  seed: z.number().int().optional(),
  stop: stopSequences.optional(),
  reasoning: reasoningSchema.optional(),
  response_format: responseFormatSchema.optional(),
});
export type AppliedPresetConfig = z.output<typeof presetConfigSchema>;

// ---- the three create bodies -------------------------------------------------------------------------

/** Fields every create body shares (names as in all three inbound formats). */
const shared = {
  model: modelIdSchema.optional(),
  models: modelsSchema.optional(),
  provider: checked(providerPreferencesSchema.nullable()).optional(),
  route: route.nullish(),
  // Refused here as a request naming them is refused: a preset that every request through it fails with is no preset.
  plugins: z.array(pluginSchema).superRefine((plugins, ctx) => {
    const active = plugins.filter((plugin) => (plugin as { enabled?: boolean }).enabled !== false);
    if (active.length) ctx.addIssue({ code: 'custom', message: `${active.map((plugin) => `"${plugin.id}"`).join(', ')} ${active.length === 1 ? 'is' : 'are'} not available on this gateway` });
  }).optional(),
  temperature: temperatureSchema.nullish(),
  top_p: topPSchema.nullish(),
  top_k: z.number().int().min(0).nullish(),
  // Checked like a request's, never kept: per-request fields, and a top-level cache_control (which requests
  // do not apply either: breakpoints go on content blocks).
  cache_control: cacheControlSchema.optional(),
  session_id: sessionIdSchema.optional(),
  user: userSchema.optional(),
  trace: traceSchema.optional(),
  stream: z.boolean().nullish(),
};

const textBlock = z.looseObject({ type: z.literal('text'), text: z.string() });

export const presetFromMessagesBody = z.looseObject({
  ...shared,
  /** OpenRouter's fallback models on its Messages route: tried after `model`, in order. */
  fallbacks: z.array(z.strictObject({ model: modelIdSchema })).max(3, 'at most 3 fallback models').nullish(),
  messages: z.array(z.unknown()).nullish(),
  system: z.union([z.string(), z.array(textBlock)]).optional(),
  max_tokens: maxTokens.optional(),
  stop_sequences: stopSequences.nullish(),
  service_tier: z.enum(['auto', 'standard_only']).optional(),
  speed: speed.nullish(),
  output_config: z.object({
    effort: z.enum(REASONING_EFFORTS).nullish(),
    format: z.object({ type: z.literal('json_schema'), schema: jsonSchemaObject }).nullish(),
  }).optional(),
  thinking: z.discriminatedUnion('type', [
    z.object({ type: z.literal('enabled'), budget_tokens: z.number().int().min(1) }),
    z.object({ type: z.literal('disabled') }),
    z.object({ type: z.literal('adaptive') }),
  ]).optional(),
  stop_server_tools_when: stopServerToolsWhenSchema.optional(),
}).superRefine((body, ctx) => {
  if (body.fallbacks?.length && body.models !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['fallbacks'], message: 'cannot be combined with models: send one list of fallback models' });
  }
});

const chatMessage = z.looseObject({ role: z.string(), content: z.unknown() });

export const presetFromChatBody = z.looseObject({
  ...shared,
  messages: z.array(chatMessage).nullish(),
  max_tokens: maxTokens.nullish(),
  max_completion_tokens: maxTokens.nullish(),
  frequency_penalty: penaltySchema.nullish(),
  presence_penalty: penaltySchema.nullish(),
  repetition_penalty: z.number().gt(0).max(2).nullish(),
  min_p: z.number().min(0).max(1).nullish(),
  seed: z.number().int().nullish(),
  stop: chatStopSchema.nullish(),
  reasoning: reasoningSchema.nullish(),
  reasoning_effort: z.enum(REASONING_EFFORTS).nullish(),
  response_format: responseFormatSchema.nullish(),
  service_tier: z.enum(SERVICE_TIERS).nullish(),
});

export const presetFromResponsesBody = z.looseObject({
  ...shared,
  instructions: z.string().nullish(),
  max_output_tokens: maxTokens.nullish(),
  frequency_penalty: penaltySchema.nullish(),
  presence_penalty: penaltySchema.nullish(),
  reasoning: reasoningSchema.nullish(),
  service_tier: z.enum(SERVICE_TIERS).nullish(),
  text: z.looseObject({
    format: z.discriminatedUnion('type', [
      z.object({ type: z.literal('text') }),
      z.object({ type: z.literal('json_object') }),
      z.object({ type: z.literal('json_schema'), name: z.string().min(1).max(64), schema: jsonSchemaObject, strict: z.boolean().nullish(), description: z.string().optional() }),
    ]).optional(),
  }).nullish(),
}).superRefine((body, ctx) => refuseStoredResponseFields(body, ctx));

export type PresetFromMessages = z.output<typeof presetFromMessagesBody>;
export type PresetFromChat = z.output<typeof presetFromChatBody>;
export type PresetFromResponses = z.output<typeof presetFromResponsesBody>;

/** What a version is made of. */
export interface PresetContent {
  config: PresetConfig;
  systemPrompt: string | null;
}

/** `entries` without the undefined and null ones (a null means "not set" in every inbound format). */
function compact(entries: Record<string, unknown>): PresetConfig {
  const config: PresetConfig = {};
  for (const [key, value] of Object.entries(entries)) if (value !== undefined && value !== null) config[key] = value;
  return config;
}

function sharedConfig(body: { model?: string | undefined; models?: string[] | undefined; provider?: unknown; route?: string | null | undefined; plugins?: unknown[] | undefined; temperature?: number | null | undefined; top_p?: number | null | undefined; top_k?: number | null | undefined }) {
  return {
    model: body.model,
    models: body.models,
    provider: body.provider,
    route: body.route,
    plugins: body.plugins?.length ? body.plugins : undefined,
    temperature: body.temperature,
    top_p: body.top_p,
    top_k: body.top_k,
  };
}

const textOf = (parts: Array<{ text: string }>): string => parts.map((part) => part.text).join('\n\n');

export function fromMessagesBody(body: PresetFromMessages): PresetContent {
  const format = body.output_config?.format;
  const effort = body.output_config?.effort ?? (body.thinking?.type === 'disabled' ? 'none' : undefined);
  const reasoning = compact({ effort, max_tokens: body.thinking?.type === 'enabled' ? body.thinking.budget_tokens : undefined });
  const system = body.system === undefined ? '' : typeof body.system === 'string' ? body.system : textOf(body.system);
  return {
    config: compact({
      ...sharedConfig(body),
      models: body.fallbacks?.length ? body.fallbacks.map((fallback) => fallback.model) : body.models,
      max_tokens: body.max_tokens,
      stop: body.stop_sequences?.length ? body.stop_sequences : undefined,
      // Anthropic's "standard_only" is the default tier.
      service_tier: body.service_tier === 'standard_only' ? 'default' : body.service_tier,
      speed: body.speed,
      reasoning: Object.keys(reasoning).length ? reasoning : undefined,
      response_format: format ? { type: 'json_schema', json_schema: { name: 'output', schema: format.schema } } : undefined,
    }),
    systemPrompt: system || null,
  };
}

/** The text of a chat message's content (a string, or its text parts). */
function chatText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return textOf(content.filter((part): part is { type: 'text'; text: string } => typeof part === 'object' && part !== null && (part as { type?: unknown }).type === 'text' && typeof (part as { text?: unknown }).text === 'string'));
}

export function fromChatBody(body: PresetFromChat): PresetContent {
  // The system prompt: the text of the leading system (or developer) messages; the conversation is not kept.
  const leading: string[] = [];
  for (const message of body.messages ?? []) {
    if (message.role !== 'system' && message.role !== 'developer') break;
    const text = chatText(message.content);
    if (text) leading.push(text);
  }
  const effort = body.reasoning?.effort ?? body.reasoning_effort ?? undefined;
  const reasoning = body.reasoning || effort ? compact({ ...body.reasoning, effort }) : undefined;
  return {
    config: compact({
      ...sharedConfig(body),
      max_tokens: body.max_completion_tokens ?? body.max_tokens,
      frequency_penalty: body.frequency_penalty,
      presence_penalty: body.presence_penalty,
      repetition_penalty: body.repetition_penalty,
      min_p: body.min_p,
      seed: body.seed,
      stop: typeof body.stop === 'string' ? [body.stop] : body.stop?.length ? body.stop : undefined,
      reasoning: reasoning && Object.keys(reasoning).length ? reasoning : undefined,
      response_format: body.response_format,
      service_tier: body.service_tier,
    }),
    systemPrompt: leading.length ? leading.join('\n\n') : null,
  };
}

export function fromResponsesBody(body: PresetFromResponses): PresetContent {
  const format = body.text?.format;
  const responseFormat = !format ? undefined
    : format.type === 'json_schema'
      ? { type: 'json_schema', json_schema: compact({ name: format.name, schema: format.schema, strict: format.strict, description: format.description }) }
      : { type: format.type };
  const reasoning = body.reasoning ? compact(body.reasoning) : undefined;
  return {
    config: compact({
      ...sharedConfig(body),
      max_tokens: body.max_output_tokens,
      frequency_penalty: body.frequency_penalty,
      presence_penalty: body.presence_penalty,
      reasoning: reasoning && Object.keys(reasoning).length ? reasoning : undefined,
      response_format: responseFormat,
      service_tier: body.service_tier,
    }),
    systemPrompt: body.instructions || null,
  };
}
