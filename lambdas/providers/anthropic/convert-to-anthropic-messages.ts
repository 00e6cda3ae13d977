// Internal request → Anthropic Messages request body.
//
// Decisions:
// - System messages (wherever they occur) become the top-level `system` text blocks, in order, keeping cache_control.
// - Anthropic needs user/assistant alternation: tool results become `tool_result` blocks of a user message, and
//   consecutive messages of the same role are merged into one (so tool results followed by a user turn become one
//   user message, tool results first, as Anthropic requires).
// - Tool-call arguments are JSON text internally but an object for Anthropic: arguments that are empty, not JSON,
//   or JSON that is not an object are sent as `{}` (the call and its id survive, so the tool result still pairs up).
// - Reasoning → `thinking: {type: 'enabled', budget_tokens}`: reasoning.max_tokens is the budget; otherwise effort maps
//   to ANTHROPIC_THINKING_BUDGETS (minimal/low 1024, medium 4096, high 16000, xhigh/max 32000); effort 'none' → no thinking.
//   The budget is at least 1024 (Anthropic's minimum) and must stay below max_tokens: without max_output_tokens,
//   max_tokens = budget + 4096 (room for the answer); with it, the caller's limit (which includes thinking) is kept
//   and the budget is cut to fit (max_tokens is only raised when even the minimum budget would not fit).
// - An assistant message's reasoning is sent back as a `thinking` block only when it has its signature; Anthropic
//   rejects unsigned thinking.
// - Anthropic has no response_format: json_object / json_schema are asked for through a tool (JSON_OUTPUT_TOOL)
//   whose input schema is the format's schema and which the model is made to call (tool_choice), and the adapter
//   turns that call back into the reply's text. With tools of the caller's the model must call one of them or it
//   (tool_choice any); with extended thinking, which allows no forced tool, it is told to in the system prompt.
//   Message Batches (emulateJson false) refuse them with a 400, never dropping them silently; so is audio input.
import { dataUrlText, parseDataUrl } from '../data-url.js';
import { ProviderError } from '../provider-error.js';
import { toolCallInput } from '../tool-call-input.js';
import { claudeStopSequences, claudeTemperature } from './sampling-limits.js';
import type { CacheControl, ContentPart, FunctionTool, GenerationRequest, Message, ReasoningConfig, ReasoningEffort, ToolChoice } from '../types.js';

export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;
export const ANTHROPIC_MIN_THINKING_BUDGET = 1024;
export const ANTHROPIC_THINKING_BUDGETS: Readonly<Record<Exclude<ReasoningEffort, 'none'>, number>> = {
  minimal: 1024,
  low: 1024,
  medium: 4096,
  high: 16000,
  xhigh: 32000,
  max: 32000,
};

type TextBlock = { type: 'text'; text: string; cache_control?: CacheControl };
type Source =
  | { type: 'base64'; media_type: string; data: string }
  | { type: 'text'; media_type: string; data: string }
  | { type: 'url'; url: string };
type ImageBlock = { type: 'image'; source: Source };
type DocumentBlock = { type: 'document'; source: Source; title?: string };
type ContentBlock = TextBlock | ImageBlock | DocumentBlock;
type ToolUseBlock = { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };
type ToolResultBlock = { type: 'tool_result'; tool_use_id: string; content: string | ContentBlock[] };
type ThinkingBlock = { type: 'thinking'; thinking: string; signature: string };
export type AnthropicBlock = ContentBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock;

export interface AnthropicMessageParam {
  role: 'user' | 'assistant';
  content: AnthropicBlock[];
}

function unsupported(provider: string, message: string): ProviderError {
  return new ProviderError({ provider, kind: 'http', status: 400, message, providerCode: 'unsupported_parameter' });
}

function toBlocks(content: ContentPart[], provider: string): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  for (const part of content) {
    switch (part.type) {
      case 'text':
        // Anthropic rejects empty text blocks.
        if (part.text) blocks.push({ type: 'text', text: part.text, ...(part.cache_control ? { cache_control: part.cache_control } : {}) });
        break;
      case 'image': {
        const dataUrl = parseDataUrl(part.url);
        blocks.push({ type: 'image', source: dataUrl ? { type: 'base64', media_type: dataUrl.mimeType, data: dataUrl.base64 } : { type: 'url', url: part.url } });
        break;
      }
      case 'file': {
        const dataUrl = parseDataUrl(part.url);
        const source: Source = !dataUrl
          ? { type: 'url', url: part.url }
          : dataUrl.mimeType.startsWith('text/')
            ? { type: 'text', media_type: 'text/plain', data: dataUrlText(dataUrl) }
            : { type: 'base64', media_type: dataUrl.mimeType, data: dataUrl.base64 };
        blocks.push({ type: 'document', source, ...(part.filename ? { title: part.filename } : {}) });
        break;
      }
      case 'audio':
        throw unsupported(provider, 'Anthropic does not accept audio input');
    }
  }
  return blocks;
}

/** Plain text when every part is text without cache_control; otherwise blocks. */
function toToolResultContent(content: ContentPart[], provider: string): string | ContentBlock[] {
  if (content.every((part) => part.type === 'text' && !part.cache_control)) {
    return content.map((part) => (part as { text: string }).text).join('');
  }
  return toBlocks(content, provider);
}

export function convertMessages(messages: Message[], provider: string): { system: TextBlock[]; messages: AnthropicMessageParam[] } {
  const system: TextBlock[] = [];
  const out: AnthropicMessageParam[] = [];
  const push = (role: 'user' | 'assistant', blocks: AnthropicBlock[]) => {
    if (!blocks.length) return;
    const last = out.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };

  for (const message of messages) {
    switch (message.role) {
      case 'system':
        for (const part of message.content) {
          if (part.type !== 'text') throw unsupported(provider, `Anthropic system prompts take text only, not ${part.type}`);
        }
        system.push(...(toBlocks(message.content, provider) as TextBlock[]));
        break;
      case 'user':
        push('user', toBlocks(message.content, provider));
        break;
      case 'assistant': {
        const blocks: AnthropicBlock[] = [];
        if (message.reasoning_signature && message.reasoning !== undefined) {
          blocks.push({ type: 'thinking', thinking: message.reasoning, signature: message.reasoning_signature });
        }
        blocks.push(...toBlocks(message.content, provider));
        for (const call of message.tool_calls ?? []) {
          blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: toolCallInput(call.arguments) });
        }
        push('assistant', blocks);
        break;
      }
      case 'tool':
        push('user', [{ type: 'tool_result', tool_use_id: message.tool_call_id, content: toToolResultContent(message.content, provider) }]);
        break;
    }
  }
  return { system, messages: out };
}

/** The thinking budget the request asks for, or undefined when thinking stays off. */
export function thinkingBudget(reasoning: ReasoningConfig | undefined): number | undefined {
  if (!reasoning || reasoning.effort === 'none') return undefined;
  if (reasoning.max_tokens !== undefined) {
    return reasoning.max_tokens > 0 ? Math.max(ANTHROPIC_MIN_THINKING_BUDGET, Math.floor(reasoning.max_tokens)) : undefined;
  }
  return reasoning.effort !== undefined ? ANTHROPIC_THINKING_BUDGETS[reasoning.effort] : undefined;
}

/** max_tokens and the thinking budget together, keeping budget_tokens < max_tokens. */
export function tokenLimits(request: GenerationRequest): { maxTokens: number; budget: number | undefined } {
  let budget = thinkingBudget(request.reasoning);
  const requested = request.max_output_tokens;
  if (budget === undefined) return { maxTokens: requested ?? ANTHROPIC_DEFAULT_MAX_TOKENS, budget };
  if (requested === undefined) return { maxTokens: budget + ANTHROPIC_DEFAULT_MAX_TOKENS, budget };
  if (budget >= requested) budget = Math.max(ANTHROPIC_MIN_THINKING_BUDGET, requested - 1);
  return { maxTokens: Math.max(requested, budget + 1), budget };
}

function convertTool(tool: FunctionTool): Record<string, unknown> {
  return {
    name: tool.name,
    ...(tool.description !== undefined ? { description: tool.description } : {}),
    input_schema: tool.parameters ?? { type: 'object', properties: {} },
  };
}

function convertToolChoice(choice: ToolChoice | undefined, parallel: boolean | undefined): Record<string, unknown> | undefined {
  const noParallel = parallel === false ? { disable_parallel_tool_use: true } : {};
  if (choice === undefined) return parallel === false ? { type: 'auto', ...noParallel } : undefined;
  if (choice === 'none') return { type: 'none' };
  if (choice === 'auto') return { type: 'auto', ...noParallel };
  if (choice === 'required') return { type: 'any', ...noParallel };
  return { type: 'tool', name: choice.name, ...noParallel };
}

/** The name of the tool a JSON response format is asked for through: its input is the answer. */
export const JSON_OUTPUT_TOOL = 'json_output';

/** The JSON-output tool of a request (JSON_OUTPUT_TOOL, or a variant no tool of the caller's has), if its format wants JSON. */
export function jsonOutputTool(request: Pick<GenerationRequest, 'response_format' | 'tools'>): string | undefined {
  const format = request.response_format;
  if (!format || format.type === 'text') return undefined;
  const taken = new Set(request.tools?.map((tool) => tool.name));
  let name = JSON_OUTPUT_TOOL;
  for (let n = 2; taken.has(name); n += 1) name = `${JSON_OUTPUT_TOOL}_${n}`;
  return name;
}

function jsonTool(request: GenerationRequest, name: string): Record<string, unknown> {
  const format = request.response_format!;
  if (format.type === 'json_schema') {
    const described = format.description ? `: ${format.description}` : '';
    return { name, description: `Give your answer as this tool's input: the ${format.name} object${described}.`, input_schema: format.schema };
  }
  return { name, description: 'Give your answer as this tool\'s input: a JSON object.', input_schema: { type: 'object', additionalProperties: true } };
}

export function convertToAnthropicMessages(request: GenerationRequest, options: { stream: boolean; provider: string; emulateJson?: boolean }): Record<string, unknown> {
  const { provider } = options;
  const json = jsonOutputTool(request);
  if (json !== undefined && options.emulateJson === false) {
    throw unsupported(provider, `Anthropic does not support response_format ${request.response_format!.type} in Message Batches`);
  }
  const { system, messages } = convertMessages(request.messages, provider);
  const { maxTokens, budget } = tokenLimits(request);
  const body: Record<string, unknown> = { model: request.model, max_tokens: maxTokens, messages };
  if (system.length) body.system = system;
  if (options.stream) body.stream = true;
  if (request.temperature !== undefined) body.temperature = claudeTemperature(request.temperature);
  for (const field of ['top_p', 'top_k'] as const) {
    if (request[field] !== undefined) body[field] = request[field];
  }
  const stop = claudeStopSequences(request.stop);
  if (stop) body.stop_sequences = stop;
  if (request.user !== undefined) body.metadata = { user_id: request.user };
  if (request.tools?.length) {
    body.tools = request.tools.map(convertTool);
    const toolChoice = convertToolChoice(request.tool_choice, request.parallel_tool_calls);
    if (toolChoice) body.tool_choice = toolChoice;
  }
  if (json !== undefined) {
    const choice = request.tool_choice;
    // tool_choice none: the caller's tools may not be called, so only the JSON tool is offered.
    const callerTools = request.tools?.length && choice !== 'none' ? request.tools : undefined;
    body.tools = [...(callerTools ? body.tools as unknown[] : []), jsonTool(request, json)];
    delete body.tool_choice;
    if (budget !== undefined) {
      // Extended thinking allows no forced tool: the model is told instead (and the adapter keeps only the
      // tool's input as the answer, should it write something before the call).
      system.push({ type: 'text', text: `Answer by calling the ${json} tool with your answer as its input${callerTools ? ' (or call one of the other tools first)' : ''}.` });
    } else if (callerTools && choice !== undefined && typeof choice === 'object') {
      // The caller forces one of its tools: kept (its answer comes from that tool's result, next turn).
      body.tool_choice = convertToolChoice(choice, request.parallel_tool_calls);
    } else if (callerTools) {
      body.tool_choice = { type: 'any', ...(request.parallel_tool_calls === false ? { disable_parallel_tool_use: true } : {}) };
    } else {
      // One call: two would be two answers run together.
      body.tool_choice = { type: 'tool', name: json, disable_parallel_tool_use: true };
    }
    if (system.length && !body.system) body.system = system;
  }
  if (budget !== undefined) body.thinking = { type: 'enabled', budget_tokens: budget };
  return body;
}
