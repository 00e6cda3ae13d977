// Adapter for OpenAI Chat Completions and every OpenAI-compatible endpoint (base URL + key:
// Groq, Together, Mistral, DeepSeek, Ollama, vLLM …).
import { newToolCallId } from '../tool-call-id.js';
import { nodeFetch } from '../http-client.js';
import type { CallOptions, GenerationRequest, GenerationResult, ProviderAdapter, StreamEvent, ToolCall, Usage, FetchLike } from '../types.js';
import { postJson, readJson, parseUpstream, parseJsonText, transportError } from '../http.js';
import { parseSse } from '../sse.js';
import { ProviderError } from '../provider-error.js';
import { convertToOpenAIChat } from './convert-to-openai-chat.js';
import { mapOpenAIFinishReason } from './map-openai-finish-reason.js';
import { describeOpenAIError, openAIChatChunkSchema, openAIChatResponseSchema, openAIEmbeddingsResponseSchema, type OpenAIChatUsage } from './openai-chat-api-types.js';
import { embeddingResult } from '../embeddings.js';
import type * as z from 'zod';

export interface OpenAIChatSettings {
  /** Provider slug reported in metadata (openai, groq, together …). */
  provider?: string;
  /** Base URL up to and including the version, e.g. https://api.openai.com/v1. */
  baseURL: string;
  apiKey?: string | undefined;
  headers?: Record<string, string>;
  fetch?: FetchLike;
}

export function mapOpenAIUsage(usage: OpenAIChatUsage): Usage {
  return {
    input_tokens: usage?.prompt_tokens ?? 0,
    output_tokens: usage?.completion_tokens ?? 0,
    cached_input_tokens: usage?.prompt_tokens_details?.cached_tokens ?? usage?.prompt_cache_hit_tokens ?? 0,
    cache_write_tokens: usage?.prompt_tokens_details?.cache_write_tokens ?? 0,
    reasoning_tokens: usage?.completion_tokens_details?.reasoning_tokens ?? 0,
  };
}

/** A chat completion (a live reply, or a Batch API output line's body) as the internal result. */
export function chatCompletionResult(body: z.output<typeof openAIChatResponseSchema>): GenerationResult {
  const choice = body.choices[0]!;
  const message = choice.message;
  const toolCalls: ToolCall[] = (message.tool_calls ?? []).map((call) => ({
    id: call.id ?? newToolCallId(),
    name: call.function?.name ?? '',
    arguments: call.function?.arguments ?? '',
  }));
  const reasoning = message.reasoning ?? message.reasoning_content ?? undefined;
  return {
    text: message.content ?? message.refusal ?? '',
    ...(body.id ? { provider_id: body.id } : {}),
    ...(reasoning ? { reasoning } : {}),
    tool_calls: toolCalls,
    finish_reason: toolCalls.length && !choice.finish_reason ? 'tool_calls' : mapOpenAIFinishReason(choice.finish_reason),
    ...(choice.finish_reason ? { native_finish_reason: choice.finish_reason } : {}),
    usage: mapOpenAIUsage(body.usage),
    ...(body.service_tier ? { service_tier: body.service_tier } : {}),
  };
}

export function createOpenAIChatAdapter(settings: OpenAIChatSettings): ProviderAdapter {
  const provider = settings.provider ?? 'openai';
  const fetchFn = settings.fetch ?? nodeFetch;
  const url = `${settings.baseURL.replace(/\/+$/, '')}/chat/completions`;
  const headers = { ...(settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {}), ...settings.headers };

  const post = (body: unknown, options: CallOptions, to = url) =>
    postJson({ provider, fetch: fetchFn, url: to, headers, body, signal: options.signal, onBody: options.onBody, describeError: describeOpenAIError });
  const embeddingsUrl = `${settings.baseURL.replace(/\/+$/, '')}/embeddings`;

  /** POST /embeddings: float vectors, put back in input order by their index. */
  async function embed(request: GenerationRequest, options: CallOptions): Promise<GenerationResult> {
    const { input, dimensions } = request.embedding!;
    const response = await post({ model: request.model, input, encoding_format: 'float', ...(dimensions !== undefined ? { dimensions } : {}), ...(request.user ? { user: request.user } : {}) }, options, embeddingsUrl);
    const body = await readJson(provider, response, openAIEmbeddingsResponseSchema, options.signal);
    const vectors: number[][] = new Array(input.length);
    for (const item of body.data) if (item.index < input.length) vectors[item.index] = item.embedding;
    // Every index once, each in range; otherwise the reply cannot be put in order.
    const complete = body.data.length === input.length && vectors.filter(Boolean).length === input.length;
    if (!complete) throw new ProviderError({ provider, kind: 'invalid-response', status: 502, message: `Upstream returned embeddings for indexes ${body.data.map((item) => item.index).join(', ')} of ${input.length} inputs` });
    return embeddingResult(provider, input, vectors, body.usage?.prompt_tokens ?? undefined);
  }

  return {
    provider,

    async generate(request: GenerationRequest, options: CallOptions = {}): Promise<GenerationResult> {
      if (request.embedding) return embed(request, options);
      const response = await post(convertToOpenAIChat(request, false), options);
      const body = await readJson(provider, response, openAIChatResponseSchema, options.signal);
      return chatCompletionResult(body);
    },

    async *stream(request: GenerationRequest, options: CallOptions = {}): AsyncGenerator<StreamEvent> {
      const response = await post(convertToOpenAIChat(request, true), options);
      if (!response.body) throw new ProviderError({ provider, kind: 'invalid-response', status: 502, message: 'Upstream stream has no body' });
      let finishReason: string | undefined;
      let usage: Usage | undefined;
      let providerId: string | undefined;
      let serviceTier: string | undefined;
      let sawDone = false;
      const toolIndexes = new Map<number, number>();
      try {
        for await (const event of parseSse(response.body)) {
          if (event.data === '[DONE]') {
            sawDone = true;
            break;
          }
          const chunk = parseUpstream(provider, openAIChatChunkSchema, parseJsonText(provider, event.data));
          if (chunk.error) {
            throw new ProviderError({ provider, kind: 'http', status: 502, message: chunk.error.message ?? 'Upstream stream error', providerCode: chunk.error.code?.toString() });
          }
          providerId ??= chunk.id ?? undefined;
          serviceTier ??= chunk.service_tier ?? undefined;
          if (chunk.usage) usage = mapOpenAIUsage(chunk.usage);
          for (const choice of chunk.choices ?? []) {
            const delta = choice.delta;
            const reasoning = delta?.reasoning ?? delta?.reasoning_content;
            if (reasoning) yield { type: 'reasoning-delta', delta: reasoning };
            if (delta?.content) yield { type: 'text-delta', delta: delta.content };
            if (delta?.refusal) yield { type: 'text-delta', delta: delta.refusal };
            for (const call of delta?.tool_calls ?? []) {
              const upstreamIndex = call.index ?? 0;
              let index = toolIndexes.get(upstreamIndex);
              // A call's first delta names it; a server that gives no id gets one of ours (unique, as OpenAI's are).
              let id = call.id ?? undefined;
              if (index === undefined) {
                index = toolIndexes.size;
                toolIndexes.set(upstreamIndex, index);
                id ??= newToolCallId();
              }
              yield {
                type: 'tool-call-delta',
                index,
                ...(id ? { id } : {}),
                ...(call.function?.name ? { name: call.function.name } : {}),
                arguments_delta: call.function?.arguments ?? '',
              };
            }
            if (choice.finish_reason) finishReason = choice.finish_reason;
          }
        }
      } catch (err) {
        throw transportError(provider, err, options.signal);
      }
      if (!sawDone && finishReason === undefined) {
        throw new ProviderError({ provider, kind: 'network', status: 502, message: 'Upstream stream ended before it finished' });
      }
      yield {
        type: 'finish',
        finish_reason: toolIndexes.size && !finishReason ? 'tool_calls' : mapOpenAIFinishReason(finishReason),
        ...(finishReason ? { native_finish_reason: finishReason } : {}),
        usage: usage ?? { input_tokens: 0, output_tokens: 0, cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 },
        ...(providerId ? { provider_id: providerId } : {}),
        ...(serviceTier ? { service_tier: serviceTier } : {}),
      };
    },
  };
}
