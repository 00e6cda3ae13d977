// OpenAI Responses: POST /v1/responses (a `response` object, or typed SSE events from
// `response.created` to `response.completed` / `response.incomplete`, numbered by sequence_number).
import {
  contentText, isObject, newId, nowSeconds, readLimit, sseEvent, upstreamName,
  type ParsedRequest, type Reply, type WireFormat,
} from './common.js';
import { openAiError } from './openai-chat.js';

const TEXT_PARTS: ReadonlySet<string> = new Set(['input_text', 'output_text', 'text']);

interface ResponsesRequest extends ParsedRequest {
  instructions: string | null;
  tools: unknown[];
}

function usage(reply: Reply) {
  return {
    input_tokens: reply.inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: reply.outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: reply.inputTokens + reply.outputTokens,
  };
}

function outputItem(reply: Reply, itemId: string, callId: string, status: 'completed' | 'incomplete' | 'in_progress', full: boolean) {
  if (reply.kind === 'tool') {
    return { id: itemId, type: 'function_call', status, arguments: full ? reply.arguments : '', call_id: callId, name: reply.name };
  }
  return { id: itemId, type: 'message', status, role: 'assistant', content: full ? [{ type: 'output_text', text: reply.text, annotations: [] }] : [] };
}

function responseObject(request: ResponsesRequest, reply: Reply, id: string, createdAt: number, output: unknown[], done: boolean) {
  const status = !done ? 'in_progress' : reply.truncated ? 'incomplete' : 'completed';
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status,
    error: null,
    incomplete_details: done && reply.truncated ? { reason: 'max_output_tokens' } : null,
    instructions: request.instructions,
    max_output_tokens: request.maxTokens ?? null,
    model: request.model,
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: request.tools,
    usage: done ? usage(reply) : null,
    metadata: {},
  };
}

export const openAiResponses: WireFormat = {
  streamContentType: 'text/event-stream; charset=utf-8',

  parse(body) {
    if (!isObject(body)) return 'The request body must be a JSON object.';
    const { model, input } = body;
    if (typeof model !== 'string' || model === '') return "Missing required parameter: 'model'.";
    if (typeof input !== 'string' && !Array.isArray(input)) return "Missing required parameter: 'input'.";
    const maxTokens = readLimit(body.max_output_tokens);
    if (maxTokens === null) return "Invalid 'max_output_tokens': expected a positive integer.";
    const instructions = typeof body.instructions === 'string' ? body.instructions : null;
    let inputChars = instructions?.length ?? 0;
    let lastUserText = '';
    if (typeof input === 'string') {
      inputChars += input.length;
      lastUserText = input;
    } else {
      for (const item of input) {
        if (!isObject(item)) return "Invalid 'input': each item must be an object.";
        if (item.type === undefined || item.type === 'message') {
          if (typeof item.role !== 'string') return "Invalid 'input': a message item needs a 'role'.";
          const text = contentText(item.content, TEXT_PARTS);
          inputChars += text.length;
          if (item.role === 'user') lastUserText = text;
        } else if (item.type === 'function_call_output' && typeof item.output === 'string') {
          inputChars += item.output.length;
        }
      }
    }
    const tools = Array.isArray(body.tools) ? body.tools : [];
    let toolName: string | undefined;
    for (const tool of tools) {
      if (isObject(tool) && tool.type === 'function' && typeof tool.name === 'string') {
        toolName = tool.name;
        break;
      }
    }
    const request: ResponsesRequest = {
      model,
      upstream: upstreamName(model),
      stream: body.stream === true,
      lastUserText,
      inputChars,
      maxTokens,
      toolName,
      instructions,
      tools,
    };
    return request;
  },

  error: openAiError,

  render(parsed, reply) {
    const request = parsed as ResponsesRequest;
    const item = outputItem(reply, newId(reply.kind === 'tool' ? 'fc_' : 'msg_'), newId('call_'), reply.truncated ? 'incomplete' : 'completed', true);
    return responseObject(request, reply, newId('resp_'), nowSeconds(), [item], true);
  },

  frames(parsed, reply, cut) {
    const request = parsed as ResponsesRequest;
    const id = newId('resp_');
    const createdAt = nowSeconds();
    const itemId = newId(reply.kind === 'tool' ? 'fc_' : 'msg_');
    const callId = newId('call_');
    let sequence = 0;
    const frames: string[] = [];
    const emit = (type: string, fields: Record<string, unknown>) => {
      frames.push(sseEvent(type, { type, sequence_number: sequence++, ...fields }));
    };
    const pending = responseObject(request, reply, id, createdAt, [], false);
    emit('response.created', { response: pending });
    emit('response.in_progress', { response: pending });
    emit('response.output_item.added', { output_index: 0, item: outputItem(reply, itemId, callId, 'in_progress', false) });
    if (reply.kind === 'tool') {
      for (const piece of reply.pieces) emit('response.function_call_arguments.delta', { item_id: itemId, output_index: 0, delta: piece });
      if (cut) return frames;
      emit('response.function_call_arguments.done', { item_id: itemId, output_index: 0, name: reply.name, arguments: reply.arguments });
    } else {
      emit('response.content_part.added', { item_id: itemId, output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
      for (const piece of reply.pieces) emit('response.output_text.delta', { item_id: itemId, output_index: 0, content_index: 0, delta: piece });
      if (cut) return frames;
      emit('response.output_text.done', { item_id: itemId, output_index: 0, content_index: 0, text: reply.text });
      emit('response.content_part.done', { item_id: itemId, output_index: 0, content_index: 0, part: { type: 'output_text', text: reply.text, annotations: [] } });
    }
    const item = outputItem(reply, itemId, callId, reply.truncated ? 'incomplete' : 'completed', true);
    emit('response.output_item.done', { output_index: 0, item });
    const final = responseObject(request, reply, id, createdAt, [item], true);
    emit(reply.truncated ? 'response.incomplete' : 'response.completed', { response: final });
    return frames;
  },
};
