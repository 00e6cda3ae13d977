// Internal request → Bedrock Converse / ConverseStream input (the SDK's command input shape).
//
// Model-specific fields go in `additionalModelRequestFields`, chosen by the model family in the model id
// (base model id, inference profile id or ARN):
//   top_k      Anthropic Claude `top_k`, Mistral `top_k`, Cohere `k`, Amazon Nova `inferenceConfig.topK`
//   reasoning  Anthropic Claude `thinking {type: enabled, budget_tokens}`; Amazon Nova 2
//              `reasoningConfig {type: enabled, maxReasoningEffort}`; OpenAI gpt-oss `reasoning_effort`
// For other families these parameters are refused (400) rather than dropped.
import { dataUrlBytes, parseDataUrl } from '../data-url.js';
import type {
  ContentBlock, ConverseRequest, DocumentFormat, ImageFormat, Message as BedrockMessage, SystemContentBlock,
  Tool, ToolConfiguration, ToolResultContentBlock,
} from '@aws-sdk/client-bedrock-runtime';
import { ProviderError } from '../provider-error.js';
import type { CacheControl, ContentPart, GenerationRequest, Message, ReasoningEffort } from '../types.js';
import { claudeStopSequences, claudeTemperature, isClaudeOnBedrock } from '../anthropic/sampling-limits.js';
import { toolCallInput } from '../tool-call-input.js';

/** The SDK's JSON document type (tool input, additional model fields). */
type DocumentType = NonNullable<ConverseRequest['additionalModelRequestFields']>;

const IMAGE_FORMATS: Record<string, ImageFormat> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/jpg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };

const DOCUMENT_FORMATS: Record<string, DocumentFormat> = {
  'application/pdf': 'pdf', 'text/csv': 'csv', 'application/msword': 'doc',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx', 'text/html': 'html',
  'text/markdown': 'md', 'text/plain': 'txt', 'application/vnd.ms-excel': 'xls',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
};

const AUDIO_FORMATS = new Set(['aac', 'flac', 'm4a', 'mka', 'mkv', 'mp3', 'mp4', 'mpeg', 'mpga', 'ogg', 'opus', 'pcm', 'wav', 'webm', 'x-aac']);

const SERVICE_TIERS = new Set(['default', 'flex', 'priority', 'reserved']);

const badRequest = (provider: string, message: string) => new ProviderError({ provider, kind: 'http', status: 400, message });

type ModelFamily = 'anthropic' | 'nova' | 'openai' | 'mistral' | 'cohere' | 'other';

/** The model family of a base model id, inference profile id (us.anthropic.…) or ARN. */
export function bedrockModelFamily(modelId: string): ModelFamily {
  const id = modelId.toLowerCase();
  if (isClaudeOnBedrock(id)) return 'anthropic';
  if (id.includes('amazon.nova')) return 'nova';
  if (id.includes('openai.')) return 'openai';
  if (id.includes('mistral.')) return 'mistral';
  if (id.includes('cohere.command')) return 'cohere';
  return 'other';
}

/** Converse document names allow letters, digits, single spaces, hyphens, parentheses and brackets. */
function documentName(filename: string | undefined, index: number): string {
  const base = (filename ?? '').replace(/\.[^.]*$/, '').replace(/[^A-Za-z0-9\s\-()[\]]/g, '-').replace(/\s+/g, ' ').trim();
  return base || `document-${index + 1}`;
}

function cachePoint(control: CacheControl): ContentBlock.CachePointMember {
  const ttl = control.ttl === '5m' || control.ttl === '1h' ? control.ttl : undefined;
  return { cachePoint: { type: 'default', ...(ttl ? { ttl } : {}) } };
}

class BlockConverter {
  private documents = 0;
  constructor(private readonly provider: string) {}

  blocks(content: ContentPart[]): ContentBlock[] {
    const blocks: ContentBlock[] = [];
    for (const part of content) {
      switch (part.type) {
        case 'text':
          // Converse rejects blank text blocks.
          if (part.text.trim() !== '') blocks.push({ text: part.text });
          if (part.cache_control) blocks.push(cachePoint(part.cache_control));
          break;
        case 'image':
          blocks.push({ image: this.image(part.url) });
          break;
        case 'file':
          blocks.push({ document: this.document(part.url, part.filename) });
          break;
        case 'audio':
          if (!AUDIO_FORMATS.has(part.format)) throw badRequest(this.provider, `Bedrock Converse does not take audio in ${part.format} format`);
          blocks.push({ audio: { format: part.format as never, source: { bytes: Buffer.from(part.data, 'base64') } } });
          break;
      }
    }
    return blocks;
  }

  image(url: string): ContentBlock.ImageMember['image'] {
    if (url.startsWith('s3://')) {
      const format = IMAGE_FORMATS[`image/${/\.([a-z]+)$/i.exec(url)?.[1]?.toLowerCase() ?? ''}`];
      if (!format) throw badRequest(this.provider, `Bedrock Converse needs the format of an S3 image; ${url} has no png, jpeg, gif or webp extension`);
      return { format, source: { s3Location: { uri: url } } };
    }
    const data = parseDataUrl(url);
    if (!data) throw badRequest(this.provider, 'Bedrock Converse does not fetch image URLs: send the image as a data URL (data:image/png;base64,…)');
    const format = IMAGE_FORMATS[data.mimeType];
    if (!format) throw badRequest(this.provider, `Bedrock Converse does not take ${data.mimeType} images (png, jpeg, gif and webp only)`);
    return { format, source: { bytes: dataUrlBytes(data) } };
  }

  document(url: string, filename: string | undefined): ContentBlock.DocumentMember['document'] {
    const data = parseDataUrl(url);
    if (!data) throw badRequest(this.provider, 'Bedrock Converse does not fetch file URLs: send the file as a data URL');
    const format = DOCUMENT_FORMATS[data.mimeType];
    if (!format) throw badRequest(this.provider, `Bedrock Converse does not take ${data.mimeType} documents`);
    return { format, name: documentName(filename, this.documents++), source: { bytes: dataUrlBytes(data) } };
  }

  toolResult(content: ContentPart[]): ToolResultContentBlock[] {
    const blocks: ToolResultContentBlock[] = [];
    for (const part of content) {
      if (part.type === 'text') blocks.push({ text: part.text });
      else if (part.type === 'image') blocks.push({ image: this.image(part.url) });
      else if (part.type === 'file') blocks.push({ document: this.document(part.url, part.filename) });
      else throw badRequest(this.provider, 'Bedrock Converse tool results take text, images and documents only');
    }
    // A tool result needs content; an empty output is still an answer.
    return blocks.length ? blocks : [{ text: '' }];
  }
}

export function convertMessages(provider: string, messages: Message[]): { system: SystemContentBlock[]; messages: BedrockMessage[] } {
  const converter = new BlockConverter(provider);
  const system: SystemContentBlock[] = [];
  const out: BedrockMessage[] = [];
  const push = (role: 'user' | 'assistant', content: ContentBlock[]) => {
    if (content.length === 0) return;
    const last = out.at(-1);
    // Converse requires user and assistant turns to alternate: consecutive same-role messages merge.
    if (last && last.role === role) last.content!.push(...content);
    else out.push({ role, content });
  };
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        for (const part of message.content) {
          if (part.type !== 'text') throw badRequest(provider, 'Bedrock Converse system prompts take text only');
          if (part.text.trim() !== '') system.push({ text: part.text });
          if (part.cache_control) system.push(cachePoint(part.cache_control));
        }
        break;
      case 'user':
        push('user', converter.blocks(message.content));
        break;
      case 'assistant': {
        const content: ContentBlock[] = [];
        // Signed reasoning goes back first (Claude requires it before tool use); unsigned reasoning is not accepted.
        if (message.reasoning && message.reasoning_signature) {
          content.push({ reasoningContent: { reasoningText: { text: message.reasoning, signature: message.reasoning_signature } } });
        }
        content.push(...converter.blocks(message.content));
        for (const call of message.tool_calls ?? []) {
          content.push({ toolUse: { toolUseId: call.id, name: call.name, input: toolCallInput(call.arguments) as DocumentType } });
        }
        push('assistant', content);
        break;
      }
      case 'tool':
        push('user', [{ toolResult: { toolUseId: message.tool_call_id, content: converter.toolResult(message.content) } }]);
        break;
    }
  }
  return { system, messages: out };
}

const hasToolBlocks = (messages: BedrockMessage[]) =>
  messages.some((message) => message.content?.some((block) => block.toolUse !== undefined || block.toolResult !== undefined));

function toolConfig(provider: string, request: GenerationRequest, messages: BedrockMessage[], extra: Record<string, DocumentType>): ToolConfiguration | undefined {
  if (!request.tools?.length) return undefined;
  const tools: Tool[] = request.tools.map((tool) => ({
    toolSpec: {
      name: tool.name,
      ...(tool.description ? { description: tool.description } : {}),
      inputSchema: { json: (tool.parameters ?? { type: 'object', properties: {} }) as DocumentType },
      ...(tool.strict !== undefined ? { strict: tool.strict } : {}),
    },
  }));
  const choice = request.tool_choice;
  if (choice === 'none') {
    // Converse has no "none" choice. Without tool history the tools can simply be left out; with it,
    // Converse insists on the tool list, and only Claude can still be told not to use them.
    if (!hasToolBlocks(messages)) return undefined;
    if (bedrockModelFamily(request.model) !== 'anthropic') {
      throw badRequest(provider, 'tool_choice "none" cannot be honoured by Bedrock Converse for this model once the conversation holds tool calls');
    }
    extra.tool_choice = { type: 'none' };
    return { tools };
  }
  return {
    tools,
    ...(choice === 'auto' ? { toolChoice: { auto: {} } } : {}),
    ...(choice === 'required' ? { toolChoice: { any: {} } } : {}),
    ...(typeof choice === 'object' ? { toolChoice: { tool: { name: choice.name } } } : {}),
  };
}

/** Claude thinking budget per effort: a share of max_output_tokens when given (as budget < max_tokens), else fixed. */
const BUDGET_SHARE: Record<Exclude<ReasoningEffort, 'none'>, number> = { minimal: 0.1, low: 0.2, medium: 0.5, high: 0.8, xhigh: 0.9, max: 0.95 };
const BUDGET_TOKENS: Record<Exclude<ReasoningEffort, 'none'>, number> = { minimal: 1024, low: 2048, medium: 8192, high: 16384, xhigh: 24576, max: 32000 };
const NOVA_EFFORT: Record<Exclude<ReasoningEffort, 'none'>, string> = { minimal: 'low', low: 'low', medium: 'medium', high: 'high', xhigh: 'high', max: 'high' };

function reasoningFields(provider: string, request: GenerationRequest, extra: Record<string, DocumentType>): void {
  const reasoning = request.reasoning;
  if (!reasoning) return;
  const effort = reasoning.effort === 'none' ? undefined : reasoning.effort;
  if (effort === undefined && reasoning.max_tokens === undefined) return; // nothing asked for, or reasoning off (the default)
  const family = bedrockModelFamily(request.model);
  switch (family) {
    case 'anthropic': {
      const budget = reasoning.max_tokens
        ?? (request.max_output_tokens !== undefined ? Math.max(1024, Math.floor(request.max_output_tokens * BUDGET_SHARE[effort!])) : BUDGET_TOKENS[effort!]);
      extra.thinking = { type: 'enabled', budget_tokens: budget };
      return;
    }
    case 'nova':
      if (!effort) throw badRequest(provider, 'Amazon Nova on Bedrock takes a reasoning effort, not a token budget');
      extra.reasoningConfig = { type: 'enabled', maxReasoningEffort: NOVA_EFFORT[effort] };
      return;
    case 'openai':
      if (!effort) throw badRequest(provider, 'OpenAI models on Bedrock take a reasoning effort, not a token budget');
      extra.reasoning_effort = NOVA_EFFORT[effort];
      return;
    default:
      throw badRequest(provider, `Reasoning settings are not supported for ${request.model} on Bedrock`);
  }
}

function topKField(provider: string, request: GenerationRequest, extra: Record<string, DocumentType>): void {
  if (request.top_k === undefined) return;
  switch (bedrockModelFamily(request.model)) {
    case 'anthropic':
    case 'mistral':
      extra.top_k = request.top_k;
      return;
    case 'cohere':
      extra.k = request.top_k;
      return;
    case 'nova':
      extra.inferenceConfig = { topK: request.top_k };
      return;
    default:
      throw badRequest(provider, `top_k is not supported for ${request.model} on Bedrock`);
  }
}

export function convertToBedrockConverse(request: GenerationRequest, provider: string): ConverseRequest {
  const { system, messages } = convertMessages(provider, request.messages);
  const extra: Record<string, DocumentType> = {};
  const input: ConverseRequest = { modelId: request.model, messages };
  if (system.length) input.system = system;
  const inference: NonNullable<ConverseRequest['inferenceConfig']> = {};
  if (request.max_output_tokens !== undefined) inference.maxTokens = request.max_output_tokens;
  const claude = bedrockModelFamily(request.model) === 'anthropic';
  if (request.temperature !== undefined) inference.temperature = claude ? claudeTemperature(request.temperature) : request.temperature;
  if (request.top_p !== undefined) inference.topP = request.top_p;
  const stop = claude ? claudeStopSequences(request.stop) : request.stop;
  if (stop?.length) inference.stopSequences = stop;
  if (Object.keys(inference).length) input.inferenceConfig = inference;
  const tools = toolConfig(provider, request, messages, extra);
  if (tools) input.toolConfig = tools;
  topKField(provider, request, extra);
  reasoningFields(provider, request, extra);
  const format = request.response_format;
  if (format?.type === 'json_object') throw badRequest(provider, 'Bedrock Converse supports response_format json_schema, not json_object');
  if (format?.type === 'json_schema') {
    input.outputConfig = {
      textFormat: {
        type: 'json_schema',
        structure: { jsonSchema: { schema: JSON.stringify(format.schema), name: format.name, ...(format.description ? { description: format.description } : {}) } },
      },
    };
  }
  if (request.service_tier !== undefined && request.service_tier !== 'auto') {
    if (!SERVICE_TIERS.has(request.service_tier)) throw badRequest(provider, `Bedrock has no service tier ${request.service_tier} (default, flex, priority, reserved)`);
    input.serviceTier = { type: request.service_tier as 'default' };
  }
  if (Object.keys(extra).length) input.additionalModelRequestFields = extra;
  return input;
}

/** Internal request fields this adapter translates for Bedrock (top_k and reasoning for the families above). */
export const bedrockSupportedParameters = [
  'tools', 'tool_choice', 'max_output_tokens', 'temperature', 'top_p', 'top_k', 'stop', 'response_format', 'reasoning', 'service_tier',
] as const;
