// Internal request → OpenAI Chat Completions request body.
import type { ContentPart, GenerationRequest, Message } from '../types.js';

type ChatPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: string } }
  | { type: 'input_audio'; input_audio: { data: string; format: string } }
  | { type: 'file'; file: { filename?: string; file_data: string } };

function toParts(content: ContentPart[]): ChatPart[] {
  return content.map((part): ChatPart => {
    switch (part.type) {
      case 'text': return { type: 'text', text: part.text };
      case 'image': return { type: 'image_url', image_url: { url: part.url, ...(part.detail ? { detail: part.detail } : {}) } };
      case 'audio': return { type: 'input_audio', input_audio: { data: part.data, format: part.format } };
      case 'file': return { type: 'file', file: { ...(part.filename ? { filename: part.filename } : {}), file_data: part.url } };
    }
  });
}

/** Plain text when every part is text, so providers without multi-part support still understand it. */
function toContent(content: ContentPart[]): string | ChatPart[] {
  if (content.every((part) => part.type === 'text')) return content.map((part) => (part as { text: string }).text).join('');
  return toParts(content);
}

export function convertMessages(messages: Message[]): Record<string, unknown>[] {
  return messages.map((message) => {
    switch (message.role) {
      case 'system':
        return { role: 'system', content: toContent(message.content) };
      case 'user':
        return { role: 'user', content: toContent(message.content), ...(message.name ? { name: message.name } : {}) };
      case 'assistant':
        return {
          role: 'assistant',
          content: message.content.length ? toContent(message.content) : null,
          ...(message.tool_calls?.length
            ? { tool_calls: message.tool_calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })) }
            : {}),
        };
      case 'tool':
        return { role: 'tool', tool_call_id: message.tool_call_id, content: toContent(message.content) };
    }
  });
}

export function convertToOpenAIChat(request: GenerationRequest, stream: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = { model: request.model, messages: convertMessages(request.messages) };
  if (stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  if (request.max_output_tokens !== undefined) body.max_completion_tokens = request.max_output_tokens;
  const passthrough = ['temperature', 'top_p', 'frequency_penalty', 'presence_penalty', 'seed', 'logprobs', 'top_logprobs', 'logit_bias', 'parallel_tool_calls', 'user', 'service_tier', 'top_k', 'min_p', 'repetition_penalty'] as const;
  for (const field of passthrough) {
    if (request[field] !== undefined) body[field] = request[field];
  }
  if (request.stop?.length) body.stop = request.stop;
  if (request.tools?.length) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: {
        name: tool.name,
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        parameters: tool.parameters ?? { type: 'object', properties: {} },
        ...(tool.strict !== undefined ? { strict: tool.strict } : {}),
      },
    }));
  }
  if (request.tool_choice !== undefined) {
    body.tool_choice = typeof request.tool_choice === 'string' ? request.tool_choice : { type: 'function', function: { name: request.tool_choice.name } };
  }
  if (request.response_format) {
    const format = request.response_format;
    body.response_format = format.type === 'json_schema'
      ? { type: 'json_schema', json_schema: { name: format.name, schema: format.schema, ...(format.strict !== undefined ? { strict: format.strict } : {}), ...(format.description ? { description: format.description } : {}) } }
      : { type: format.type };
  }
  if (request.reasoning?.effort !== undefined) body.reasoning_effort = request.reasoning.effort;
  return body;
}
