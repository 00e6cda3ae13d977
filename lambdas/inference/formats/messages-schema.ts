// POST /messages request body: Anthropic's Messages API (what Anthropic's SDKs send, and a `/v1/messages`
// batch item's body), with the gateway's routing fields beside it as OpenRouter accepts them (models,
// provider, route, plugins, session_id, user).
import * as z from 'zod';
import {
  cacheControlSchema, httpUrlSchema, jsonSchemaObject, modelIdSchema, modelsSchema, presetSlugSchema, pluginSchema, providerPreferencesSchema, sessionIdSchema,
  topPSchema, userSchema,
} from './common-schema.js';

const cacheControl = cacheControlSchema.nullish();

const textBlock = z.object({ type: z.literal('text'), text: z.string(), cache_control: cacheControl, citations: z.unknown().optional() });
/** The image types Anthropic's Messages API takes. */
const IMAGE_MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] as const;
const imageBlock = z.object({
  type: z.literal('image'),
  source: z.discriminatedUnion('type', [
    z.object({ type: z.literal('base64'), media_type: z.enum(IMAGE_MEDIA_TYPES), data: z.string().min(1) }),
    z.object({ type: z.literal('url'), url: httpUrlSchema }),
  ]),
  cache_control: cacheControl,
});
const documentBlock = z.object({
  type: z.literal('document'),
  source: z.discriminatedUnion('type', [
    z.object({ type: z.literal('base64'), media_type: z.string().min(1), data: z.string().min(1) }),
    z.object({ type: z.literal('url'), url: httpUrlSchema }),
    z.object({ type: z.literal('text'), media_type: z.string().optional(), data: z.string() }),
  ]),
  title: z.string().nullish(),
  context: z.string().nullish(),
  cache_control: cacheControl,
});
const toolUseBlock = z.object({ type: z.literal('tool_use'), id: z.string().min(1), name: z.string().min(1), input: z.record(z.string(), z.unknown()), cache_control: cacheControl });
const toolResultBlock = z.object({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(z.discriminatedUnion('type', [textBlock, imageBlock]))]).optional(),
  is_error: z.boolean().optional(),
  cache_control: cacheControl,
});
const thinkingBlock = z.object({ type: z.literal('thinking'), thinking: z.string(), signature: z.string().optional() });
const redactedThinkingBlock = z.object({ type: z.literal('redacted_thinking'), data: z.string() });

export const messagesContentBlock = z.discriminatedUnion('type', [textBlock, imageBlock, documentBlock, toolUseBlock, toolResultBlock, thinkingBlock, redactedThinkingBlock]);
export type MessagesContentBlock = z.infer<typeof messagesContentBlock>;

const messageSchema = z.object({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string(), z.array(messagesContentBlock)]),
});
export type MessagesMessage = z.infer<typeof messageSchema>;

const toolSchema = z.object({
  /** Absent or "custom" for a client tool; Anthropic's server tools (web_search_…, bash_…) have their own types. */
  type: z.string().optional(),
  name: z.string().min(1).max(128).regex(/^[a-zA-Z0-9_-]+$/, 'tool names use letters, digits, underscores and dashes'),
  description: z.string().optional(),
  input_schema: jsonSchemaObject.optional(),
  cache_control: cacheControl,
});

const toolChoiceSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().optional() }),
  z.object({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().optional() }),
  z.object({ type: z.literal('none') }),
  z.object({ type: z.literal('tool'), name: z.string().min(1), disable_parallel_tool_use: z.boolean().optional() }),
]);

const thinkingSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('enabled'), budget_tokens: z.number().int().min(1) }),
  z.object({ type: z.literal('disabled') }),
  z.object({ type: z.literal('adaptive') }),
]);

export const messagesRequestSchema = z.object({
  model: modelIdSchema.optional(),
  models: modelsSchema.optional(),
  /** A preset of the key's workspace applied beneath the request (also `"model": "@preset/<slug>"`). */
  preset: presetSlugSchema.optional(),
  messages: z.array(messageSchema).min(1),
  system: z.union([z.string(), z.array(textBlock)]).optional(),
  max_tokens: z.number().int().min(1).optional(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: topPSchema.nullish(),
  top_k: z.number().int().min(0).nullish(),
  stop_sequences: z.array(z.string()).max(16).nullish(),
  stream: z.boolean().nullish(),
  tools: z.array(toolSchema).max(512).optional(),
  tool_choice: toolChoiceSchema.optional(),
  thinking: thinkingSchema.optional(),
  /** Anthropic's metadata: only the end user's id. */
  metadata: z.object({ user_id: z.string().max(256).nullish() }).nullish(),
  service_tier: z.enum(['auto', 'standard_only']).optional(),
  // The gateway's own fields (OpenRouter's, on its Anthropic-compatible route).
  provider: providerPreferencesSchema.nullish(),
  route: z.enum(['fallback', 'sort']).nullish(),
  plugins: z.array(pluginSchema).optional(),
  session_id: sessionIdSchema.optional(),
  user: userSchema.optional(),
}).superRefine((body, ctx) => {
  if (body.model === undefined && body.models === undefined && body.preset === undefined) {
    ctx.addIssue({ code: 'custom', path: ['model'], message: 'model or models is required (or a preset)' });
  }
  // As Anthropic's API: every message has content, but for a final assistant turn (a prefill left empty).
  body.messages.forEach((message, index) => {
    if (Array.isArray(message.content) && message.content.length === 0 && !(message.role === 'assistant' && index === body.messages.length - 1)) {
      ctx.addIssue({ code: 'custom', path: ['messages', index, 'content'], message: 'a message needs at least one content block (only a final assistant message may be empty)' });
    }
  });
});
export type MessagesRequest = z.infer<typeof messagesRequestSchema>;
