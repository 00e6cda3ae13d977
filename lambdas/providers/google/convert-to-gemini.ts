// Internal request → Gemini generateContent request body. Gemini has no tool call ids: a tool result is
// matched to its function by the earlier assistant tool call with the same id.
import { parseDataUrl } from '../data-url.js';
import { ProviderError } from '../provider-error.js';
import { toolCallInput } from '../tool-call-input.js';
import type { ContentPart, GenerationRequest, Message, ReasoningEffort } from '../types.js';

type GeminiRequestPart =
  | { text: string; thoughtSignature?: string }
  | { inlineData: { mimeType: string; data: string } }
  | { fileData: { mimeType: string; fileUri: string } }
  | { functionCall: { name: string; args: Record<string, unknown> }; thoughtSignature?: string }
  | { functionResponse: { name: string; response: { content: string } } };

interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiRequestPart[];
}

/**
 * Google's documented placeholder for a function call part whose thought signature is unknown (a history
 * that went through a client that only keeps OpenAI-shaped messages). Gemini 3 rejects function calls
 * without a signature; with this value it skips the check. A real signature is always preferred.
 */
export const SKIP_THOUGHT_SIGNATURE = 'skip_thought_signature_validator';

/** Types Gemini reads from a URL without being told, by file extension. */
const MIME_BY_EXTENSION: Record<string, string> = {
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', webp: 'image/webp', heic: 'image/heic', heif: 'image/heif',
  pdf: 'application/pdf', wav: 'audio/wav', mp3: 'audio/mp3', flac: 'audio/flac', ogg: 'audio/ogg', aac: 'audio/aac',
  mp4: 'video/mp4', webm: 'video/webm', txt: 'text/plain',
};

const badRequest = (provider: string, message: string) => new ProviderError({ provider, kind: 'http', status: 400, message });

function mimeFromUrl(url: string): string | undefined {
  try {
    const extension = /\.([a-z0-9]+)$/i.exec(new URL(url).pathname)?.[1]?.toLowerCase();
    return extension ? MIME_BY_EXTENSION[extension] : undefined;
  } catch {
    return undefined;
  }
}

function mediaPart(provider: string, url: string, what: string): GeminiRequestPart {
  const inline = parseDataUrl(url);
  if (inline) return { inlineData: { mimeType: inline.mimeType, data: inline.base64 } };
  if (!/^https?:\/\//i.test(url)) throw badRequest(provider, `Gemini takes ${what}s as data URLs or http(s) URLs`);
  const mimeType = mimeFromUrl(url);
  if (!mimeType) {
    throw badRequest(provider, `Gemini needs the media type of ${what} URLs and it cannot be told from ${url}: send the ${what} as a data URL, or use a URL ending in a known extension (${Object.keys(MIME_BY_EXTENSION).join(', ')})`);
  }
  return { fileData: { mimeType, fileUri: url } };
}

function toParts(provider: string, content: ContentPart[]): GeminiRequestPart[] {
  return content.map((part): GeminiRequestPart => {
    switch (part.type) {
      case 'text': return { text: part.text };
      case 'image': return mediaPart(provider, part.url, 'image');
      case 'file': return mediaPart(provider, part.url, 'file');
      case 'audio': return { inlineData: { mimeType: `audio/${part.format}`, data: part.data } };
    }
  });
}

function textOf(content: ContentPart[]): string {
  return content.filter((part) => part.type === 'text').map((part) => (part as { text: string }).text).join('');
}

function modelParts(provider: string, message: Extract<Message, { role: 'assistant' }>): GeminiRequestPart[] {
  const parts = toParts(provider, message.content);
  const calls = message.tool_calls ?? [];
  calls.forEach((call, index) => {
    // Gemini signs the first function call of a step; the signature comes back on that part.
    const signature = index === 0 ? message.reasoning_signature ?? SKIP_THOUGHT_SIGNATURE : undefined;
    parts.push({ functionCall: { name: call.name, args: toolCallInput(call.arguments) }, ...(signature ? { thoughtSignature: signature } : {}) });
  });
  if (!calls.length && message.reasoning_signature) {
    const firstText = parts.find((part): part is { text: string; thoughtSignature?: string } => 'text' in part);
    if (firstText) firstText.thoughtSignature = message.reasoning_signature;
  }
  return parts;
}

/** The function name of tool call `id`: the nearest earlier assistant call with that id (ids repeat across turns). */
function functionNameFor(provider: string, messages: Message[], before: number, id: string): string {
  for (let i = before - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== 'assistant') continue;
    const call = message.tool_calls?.find((candidate) => candidate.id === id);
    if (call) return call.name;
  }
  throw badRequest(provider, `Tool result for call ${id} has no earlier assistant tool call with that id`);
}

export function convertMessages(provider: string, messages: Message[]): { systemInstruction?: { parts: { text: string }[] }; contents: GeminiContent[] } {
  const system: { text: string }[] = [];
  const contents: GeminiContent[] = [];
  const push = (role: GeminiContent['role'], parts: GeminiRequestPart[]) => {
    if (parts.length === 0) return;
    const last = contents.at(-1);
    // Gemini wants turns to alternate; parallel function responses must share one turn.
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  messages.forEach((message, index) => {
    switch (message.role) {
      case 'system':
        if (message.content.some((part) => part.type !== 'text')) throw badRequest(provider, 'Gemini system instructions take text only');
        system.push({ text: textOf(message.content) });
        return;
      case 'user':
        push('user', toParts(provider, message.content));
        return;
      case 'assistant':
        push('model', modelParts(provider, message));
        return;
      case 'tool': {
        const name = functionNameFor(provider, messages, index, message.tool_call_id);
        const media = toParts(provider, message.content.filter((part) => part.type !== 'text'));
        push('user', [{ functionResponse: { name, response: { content: textOf(message.content) } } }, ...media]);
        return;
      }
    }
  });
  return system.length ? { systemInstruction: { parts: system }, contents } : { contents };
}

/** Thinking budgets for Gemini 2.5 models (24576 is the largest every 2.5 model accepts). */
const THINKING_BUDGET: Record<Exclude<ReasoningEffort, 'none'>, number> = {
  minimal: 512, low: 2048, medium: 8192, high: 24576, xhigh: 24576, max: 24576,
};

/** Gemini 3 models take a thinking level instead of a budget. */
const THINKING_LEVEL: Record<Exclude<ReasoningEffort, 'none'>, string> = {
  minimal: 'minimal', low: 'low', medium: 'medium', high: 'high', xhigh: 'high', max: 'high',
};

function thinkingConfig(request: GenerationRequest): Record<string, unknown> | undefined {
  const reasoning = request.reasoning;
  if (!reasoning) return undefined;
  const config: Record<string, unknown> = {};
  const levels = /(^|\/)gemini-3/.test(request.model);
  if (reasoning.max_tokens !== undefined) config.thinkingBudget = reasoning.max_tokens;
  // Gemini 3 cannot switch thinking off: "minimal" is the least it does (models without it answer 400).
  else if (reasoning.effort === 'none') Object.assign(config, levels ? { thinkingLevel: 'minimal' } : { thinkingBudget: 0 });
  else if (reasoning.effort !== undefined) {
    if (levels) config.thinkingLevel = THINKING_LEVEL[reasoning.effort];
    else config.thinkingBudget = THINKING_BUDGET[reasoning.effort];
  }
  const thinks = config.thinkingBudget !== 0 && reasoning.effort !== 'none';
  config.includeThoughts = thinks && reasoning.exclude !== true;
  return config;
}

export function convertToGemini(request: GenerationRequest, provider: string): Record<string, unknown> {
  // Object.assign, not a spread copy: under Node 20 every field added to a spread copy is a slow definition.
  const body: Record<string, unknown> = Object.assign({}, convertMessages(provider, request.messages));
  if (request.tools?.length) {
    body.tools = [{
      functionDeclarations: request.tools.map((tool) => ({
        name: tool.name,
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        // Full JSON Schema, as clients send it; `parameters` only takes Gemini's OpenAPI subset.
        ...(tool.parameters ? { parametersJsonSchema: tool.parameters } : {}),
      })),
    }];
  }
  if (request.tool_choice !== undefined) {
    const choice = request.tool_choice;
    body.toolConfig = {
      functionCallingConfig: typeof choice === 'string'
        ? { mode: choice === 'required' ? 'ANY' : choice === 'none' ? 'NONE' : 'AUTO' }
        : { mode: 'ANY', allowedFunctionNames: [choice.name] },
    };
  }
  const config: Record<string, unknown> = {};
  if (request.max_output_tokens !== undefined) config.maxOutputTokens = request.max_output_tokens;
  if (request.temperature !== undefined) config.temperature = request.temperature;
  if (request.top_p !== undefined) config.topP = request.top_p;
  if (request.top_k !== undefined) config.topK = request.top_k;
  if (request.presence_penalty !== undefined) config.presencePenalty = request.presence_penalty;
  if (request.frequency_penalty !== undefined) config.frequencyPenalty = request.frequency_penalty;
  if (request.seed !== undefined) config.seed = request.seed;
  if (request.stop?.length) config.stopSequences = request.stop;
  const format = request.response_format;
  if (format?.type === 'json_object') config.responseMimeType = 'application/json';
  if (format?.type === 'json_schema') {
    config.responseMimeType = 'application/json';
    config.responseJsonSchema = format.schema;
  }
  const thinking = thinkingConfig(request);
  if (thinking) config.thinkingConfig = thinking;
  if (Object.keys(config).length) body.generationConfig = config;
  return body;
}

/** Internal request fields this adapter translates for Gemini. */
export const geminiSupportedParameters = [
  'tools', 'tool_choice', 'max_output_tokens', 'temperature', 'top_p', 'top_k', 'presence_penalty',
  'frequency_penalty', 'seed', 'stop', 'response_format', 'reasoning',
] as const;
