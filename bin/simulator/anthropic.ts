// Anthropic Messages: POST /v1/messages (a `message`, or the message_start … message_stop SSE events).
import {
  contentText, isObject, newId, readLimit, sseEvent, upstreamName,
  type ErrorKind, type ErrorReply, type Reply, type WireFormat,
} from './common.js';

const TEXT_BLOCKS: ReadonlySet<string> = new Set(['text']);

function error(kind: ErrorKind, message: string, model?: string): ErrorReply {
  switch (kind) {
    case 'invalid':
      return { status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message } } };
    case 'not_found':
      return { status: 404, body: { type: 'error', error: { type: 'not_found_error', message: `model: ${model ?? ''}` } } };
    case 'rate_limit':
      return { status: 429, body: { type: 'error', error: { type: 'rate_limit_error', message: message || 'Number of request tokens has exceeded your per-minute rate limit.' } } };
    case 'server':
      return { status: 500, body: { type: 'error', error: { type: 'api_error', message: message || 'Internal server error' } } };
  }
}

function stopReason(reply: Reply): string {
  return reply.kind === 'tool' ? 'tool_use' : reply.truncated ? 'max_tokens' : 'end_turn';
}

/** Text of a message's content, including the text inside tool_result blocks (for input counting). */
function inputText(content: unknown): string {
  let text = contentText(content, TEXT_BLOCKS);
  if (Array.isArray(content)) {
    for (const block of content) {
      if (isObject(block) && block.type === 'tool_result') text += contentText(block.content, TEXT_BLOCKS);
    }
  }
  return text;
}

export const anthropic: WireFormat = {
  streamContentType: 'text/event-stream; charset=utf-8',

  parse(body) {
    if (!isObject(body)) return 'The request body must be a JSON object.';
    const { model, messages } = body;
    if (typeof model !== 'string' || model === '') return 'model: Field required';
    if (!Array.isArray(messages)) return 'messages: Field required';
    if (body.max_tokens === undefined) return 'max_tokens: Field required';
    const maxTokens = readLimit(body.max_tokens);
    if (maxTokens === null || maxTokens === undefined) return 'max_tokens: Input should be a valid positive integer';
    let inputChars = 0;
    if (typeof body.system === 'string') inputChars += body.system.length;
    else if (Array.isArray(body.system)) inputChars += contentText(body.system, TEXT_BLOCKS).length;
    else if (body.system !== undefined) return 'system: Input should be a valid string or a list of text blocks';
    let lastUserText = '';
    for (const message of messages) {
      if (!isObject(message) || (message.role !== 'user' && message.role !== 'assistant')) return "messages: each message needs a role of 'user' or 'assistant'";
      inputChars += inputText(message.content).length;
      if (message.role === 'user') lastUserText = contentText(message.content, TEXT_BLOCKS);
    }
    let toolName: string | undefined;
    if (Array.isArray(body.tools)) {
      for (const tool of body.tools) {
        // Client (function) tools have no type or type "custom"; server tools (web_search_…) are skipped.
        if (isObject(tool) && typeof tool.name === 'string' && (tool.type === undefined || tool.type === 'custom')) {
          toolName = tool.name;
          break;
        }
      }
    }
    const choice = body.tool_choice;
    const forcedTool = isObject(choice) && choice.type === 'tool' && typeof choice.name === 'string' ? choice.name : undefined;
    return { model, upstream: upstreamName(model), stream: body.stream === true, lastUserText, inputChars, maxTokens, toolName, forcedTool };
  },

  error,

  render(request, reply) {
    const content = reply.kind === 'tool'
      ? [{ type: 'tool_use', id: newId('toolu_'), name: reply.name, input: { echo: request.lastUserText } }]
      : [{ type: 'text', text: reply.text }];
    return {
      id: newId('msg_'),
      type: 'message',
      role: 'assistant',
      model: request.model,
      content,
      stop_reason: stopReason(reply),
      stop_sequence: null,
      usage: { input_tokens: reply.inputTokens, output_tokens: reply.outputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    };
  },

  frames(request, reply, cut) {
    const frames: string[] = [];
    frames.push(sseEvent('message_start', {
      type: 'message_start',
      message: {
        id: newId('msg_'),
        type: 'message',
        role: 'assistant',
        model: request.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: reply.inputTokens, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      },
    }));
    const block = reply.kind === 'tool' ? { type: 'tool_use', id: newId('toolu_'), name: reply.name, input: {} } : { type: 'text', text: '' };
    frames.push(sseEvent('content_block_start', { type: 'content_block_start', index: 0, content_block: block }));
    frames.push(sseEvent('ping', { type: 'ping' }));
    for (const piece of reply.pieces) {
      const delta = reply.kind === 'tool' ? { type: 'input_json_delta', partial_json: piece } : { type: 'text_delta', text: piece };
      frames.push(sseEvent('content_block_delta', { type: 'content_block_delta', index: 0, delta }));
    }
    if (cut) return frames;
    frames.push(sseEvent('content_block_stop', { type: 'content_block_stop', index: 0 }));
    frames.push(sseEvent('message_delta', { type: 'message_delta', delta: { stop_reason: stopReason(reply), stop_sequence: null }, usage: { output_tokens: reply.outputTokens } }));
    frames.push(sseEvent('message_stop', { type: 'message_stop' }));
    return frames;
  },
};
