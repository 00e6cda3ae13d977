// Google Gemini: POST /v1beta/models/{model}:generateContent (a GenerateContentResponse) and
// :streamGenerateContent (with ?alt=sse, `data: {GenerateContentResponse}` events; without it, a JSON
// array streamed element by element, as the real API does).
import {
  contentText, isObject, newId, readLimit, tokens, upstreamName,
  type ErrorKind, type ErrorReply, type ParsedRequest, type Reply, type WireFormat,
} from './common.js';

const TEXT_PARTS: ReadonlySet<string> = new Set<string>();

function error(kind: ErrorKind, message: string, model?: string): ErrorReply {
  switch (kind) {
    case 'invalid':
      return { status: 400, body: { error: { code: 400, message, status: 'INVALID_ARGUMENT' } } };
    case 'not_found':
      return {
        status: 404,
        body: { error: { code: 404, message: `models/${model ?? ''} is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.`, status: 'NOT_FOUND' } },
      };
    case 'rate_limit':
      return { status: 429, body: { error: { code: 429, message: message || 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' } } };
    case 'server':
      return { status: 500, body: { error: { code: 500, message: message || 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting', status: 'INTERNAL' } } };
  }
}

function firstFunctionName(tools: unknown): string | undefined {
  if (!Array.isArray(tools)) return undefined;
  for (const tool of tools) {
    if (!isObject(tool)) continue;
    const declarations = tool.functionDeclarations ?? tool.function_declarations;
    if (!Array.isArray(declarations)) continue;
    for (const declaration of declarations) {
      if (isObject(declaration) && typeof declaration.name === 'string') return declaration.name;
    }
  }
  return undefined;
}

function parse(body: unknown, pathModel: string | undefined, stream: boolean): ParsedRequest | string {
  if (!isObject(body)) return 'Invalid JSON payload received. The request body must be a JSON object.';
  const { contents } = body;
  if (!Array.isArray(contents) || contents.length === 0) return '* GenerateContentRequest.contents: contents is not specified';
  const model = pathModel ?? '';
  const config = body.generationConfig ?? body.generation_config;
  let maxTokens: number | undefined | null;
  if (isObject(config)) maxTokens = readLimit(config.maxOutputTokens ?? config.max_output_tokens);
  if (maxTokens === null) return '* GenerateContentRequest.generation_config.max_output_tokens: must be a positive integer';
  let inputChars = 0;
  const system = body.systemInstruction ?? body.system_instruction;
  if (typeof system === 'string') inputChars += system.length;
  else if (isObject(system)) inputChars += contentText(system.parts, TEXT_PARTS).length;
  let lastUserText = '';
  for (const content of contents) {
    if (!isObject(content) || !Array.isArray(content.parts)) return '* GenerateContentRequest.contents: each content needs parts';
    const text = contentText(content.parts, TEXT_PARTS);
    inputChars += text.length;
    // A content without a role is a user turn (single-turn requests often omit it).
    if (content.role === undefined || content.role === 'user') lastUserText = text;
  }
  return { model, upstream: upstreamName(model), stream, lastUserText, inputChars, maxTokens, toolName: firstFunctionName(body.tools) };
}

function finishReason(reply: Reply): string {
  return reply.truncated ? 'MAX_TOKENS' : 'STOP';
}

function usageMetadata(promptTokens: number, candidatesTokens: number) {
  return { promptTokenCount: promptTokens, candidatesTokenCount: candidatesTokens, totalTokenCount: promptTokens + candidatesTokens };
}

function response(request: ParsedRequest, responseId: string, parts: unknown[], finish: string | undefined, usage: unknown) {
  const candidate: Record<string, unknown> = { content: { parts, role: 'model' } };
  if (finish !== undefined) candidate.finishReason = finish;
  candidate.index = 0;
  return { candidates: [candidate], usageMetadata: usage, modelVersion: request.model, responseId };
}

function geminiFormat(sse: boolean): WireFormat {
  const frame = sse
    ? (payload: unknown, _first: boolean) => `data: ${JSON.stringify(payload)}\r\n\r\n`
    : (payload: unknown, first: boolean) => (first ? '[' : ',\r\n') + JSON.stringify(payload);
  return {
    streamContentType: sse ? 'text/event-stream' : 'application/json; charset=UTF-8',
    parse,
    error,
    render(request, reply) {
      const part = reply.kind === 'tool' ? { functionCall: { name: reply.name, args: { echo: request.lastUserText } } } : { text: reply.text };
      return response(request, newId(''), [part], finishReason(reply), usageMetadata(reply.inputTokens, reply.outputTokens));
    },
    frames(request, reply, cut) {
      const responseId = newId('');
      const frames: string[] = [];
      if (reply.kind === 'tool') {
        const part = { functionCall: { name: reply.name, args: { echo: request.lastUserText } } };
        frames.push(frame(response(request, responseId, [part], cut ? undefined : 'STOP', usageMetadata(reply.inputTokens, reply.outputTokens)), true));
      } else {
        const pieces = reply.pieces.length > 0 ? reply.pieces : [''];
        let emitted = 0;
        pieces.forEach((piece, i) => {
          emitted += piece.length;
          const last = i === pieces.length - 1 && !cut;
          const usage = usageMetadata(reply.inputTokens, last ? reply.outputTokens : tokens(emitted));
          frames.push(frame(response(request, responseId, [{ text: piece }], last ? finishReason(reply) : undefined, usage), i === 0));
        });
      }
      if (!cut && !sse) frames.push(']');
      return frames;
    },
  };
}

export const geminiSse = geminiFormat(true);
export const geminiJsonArray = geminiFormat(false);
