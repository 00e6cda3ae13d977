// Anthropic Messages request → InferenceRequest. Anthropic puts a turn's tool results inside a user message
// and a turn's tool calls and thinking inside an assistant message's content; internally tool results are
// messages of their own (role tool, before the rest of the user's turn), and tool calls and reasoning are
// fields of the assistant message.
import { InvalidInputError } from '../../platform/errors.js';
import type { ContentPart, FunctionTool, Message, ReasoningConfig, ToolChoice } from '../../providers/types.js';
import type { InferenceRequest } from '../inference-request.js';
import { checkTools, modelsAndPreset, rejectPlugins } from './from-chat.js';
import type { MessagesContentBlock, MessagesMessage, MessagesRequest } from './messages-schema.js';

type Block = MessagesContentBlock;

function textPart(text: string, cacheControl: { type: 'ephemeral'; ttl?: string | undefined } | null | undefined): ContentPart {
  return { type: 'text', text, ...(cacheControl ? { cache_control: { type: 'ephemeral', ...(cacheControl.ttl ? { ttl: cacheControl.ttl } : {}) } } : {}) };
}

/** A content block that is content (text, an image, a document) as an internal part. */
function contentPart(block: Extract<Block, { type: 'text' | 'image' | 'document' }>): ContentPart {
  switch (block.type) {
    case 'text': return textPart(block.text, block.cache_control);
    case 'image': return { type: 'image', url: block.source.type === 'base64' ? `data:${block.source.media_type};base64,${block.source.data}` : block.source.url };
    case 'document': {
      const { source } = block;
      if (source.type === 'text') return textPart(source.data, block.cache_control);
      const url = source.type === 'base64' ? `data:${source.media_type};base64,${source.data}` : source.url;
      return { type: 'file', url, ...(block.title ? { filename: block.title } : {}) };
    }
  }
}

function userTurn(message: MessagesMessage, index: number): Message[] {
  if (typeof message.content === 'string') return [{ role: 'user', content: message.content.length ? [{ type: 'text', text: message.content }] : [] }];
  const tools: Message[] = [];
  const parts: ContentPart[] = [];
  message.content.forEach((block, at) => {
    switch (block.type) {
      case 'tool_result': {
        const content: ContentPart[] = block.content === undefined ? [] : typeof block.content === 'string' ? [{ type: 'text', text: block.content }] : block.content.map(contentPart);
        // An error result says so in its text: the internal tool message has no flag for it.
        if (block.is_error) content.unshift({ type: 'text', text: 'Error: ' });
        // A cache breakpoint on the result (where agents put it: the last block of the conversation) goes on
        // its last text, which the providers' prompt caches honour (a result without text keeps none).
        const last = block.cache_control ? content.map((part) => part.type).lastIndexOf('text') : -1;
        if (last >= 0) content[last] = textPart((content[last] as { text: string }).text, block.cache_control);
        tools.push({ role: 'tool', tool_call_id: block.tool_use_id, content });
        return;
      }
      case 'text': case 'image': case 'document':
        parts.push(contentPart(block));
        return;
      default:
        throw new InvalidInputError(`Invalid body.messages.${index}.content.${at}: a user message cannot hold a ${block.type} block`);
    }
  });
  return [...tools, ...(parts.length || !tools.length ? [{ role: 'user' as const, content: parts }] : [])];
}

function assistantTurn(message: MessagesMessage, index: number): Message {
  if (typeof message.content === 'string') return { role: 'assistant', content: message.content.length ? [{ type: 'text', text: message.content }] : [] };
  const content: ContentPart[] = [];
  const calls: Array<{ id: string; name: string; arguments: string }> = [];
  let reasoning = '';
  let signature: string | undefined;
  message.content.forEach((block, at) => {
    switch (block.type) {
      case 'text': content.push(textPart(block.text, block.cache_control)); return;
      case 'tool_use': calls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input) }); return;
      // The signature covers its own block's text: with several blocks (interleaved thinking) only the first
      // goes on, whole with its signature, so that Anthropic can still verify it.
      case 'thinking':
        if (reasoning === '' && signature === undefined) {
          reasoning = block.thinking;
          signature = block.signature;
        }
        return;
      // Encrypted reasoning only Anthropic can read: nothing to pass on to another provider.
      case 'redacted_thinking': return;
      default:
        throw new InvalidInputError(`Invalid body.messages.${index}.content.${at}: an assistant message cannot hold a ${block.type} block`);
    }
  });
  return {
    role: 'assistant',
    content,
    ...(calls.length ? { tool_calls: calls } : {}),
    ...(reasoning ? { reasoning } : {}),
    ...(signature ? { reasoning_signature: signature } : {}),
  };
}

export function messagesToInternal(body: Pick<MessagesRequest, 'system' | 'messages'>): Message[] {
  const system: Message[] = body.system === undefined ? []
    : typeof body.system === 'string' ? (body.system.length ? [{ role: 'system', content: [{ type: 'text', text: body.system }] }] : [])
    : body.system.length ? [{ role: 'system', content: body.system.map((block) => textPart(block.text, block.cache_control)) }] : [];
  return [...system, ...body.messages.flatMap((message, index) => (message.role === 'user' ? userTurn(message, index) : [assistantTurn(message, index)]))];
}

function toolsOf(tools: MessagesRequest['tools']): FunctionTool[] {
  const server = (tools ?? []).filter((tool) => tool.type !== undefined && tool.type !== 'custom');
  if (server.length) {
    throw new InvalidInputError(`Invalid body.tools: server tools (${[...new Set(server.map((tool) => tool.type))].join(', ')}) are not available on this gateway; send client tools with an input_schema`);
  }
  return (tools ?? []).map((tool) => ({
    name: tool.name,
    ...(tool.description !== undefined ? { description: tool.description } : {}),
    parameters: tool.input_schema ?? { type: 'object', properties: {} },
  }));
}

function reasoningOf(thinking: MessagesRequest['thinking']): ReasoningConfig | undefined {
  if (!thinking) return undefined;
  if (thinking.type === 'enabled') return { max_tokens: thinking.budget_tokens };
  if (thinking.type === 'disabled') return { effort: 'none' };
  return { effort: 'medium' };
}

export function fromMessages(body: MessagesRequest): InferenceRequest {
  const plugins = body.plugins ?? [];
  rejectPlugins(plugins);
  const tools = toolsOf(body.tools);
  const choice = body.tool_choice;
  const toolChoice: ToolChoice | undefined = !choice ? undefined
    : choice.type === 'auto' ? 'auto' : choice.type === 'any' ? 'required' : choice.type === 'none' ? 'none' : { name: choice.name };
  checkTools(tools, toolChoice, '{"type": "any"}');
  const parallel = choice && choice.type !== 'none' && choice.disable_parallel_tool_use !== undefined ? !choice.disable_parallel_tool_use : undefined;
  const reasoning = reasoningOf(body.thinking);
  const params: InferenceRequest['params'] = {
    messages: messagesToInternal(body),
    ...(tools.length ? { tools } : {}),
    ...(toolChoice !== undefined ? { tool_choice: toolChoice } : {}),
    ...(parallel !== undefined ? { parallel_tool_calls: parallel } : {}),
    ...(body.max_tokens !== undefined ? { max_output_tokens: body.max_tokens } : {}),
    ...(body.temperature != null ? { temperature: body.temperature } : {}),
    ...(body.top_p != null ? { top_p: body.top_p } : {}),
    ...(body.top_k != null ? { top_k: body.top_k } : {}),
    ...(body.stop_sequences?.length ? { stop: body.stop_sequences } : {}),
    ...(reasoning ? { reasoning } : {}),
  };
  return {
    format: 'messages',
    ...modelsAndPreset(body),
    provider: body.provider ?? undefined,
    routePartition: body.route === 'fallback' ? 'model' : body.route === 'sort' ? 'none' : undefined,
    stream: body.stream === true,
    // Anthropic's "standard_only" is the default tier; "auto" lets the provider choose.
    serviceTier: body.service_tier === 'standard_only' ? 'default' : body.service_tier ?? null,
    sessionId: body.session_id,
    user: body.user ?? body.metadata?.user_id ?? undefined,
    safetyIdentifier: undefined,
    metadata: undefined,
    plugins,
    params,
    echo: {},
  };
}
