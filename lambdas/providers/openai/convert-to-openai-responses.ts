// Internal request → OpenAI Responses request body (stateless: store false, the whole conversation as input items).
//
// Decisions:
// - Leading (text-only) system messages become `instructions`, joined by a blank line; a system message later
//   in the conversation stays in place as a system input message.
// - Assistant text → an assistant output message item; tool calls → function_call items; tool results →
//   function_call_output items (output is plain text, or input content parts when it holds images or files).
// - Assistant reasoning is not sent back: the Responses API only takes its own reasoning items (with their
//   encrypted content), which the internal model does not carry.
// - Function tools are sent with an explicit `strict` (false unless asked), since the Responses API would
//   otherwise default to strict schemas, unlike Chat Completions.
// - reasoning.effort 'max' is sent as 'xhigh', the highest effort OpenAI knows; reasoning.max_tokens has no
//   Responses equivalent and is not sent.
// - Audio input parts are refused with a 400: Responses input messages take text, images and files only.
import { ProviderError } from '../provider-error.js';
import type { ContentPart, GenerationRequest, Message } from '../types.js';

type InputPart =
  | { type: 'input_text'; text: string }
  | { type: 'input_image'; image_url: string; detail: string }
  | { type: 'input_file'; filename?: string; file_data?: string; file_url?: string };

function toInputParts(content: ContentPart[], provider: string): InputPart[] {
  return content.map((part): InputPart => {
    switch (part.type) {
      case 'text':
        return { type: 'input_text', text: part.text };
      case 'image':
        return { type: 'input_image', image_url: part.url, detail: part.detail ?? 'auto' };
      case 'file':
        return {
          type: 'input_file',
          ...(part.filename ? { filename: part.filename } : {}),
          ...(part.url.startsWith('data:') ? { file_data: part.url } : { file_url: part.url }),
        };
      case 'audio':
        throw new ProviderError({ provider, kind: 'http', status: 400, message: 'The OpenAI Responses API does not accept audio input parts', providerCode: 'unsupported_parameter' });
    }
  });
}

const textOf = (content: ContentPart[]) => content.map((part) => (part.type === 'text' ? part.text : '')).join('');

export function convertInput(messages: Message[], provider: string): { instructions?: string; input: Record<string, unknown>[] } {
  let start = 0;
  const leading: string[] = [];
  const isTextSystem = (message: Message | undefined) => message?.role === 'system' && message.content.every((part) => part.type === 'text');
  while (isTextSystem(messages[start])) {
    leading.push(textOf(messages[start]!.content));
    start++;
  }
  const input: Record<string, unknown>[] = [];
  for (const message of messages.slice(start)) {
    switch (message.role) {
      case 'system':
        input.push({ type: 'message', role: 'system', content: toInputParts(message.content, provider) });
        break;
      case 'user':
        input.push({ type: 'message', role: 'user', content: toInputParts(message.content, provider) });
        break;
      case 'assistant': {
        const text = textOf(message.content);
        if (text) input.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] });
        for (const call of message.tool_calls ?? []) {
          input.push({ type: 'function_call', call_id: call.id, name: call.name, arguments: call.arguments });
        }
        break;
      }
      case 'tool':
        input.push({
          type: 'function_call_output',
          call_id: message.tool_call_id,
          output: message.content.every((part) => part.type === 'text') ? textOf(message.content) : toInputParts(message.content, provider),
        });
        break;
    }
  }
  return leading.length ? { instructions: leading.join('\n\n'), input } : { input };
}

export function convertToOpenAIResponses(request: GenerationRequest, options: { stream: boolean; provider: string }): Record<string, unknown> {
  const { instructions, input } = convertInput(request.messages, options.provider);
  const body: Record<string, unknown> = { model: request.model, ...(instructions !== undefined ? { instructions } : {}), input, store: false };
  if (options.stream) body.stream = true;
  const passthrough = ['max_output_tokens', 'temperature', 'top_p', 'parallel_tool_calls', 'user', 'service_tier', 'top_logprobs'] as const;
  for (const field of passthrough) {
    if (request[field] !== undefined) body[field] = request[field];
  }
  if (request.tools?.length) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      name: tool.name,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      parameters: tool.parameters ?? { type: 'object', properties: {} },
      strict: tool.strict ?? false,
    }));
  }
  if (request.tool_choice !== undefined) {
    body.tool_choice = typeof request.tool_choice === 'string' ? request.tool_choice : { type: 'function', name: request.tool_choice.name };
  }
  if (request.response_format) {
    const format = request.response_format;
    body.text = {
      format: format.type === 'json_schema'
        ? {
            type: 'json_schema',
            name: format.name,
            schema: format.schema,
            ...(format.strict !== undefined ? { strict: format.strict } : {}),
            ...(format.description ? { description: format.description } : {}),
          }
        : { type: format.type },
    };
  }
  const reasoning = request.reasoning;
  if (reasoning && (reasoning.effort !== undefined || reasoning.summary !== undefined)) {
    body.reasoning = {
      ...(reasoning.effort !== undefined ? { effort: reasoning.effort === 'max' ? 'xhigh' : reasoning.effort } : {}),
      ...(reasoning.summary !== undefined ? { summary: reasoning.summary } : {}),
    };
  }
  return body;
}
