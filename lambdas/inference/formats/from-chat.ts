// Chat Completions request → InferenceRequest.
import { echo } from '../../platform/echo.js';
import { InvalidInputError } from '../../platform/errors.js';
import type { ContentPart, FunctionTool, Message, ReasoningConfig, ReasoningEffort, ResponseFormat, ToolChoice } from '../../providers/types.js';
import type { ChatMessage, ChatRequest } from './chat-schema.js';
import type { InferenceRequest } from '../inference-request.js';
import { chatContentPart } from './chat-schema.js';
import { presetOf } from '../preset-reference.js';
import type { z } from 'zod';

type ChatPart = z.infer<typeof chatContentPart>;

function toPart(part: ChatPart | { type: 'refusal'; refusal: string }): ContentPart {
  switch (part.type) {
    case 'text': return { type: 'text', text: part.text, ...(part.cache_control ? { cache_control: part.cache_control } : {}) };
    case 'refusal': return { type: 'text', text: part.refusal };
    case 'image_url': {
      const image = typeof part.image_url === 'string' ? { url: part.image_url } : part.image_url;
      return { type: 'image', url: image.url, ...(image.detail ? { detail: image.detail } : {}) };
    }
    case 'input_audio': return { type: 'audio', data: part.input_audio.data, format: part.input_audio.format };
    case 'file': return { type: 'file', url: part.file.file_data!, ...(part.file.filename ? { filename: part.file.filename } : {}) };
  }
}

function toContent(content: string | Array<ChatPart | { type: 'refusal'; refusal: string }> | null | undefined): ContentPart[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return content.length ? [{ type: 'text', text: content }] : [];
  return content.map(toPart);
}

export function chatMessagesToInternal(messages: ChatMessage[]): Message[] {
  return messages.map((message, index): Message => {
    switch (message.role) {
      case 'system':
      case 'developer':
        return { role: 'system', content: toContent(message.content) };
      case 'user':
        return { role: 'user', content: toContent(message.content), ...(message.name ? { name: message.name } : {}) };
      case 'assistant': {
        const content = toContent(message.content ?? (message.refusal ? message.refusal : null));
        if (!content.length && !message.tool_calls?.length) {
          throw new InvalidInputError(`Invalid body.messages.${index}: an assistant message needs content or tool_calls`);
        }
        return {
          role: 'assistant',
          content,
          ...(message.tool_calls?.length ? { tool_calls: message.tool_calls.map((call) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments })) } : {}),
          ...reasoningOf(message),
        };
      }
      case 'tool':
        return { role: 'tool', tool_call_id: message.tool_call_id, content: toContent(message.content) };
    }
  });
}

export function functionToolsOnly<T extends { type: string }>(tools: T[] | undefined, field = 'tools'): Array<Extract<T, { type: 'function' }>> {
  const server = (tools ?? []).filter((tool) => tool.type !== 'function');
  if (server.length) {
    throw new InvalidInputError(`Invalid body.${field}: server tools (${[...new Set(server.map((tool) => tool.type))].join(', ')}) are not available on this gateway; send function tools`);
  }
  return (tools ?? []) as Array<Extract<T, { type: 'function' }>>;
}

/**
 * Tools no provider can serve as asked, refused here before anything goes upstream: two tools of one name
 * (Anthropic refuses them: "Tool names must be unique"), a tool_choice naming a tool the request does not
 * define, and a tool required (`"required"`; Messages' `"any"`) of a request without tools. `required` is
 * how the format says the latter.
 */
export function checkTools(tools: readonly FunctionTool[], choice: ToolChoice | undefined, required = '"required"'): void {
  if (tools.length > 1) {
    const names = new Set<string>();
    for (const tool of tools) {
      if (names.has(tool.name)) throw new InvalidInputError(`Invalid body.tools: more than one tool is named "${echo(tool.name)}"; tool names must be unique`);
      names.add(tool.name);
    }
  }
  if (choice === undefined || choice === 'auto' || choice === 'none') return;
  if (choice === 'required') {
    if (!tools.length) throw new InvalidInputError(`Invalid body.tool_choice: ${required} needs tools, and body.tools defines none`);
    return;
  }
  if (!tools.some((tool) => tool.name === choice.name)) {
    throw new InvalidInputError(`Invalid body.tool_choice: it names the tool "${echo(choice.name)}", which body.tools does not define`);
  }
}

export function rejectPlugins(plugins: InferenceRequest['plugins']): void {
  const active = plugins.filter((plugin) => (plugin as { enabled?: boolean }).enabled !== false);
  if (active.length) {
    throw new InvalidInputError(`Invalid body.plugins: ${active.map((plugin) => `"${plugin.id}"`).join(', ')} ${active.length === 1 ? 'is' : 'are'} not available on this gateway`);
  }
}

export function modelList(model: string | undefined, models: string[] | undefined): string[] {
  return [...new Set([...(model ? [model] : []), ...(models ?? [])])];
}

/** The models to try and the preset named, from `model` (which may name a preset) and `preset`. */
export function modelsAndPreset(body: { model?: string | undefined; models?: string[] | undefined; preset?: string | undefined }): Pick<InferenceRequest, 'models' | 'preset'> {
  const { model, preset } = presetOf(body.model, body.preset);
  return { models: modelList(model, body.models), ...(preset ? { preset } : {}) };
}

/** An assistant turn's reasoning: `reasoning`, else the text of its reasoning_details, with their signature. */
function reasoningOf(message: { reasoning?: string | null | undefined; reasoning_details?: Array<{ text?: string | null | undefined; summary?: string | null | undefined; signature?: string | null | undefined }> | null | undefined }) {
  const details = message.reasoning_details ?? [];
  const text = message.reasoning || details.map((detail) => detail.text ?? detail.summary ?? '').join('') || undefined;
  const signature = details.find((detail) => detail.signature)?.signature ?? undefined;
  return { ...(text ? { reasoning: text } : {}), ...(signature ? { reasoning_signature: signature } : {}) };
}

/** A chat `response_format` as the internal one (`where` names it in the 400 for a type no provider takes). */
export function toResponseFormat(format: NonNullable<ChatRequest['response_format']>, where: string): ResponseFormat {
  if (format.type === 'grammar' || format.type === 'python') {
    throw new InvalidInputError(`Invalid ${where}: type "${format.type}" is not supported by any configured provider`);
  }
  return format.type === 'json_schema'
    ? { type: 'json_schema', name: format.json_schema.name, schema: format.json_schema.schema ?? {}, ...(format.json_schema.strict != null ? { strict: format.json_schema.strict } : {}), ...(format.json_schema.description ? { description: format.json_schema.description } : {}) }
    : { type: format.type };
}

type Reasoning = ChatRequest['reasoning'];

/** `reasoning` (and the chat shorthand `reasoning_effort`) as the internal config; `enabled: false` means effort none. */
export function toReasoning(reasoning: Reasoning, shorthand?: ReasoningEffort | null): ReasoningConfig | undefined {
  if (!reasoning && !shorthand) return undefined;
  const effort = reasoning?.effort ?? shorthand ?? undefined;
  const config: ReasoningConfig = {
    ...(effort ? { effort } : reasoning?.enabled === false ? { effort: 'none' as const } : {}),
    ...(reasoning?.max_tokens != null ? { max_tokens: reasoning.max_tokens } : {}),
    ...(reasoning?.exclude != null ? { exclude: reasoning.exclude } : {}),
    ...(reasoning?.summary ? { summary: reasoning.summary } : {}),
  };
  return Object.keys(config).length ? config : undefined;
}

/** The routing and identity fields both inbound formats share. */
export function routingFields(
  body: Pick<ChatRequest, 'model' | 'models' | 'preset' | 'provider' | 'route' | 'stream' | 'service_tier' | 'session_id' | 'user' | 'metadata' | 'trace'> & { safety_identifier?: string | null | undefined },
  plugins: InferenceRequest['plugins'],
): Omit<InferenceRequest, 'format' | 'params' | 'echo'> {
  const { models, preset } = modelsAndPreset(body);
  // Named fields first: under Node 20, a literal that opens with a spread makes each later field a slow
  // property definition (about 1 µs each on the bench machine; see the README's "Hot-path style").
  return {
    models,
    ...(preset ? { preset } : {}),
    provider: body.provider ?? undefined,
    routePartition: body.route === 'fallback' ? 'model' : body.route === 'sort' ? 'none' : undefined,
    stream: body.stream === true,
    serviceTier: body.service_tier ?? null,
    sessionId: body.session_id,
    user: body.user,
    safetyIdentifier: body.safety_identifier ?? undefined,
    metadata: body.metadata ?? undefined,
    trace: body.trace,
    plugins,
  };
}

export function fromChat(body: ChatRequest): InferenceRequest {
  const plugins = body.plugins ?? [];
  rejectPlugins(plugins);
  const tools: FunctionTool[] = functionToolsOnly(body.tools).map((tool) => ({
    name: tool.function.name,
    ...(tool.function.description !== undefined ? { description: tool.function.description } : {}),
    ...(tool.function.parameters !== undefined ? { parameters: tool.function.parameters } : {}),
    ...(tool.function.strict != null ? { strict: tool.function.strict } : {}),
  }));
  const responseFormat = body.response_format ? toResponseFormat(body.response_format, 'body.response_format') : undefined;
  const toolChoice: ToolChoice | undefined = body.tool_choice == null ? undefined
    : typeof body.tool_choice === 'string' ? body.tool_choice : { name: body.tool_choice.function.name };
  checkTools(tools, toolChoice);
  const reasoning = toReasoning(body.reasoning, body.reasoning_effort);
  const maxTokens = body.max_completion_tokens ?? body.max_tokens ?? undefined;
  const params: InferenceRequest['params'] = {
    messages: chatMessagesToInternal(body.messages),
    ...(tools.length ? { tools } : {}),
    ...(toolChoice !== undefined ? { tool_choice: toolChoice } : {}),
    ...(body.parallel_tool_calls != null ? { parallel_tool_calls: body.parallel_tool_calls } : {}),
    ...(maxTokens !== undefined ? { max_output_tokens: maxTokens } : {}),
    ...(body.temperature != null ? { temperature: body.temperature } : {}),
    ...(body.top_p != null ? { top_p: body.top_p } : {}),
    ...(body.top_k != null ? { top_k: body.top_k } : {}),
    ...(body.frequency_penalty != null ? { frequency_penalty: body.frequency_penalty } : {}),
    ...(body.presence_penalty != null ? { presence_penalty: body.presence_penalty } : {}),
    ...(body.repetition_penalty != null ? { repetition_penalty: body.repetition_penalty } : {}),
    ...(body.min_p != null ? { min_p: body.min_p } : {}),
    ...(body.seed != null ? { seed: body.seed } : {}),
    ...(body.stop != null ? { stop: typeof body.stop === 'string' ? [body.stop] : body.stop } : {}),
    ...(body.logprobs != null ? { logprobs: body.logprobs } : {}),
    ...(body.top_logprobs != null ? { top_logprobs: body.top_logprobs } : {}),
    ...(body.logit_bias != null ? { logit_bias: body.logit_bias } : {}),
    ...(responseFormat ? { response_format: responseFormat } : {}),
    ...(reasoning ? { reasoning } : {}),
  };
  const request: InferenceRequest = { format: 'chat', ...routingFields(body, plugins), params, echo: {} };
  if (body.stream === true && body.debug?.echo_upstream_body === true) request.echoUpstreamBody = true;
  return request;
}
