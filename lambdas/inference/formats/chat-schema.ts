// POST /chat/completions request body (docs/API.md `POST /api/v1/chat/completions`), OpenAI-compatible.
import * as z from 'zod';
import {
  cacheControlSchema, debugSchema, imageConfigSchema, jsonSchemaObject, metadataSchema, modelIdSchema, modelsSchema, presetSlugSchema, penaltySchema,
  imageUrlSchema, pluginSchema, providerPreferencesSchema, reasoningEffortSchema, reasoningSchema, serviceTierSchema, sessionIdSchema,
  stopServerToolsWhenSchema, temperatureSchema, topLogprobsSchema, topPSchema, traceSchema, userSchema,
} from './common-schema.js';

const textPart = z.object({ type: z.literal('text'), text: z.string(), cache_control: cacheControlSchema.optional() });
const imagePart = z.object({
  type: z.literal('image_url'),
  image_url: z.union([imageUrlSchema, z.object({ url: imageUrlSchema, detail: z.enum(['auto', 'low', 'high']).optional() })]),
});
const audioPart = z.object({ type: z.literal('input_audio'), input_audio: z.object({ data: z.string().min(1), format: z.string().min(1) }) });
const filePart = z.object({
  type: z.literal('file'),
  file: z.object({ filename: z.string().optional(), file_data: z.string().optional(), file_id: z.string().optional() })
    .refine((file) => file.file_data !== undefined, 'file parts need file_data (a data URL or URL)'),
});
/** A chat completion's stop sequences: at most 4, as OpenAI's API takes them (a preset's too, when used in chat). */
export const MAX_CHAT_STOP_SEQUENCES = 4;
export const chatStopSchema = z.union([z.string(), z.array(z.string()).max(MAX_CHAT_STOP_SEQUENCES, `at most ${MAX_CHAT_STOP_SEQUENCES} stop sequences`)]);

export const chatContentPart = z.discriminatedUnion('type', [textPart, imagePart, audioPart, filePart]);
const content = z.union([z.string(), z.array(chatContentPart)]);
const textOnlyContent = z.union([z.string(), z.array(textPart)]);

const toolCallSchema = z.object({
  id: z.string().min(1),
  type: z.literal('function'),
  function: z.object({ name: z.string().min(1), arguments: z.string() }),
});

export const chatMessageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: textOnlyContent, name: z.string().optional() }),
  z.object({ role: z.literal('developer'), content: textOnlyContent, name: z.string().optional() }),
  z.object({ role: z.literal('user'), content, name: z.string().optional() }),
  z.object({
    role: z.literal('assistant'),
    content: z.union([z.string(), z.array(z.union([textPart, z.object({ type: z.literal('refusal'), refusal: z.string() })])), z.null()]).optional(),
    name: z.string().optional(),
    tool_calls: z.array(toolCallSchema).optional(),
    reasoning: z.string().nullish(),
    /** OpenRouter's reasoning blocks, as returned on an earlier turn (their signature goes back to the provider). */
    reasoning_details: z.array(z.object({
      type: z.string(),
      text: z.string().nullish(),
      summary: z.string().nullish(),
      signature: z.string().nullish(),
      data: z.string().nullish(),
      format: z.string().nullish(),
      id: z.string().nullish(),
      index: z.number().int().nullish(),
    })).max(64).nullish(),
    refusal: z.string().nullish(),
  }),
  z.object({ role: z.literal('tool'), content: textOnlyContent, tool_call_id: z.string().min(1) }),
]);
export type ChatMessage = z.infer<typeof chatMessageSchema>;

const functionTool = z.object({
  type: z.literal('function'),
  function: z.object({
    name: z.string().min(1).max(128).regex(/^[a-zA-Z0-9_-]+$/, 'tool names use letters, digits, underscores and dashes'),
    description: z.string().optional(),
    parameters: jsonSchemaObject.optional(),
    strict: z.boolean().nullish(),
  }),
  cache_control: cacheControlSchema.optional(),
});
const serverTool = z.looseObject({ type: z.string().refine((type) => type !== 'function', { abort: true }) });

export const responseFormatSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.object({
    type: z.literal('json_schema'),
    json_schema: z.object({ name: z.string().min(1).max(64), schema: jsonSchemaObject.optional(), strict: z.boolean().nullish(), description: z.string().optional() }),
  }),
  z.object({ type: z.literal('grammar'), grammar: z.string() }),
  z.object({ type: z.literal('python') }),
]);

export const toolChoiceSchema = z.union([
  z.enum(['none', 'auto', 'required']),
  z.object({ type: z.literal('function'), function: z.object({ name: z.string().min(1) }) }),
]);

export const chatRequestSchema = z.object({
  messages: z.array(chatMessageSchema).min(1),
  model: modelIdSchema.optional(),
  models: modelsSchema.optional(),
  /** A preset of the key's workspace applied beneath the request (also `"model": "@preset/<slug>"`). */
  preset: presetSlugSchema.optional(),
  max_tokens: z.number().int().min(1).nullish(),
  max_completion_tokens: z.number().int().min(1).nullish(),
  frequency_penalty: penaltySchema.nullish(),
  presence_penalty: penaltySchema.nullish(),
  repetition_penalty: z.number().gt(0).max(2).nullish(),
  temperature: temperatureSchema.nullish(),
  top_p: topPSchema.nullish(),
  top_k: z.number().int().min(0).nullish(),
  min_p: z.number().min(0).max(1).nullish(),
  top_a: z.number().min(0).max(1).nullish(),
  seed: z.number().int().nullish(),
  logit_bias: z.record(z.string().regex(/^\d+$/, 'logit_bias keys are token ids'), z.number().min(-100).max(100)).nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: topLogprobsSchema.nullish(),
  n: z.literal(1).nullish(),
  stop: chatStopSchema.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  modalities: z.array(z.enum(['text', 'image', 'audio'])).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
  cache_control: cacheControlSchema.optional(),
  debug: debugSchema.optional(),
  image_config: imageConfigSchema.optional(),
  metadata: metadataSchema.nullish(),
  plugins: z.array(pluginSchema).optional(),
  prompt_cache_options: z.object({ mode: z.enum(['explicit', 'auto']).optional(), ttl: z.string().optional() }).optional(),
  provider: providerPreferencesSchema.nullish(),
  reasoning: reasoningSchema.nullish(),
  reasoning_effort: reasoningEffortSchema.optional(),
  route: z.enum(['fallback', 'sort']).nullish(),
  service_tier: serviceTierSchema.optional(),
  session_id: sessionIdSchema.optional(),
  stop_server_tools_when: stopServerToolsWhenSchema.optional(),
  tools: z.array(z.union([functionTool, serverTool])).max(512).optional(),
  tool_choice: toolChoiceSchema.nullish(),
  response_format: responseFormatSchema.nullish(),
  prediction: z.object({ type: z.literal('content'), content: z.union([z.string(), z.array(textPart)]) }).nullish(),
  trace: traceSchema.optional(),
  user: userSchema.optional(),
  safety_identifier: z.string().max(256).optional(),
  verbosity: z.enum(['low', 'medium', 'high']).nullish(),
}).superRefine((body, ctx) => {
  if (body.model === undefined && body.models === undefined && body.preset === undefined) {
    ctx.addIssue({ code: 'custom', path: ['model'], message: 'model or models is required (or a preset)' });
  }
  if (body.reasoning_effort != null && body.reasoning?.effort != null && body.reasoning_effort !== body.reasoning.effort) {
    ctx.addIssue({ code: 'custom', path: ['reasoning_effort'], message: `must not differ from reasoning.effort ("${body.reasoning.effort}")` });
  }
  if (body.max_tokens != null && body.max_completion_tokens != null && body.max_tokens !== body.max_completion_tokens) {
    ctx.addIssue({ code: 'custom', path: ['max_tokens'], message: 'max_tokens is a deprecated alias of max_completion_tokens and must not differ from it' });
  }
});
export type ChatRequest = z.infer<typeof chatRequestSchema>;
