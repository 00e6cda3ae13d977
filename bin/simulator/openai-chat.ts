// OpenAI Chat Completions: POST /v1/chat/completions (`chat.completion`, or `chat.completion.chunk` SSE
// ending in `data: [DONE]`).
import {
  contentText, isObject, newId, nowSeconds, readLimit, sseData, upstreamName,
  type ErrorKind, type ErrorReply, type ParsedRequest, type Reply, type WireFormat,
} from './common.js';

const TEXT_PARTS: ReadonlySet<string> = new Set(['text']);
const SYSTEM_FINGERPRINT = 'fp_simulator';

interface ChatRequest extends ParsedRequest {
  includeUsage: boolean;
}

/** The OpenAI error envelope, shared with the Responses API. */
export function openAiError(kind: ErrorKind, message: string, model?: string): ErrorReply {
  switch (kind) {
    case 'invalid':
      return { status: 400, body: { error: { message, type: 'invalid_request_error', param: null, code: null } } };
    case 'not_found':
      return {
        status: 404,
        body: { error: { message: `The model \`${model ?? ''}\` does not exist or you do not have access to it.`, type: 'invalid_request_error', param: null, code: 'model_not_found' } },
      };
    case 'rate_limit':
      return { status: 429, body: { error: { message: message || 'Rate limit reached for requests. Please try again in 1s.', type: 'requests', param: null, code: 'rate_limit_exceeded' } } };
    case 'server':
      return { status: 500, body: { error: { message: message || 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null } } };
  }
}

function usage(reply: Reply) {
  return {
    prompt_tokens: reply.inputTokens,
    completion_tokens: reply.outputTokens,
    total_tokens: reply.inputTokens + reply.outputTokens,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
}

function finishReason(reply: Reply): string {
  return reply.kind === 'tool' ? 'tool_calls' : reply.truncated ? 'length' : 'stop';
}

export const openAiChat: WireFormat = {
  streamContentType: 'text/event-stream; charset=utf-8',

  parse(body) {
    if (!isObject(body)) return 'The request body must be a JSON object.';
    const { model, messages } = body;
    if (typeof model !== 'string' || model === '') return "Missing required parameter: 'model'.";
    if (!Array.isArray(messages) || messages.length === 0) return "Missing required parameter: 'messages'.";
    const maxTokens = readLimit(body.max_completion_tokens ?? body.max_tokens);
    if (maxTokens === null) return "Invalid 'max_completion_tokens': expected a positive integer.";
    let inputChars = 0;
    let lastUserText = '';
    for (const message of messages) {
      if (!isObject(message) || typeof message.role !== 'string') return "Invalid 'messages': each message must be an object with a 'role'.";
      const text = contentText(message.content, TEXT_PARTS);
      inputChars += text.length;
      if (message.role === 'user') lastUserText = text;
    }
    let toolName: string | undefined;
    if (Array.isArray(body.tools)) {
      for (const tool of body.tools) {
        if (isObject(tool) && tool.type === 'function' && isObject(tool.function) && typeof tool.function.name === 'string') {
          toolName = tool.function.name;
          break;
        }
      }
    }
    const request: ChatRequest = {
      model,
      upstream: upstreamName(model),
      stream: body.stream === true,
      lastUserText,
      inputChars,
      maxTokens,
      toolName,
      includeUsage: isObject(body.stream_options) && body.stream_options.include_usage === true,
    };
    return request;
  },

  error: openAiError,

  render(request, reply) {
    const message = reply.kind === 'tool'
      ? { role: 'assistant', content: null, tool_calls: [{ id: newId('call_'), type: 'function', function: { name: reply.name, arguments: reply.arguments } }], refusal: null }
      : { role: 'assistant', content: reply.text, refusal: null };
    return {
      id: newId('chatcmpl-'),
      object: 'chat.completion',
      created: nowSeconds(),
      model: request.model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(reply) }],
      usage: usage(reply),
      system_fingerprint: SYSTEM_FINGERPRINT,
    };
  },

  frames(parsed, reply, cut) {
    const request = parsed as ChatRequest;
    const id = newId('chatcmpl-');
    const created = nowSeconds();
    const includeUsage = request.includeUsage;
    const chunk = (delta: unknown, finish: string | null) => {
      const payload: Record<string, unknown> = {
        id,
        object: 'chat.completion.chunk',
        created,
        model: request.model,
        system_fingerprint: SYSTEM_FINGERPRINT,
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      };
      if (includeUsage) payload.usage = null;
      return sseData(payload);
    };
    const frames: string[] = [];
    if (reply.kind === 'tool') {
      frames.push(chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: newId('call_'), type: 'function', function: { name: reply.name, arguments: '' } }], refusal: null }, null));
      for (const piece of reply.pieces) frames.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }, null));
    } else {
      frames.push(chunk({ role: 'assistant', content: '', refusal: null }, null));
      for (const piece of reply.pieces) frames.push(chunk({ content: piece }, null));
    }
    if (cut) return frames;
    frames.push(chunk({}, finishReason(reply)));
    if (includeUsage) {
      frames.push(sseData({ id, object: 'chat.completion.chunk', created, model: request.model, system_fingerprint: SYSTEM_FINGERPRINT, choices: [], usage: usage(reply) }));
    }
    frames.push('data: [DONE]\n\n');
    return frames;
  },
};
