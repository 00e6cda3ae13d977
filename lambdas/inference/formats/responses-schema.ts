// POST /responses request body (docs/API.md `POST /api/v1/responses`): stateless, the whole history in `input`.
import * as z from 'zod';
import {
  cacheControlSchema, debugSchema, imageConfigSchema, imageUrlSchema, jsonSchemaObject, metadataSchema, modelIdSchema, modelsSchema, presetSlugSchema, penaltySchema,
  pluginSchema, providerPreferencesSchema, reasoningSchema, serviceTierSchema, sessionIdSchema, stopServerToolsWhenSchema,
  temperatureSchema, topLogprobsSchema, topPSchema, traceSchema, userSchema,
} from './common-schema.js';

export const MAX_TOOL_CALLS = 30;

const inputText = z.object({ type: z.literal('input_text'), text: z.string(), cache_control: cacheControlSchema.optional() });
const inputImage = z.object({
  type: z.literal('input_image'),
  image_url: imageUrlSchema.nullish(),
  file_id: z.string().nullish(),
  detail: z.enum(['auto', 'low', 'high']).optional(),
}).refine((part) => Boolean(part.image_url), 'input_image needs image_url (file ids are not stored by this gateway)');
const inputFile = z.object({
  type: z.literal('input_file'),
  file_data: z.string().nullish(),
  file_url: z.string().nullish(),
  file_id: z.string().nullish(),
  filename: z.string().nullish(),
}).refine((part) => Boolean(part.file_data || part.file_url), 'input_file needs file_data or file_url');
const inputAudio = z.object({ type: z.literal('input_audio'), input_audio: z.object({ data: z.string().min(1), format: z.string().min(1) }) });
export const inputContentPart = z.union([inputText, inputImage, inputFile, inputAudio]);

const outputText = z.object({ type: z.literal('output_text'), text: z.string(), annotations: z.array(z.unknown()).optional(), logprobs: z.array(z.unknown()).optional() });
const refusal = z.object({ type: z.literal('refusal'), refusal: z.string() });

const easyMessage = z.object({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'system', 'developer', 'assistant']),
  content: z.union([z.string(), z.array(z.union([inputContentPart, outputText, refusal]))]),
  id: z.string().optional(),
  status: z.string().optional(),
});
const outputMessage = z.object({
  type: z.literal('message').optional(),
  id: z.string().optional(),
  role: z.literal('assistant'),
  status: z.string().optional(),
  content: z.union([z.array(z.union([outputText, refusal])), z.string(), z.null()]),
});
const functionCall = z.object({
  type: z.literal('function_call'),
  id: z.string().optional(),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
  status: z.string().optional(),
});
const functionCallOutput = z.object({
  type: z.literal('function_call_output'),
  id: z.string().nullish(),
  call_id: z.string().min(1),
  output: z.union([z.string(), z.array(inputContentPart)]),
  status: z.string().nullish(),
});
const reasoningItem = z.object({
  type: z.literal('reasoning'),
  id: z.string().optional(),
  summary: z.array(z.object({ type: z.literal('summary_text'), text: z.string() })).nullish(),
  content: z.array(z.object({ type: z.string(), text: z.string() })).nullish(),
  encrypted_content: z.string().nullish(),
  signature: z.string().nullish(),
});

export const SUPPORTED_INPUT_ITEMS = ['message', 'function_call', 'function_call_output', 'reasoning'] as const;

/** Items are checked one by one, so an unsupported kind is named rather than lost in a union error. */
export const inputItemSchema = z.unknown().superRefine((item, ctx) => {
  const type = typeof item === 'object' && item !== null ? (item as { type?: unknown }).type : undefined;
  if (type !== undefined && typeof type === 'string' && !(SUPPORTED_INPUT_ITEMS as readonly string[]).includes(type)) {
    ctx.addIssue({ code: 'custom', message: `input items of type "${type}" are not supported by this gateway` });
  }
}).pipe(z.union([functionCall, functionCallOutput, reasoningItem, easyMessage, outputMessage]));
export type InputItem = z.infer<typeof functionCall> | z.infer<typeof functionCallOutput> | z.infer<typeof reasoningItem> | z.infer<typeof easyMessage> | z.infer<typeof outputMessage>;

const functionTool = z.object({
  type: z.literal('function'),
  name: z.string().min(1).max(128).regex(/^[a-zA-Z0-9_-]+$/, 'tool names use letters, digits, underscores and dashes'),
  description: z.string().nullish(),
  parameters: jsonSchemaObject.nullish(),
  strict: z.boolean().nullish(),
  async: z.boolean().optional(),
  defer_loading: z.boolean().optional(),
});
const serverTool = z.looseObject({ type: z.string().refine((type) => type !== 'function', { abort: true }) });

export const textConfigSchema = z.object({
  format: z.discriminatedUnion('type', [
    z.object({ type: z.literal('text') }),
    z.object({ type: z.literal('json_object') }),
    z.object({ type: z.literal('json_schema'), name: z.string().min(1).max(64), schema: jsonSchemaObject, strict: z.boolean().nullish(), description: z.string().optional() }),
  ]).optional(),
  verbosity: z.enum(['low', 'medium', 'high']).nullish(),
});

export const responsesToolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.object({ type: z.literal('function'), name: z.string().min(1) }),
]);

export const responsesRequestSchema = z.object({
  model: modelIdSchema.optional(),
  models: modelsSchema.optional(),
  /** A preset of the key's workspace applied beneath the request (also `"model": "@preset/<slug>"`). */
  preset: presetSlugSchema.optional(),
  input: z.union([z.string(), z.array(inputItemSchema).min(1, 'must hold at least one item')]),
  instructions: z.string().nullish(),
  max_output_tokens: z.number().int().min(1).nullish(),
  max_tool_calls: z.number().int().min(0).max(MAX_TOOL_CALLS, `max_tool_calls is at most ${MAX_TOOL_CALLS}`).nullish(),
  temperature: temperatureSchema.nullish(),
  top_p: topPSchema.nullish(),
  frequency_penalty: penaltySchema.nullish(),
  presence_penalty: penaltySchema.nullish(),
  top_k: z.number().int().min(0).optional(),
  top_logprobs: topLogprobsSchema.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  background: z.boolean().nullish(),
  // Null as absent, as the OpenAI SDK types both (`boolean | null`).
  store: z.literal(false, { message: 'store must be false: this gateway keeps no responses' }).nullish(),
  stream: z.boolean().nullish(),
  previous_response_id: z.unknown().optional(),
  include: z.array(z.enum(['file_search_call.results', 'message.input_image.image_url', 'computer_call_output.output.image_url', 'reasoning.encrypted_content', 'code_interpreter_call.outputs'])).nullish(),
  metadata: metadataSchema.nullish(),
  modalities: z.array(z.enum(['text', 'image'])).optional(),
  plugins: z.array(pluginSchema).optional(),
  prompt: z.record(z.string(), z.unknown()).nullish(),
  prompt_cache_key: z.string().nullish(),
  prompt_cache_options: z.record(z.string(), z.unknown()).optional(),
  provider: providerPreferencesSchema.nullish(),
  reasoning: reasoningSchema.nullish(),
  route: z.enum(['fallback', 'sort']).nullish(),
  safety_identifier: z.string().max(256).nullish(),
  service_tier: serviceTierSchema.optional(),
  session_id: sessionIdSchema.optional(),
  stop_server_tools_when: z.union([stopServerToolsWhenSchema, z.record(z.string(), z.unknown())]).optional(),
  text: textConfigSchema.nullish(),
  tool_choice: responsesToolChoice.nullish(),
  tools: z.array(z.union([functionTool, serverTool])).max(512).optional(),
  trace: traceSchema.optional(),
  truncation: z.enum(['auto', 'disabled']).nullish(),
  user: userSchema.optional(),
  cache_control: cacheControlSchema.optional(),
  debug: debugSchema.optional(),
  image_config: imageConfigSchema.optional(),
}).superRefine((body, ctx) => {
  if (body.model === undefined && body.models === undefined && body.preset === undefined) {
    ctx.addIssue({ code: 'custom', path: ['model'], message: 'model or models is required (or a preset)' });
  }
  refuseStoredResponseFields(body, ctx);
});

/** What needs stored responses, which this gateway does not keep: refused in a request, and in a preset made from one. */
export function refuseStoredResponseFields(body: Record<string, unknown>, ctx: z.RefinementCtx): void {
  if (body.background === true) {
    ctx.addIssue({ code: 'custom', path: ['background'], message: 'is not supported: responses are not stored, so they cannot run in the background; stream instead' });
  }
  if (body.previous_response_id !== undefined && body.previous_response_id !== null) {
    ctx.addIssue({ code: 'custom', path: ['previous_response_id'], message: 'is not supported: responses are not stored; send the full history in input' });
  }
}
export type ResponsesRequest = z.infer<typeof responsesRequestSchema>;
export type ResponsesTool = z.infer<typeof functionTool>;
