// Adapter for the Google Gemini API (AI Studio): generateContent and streamGenerateContent?alt=sse.
import { newToolCallId } from '../tool-call-id.js';
import { nodeFetch } from '../http-client.js';
import type { CallOptions, FetchLike, GenerationRequest, GenerationResult, ProviderAdapter, StreamEvent, ToolCall, UpstreamResponse, Usage } from '../types.js';
import { emptyUsage } from '../types.js';
import { parseJsonText, parseUpstream, postJson, readJson, transportError } from '../http.js';
import { parseSse } from '../sse.js';
import { ProviderError } from '../provider-error.js';
import { convertToGemini, geminiSupportedParameters } from './convert-to-gemini.js';
import { mapGeminiFinishReason } from './map-gemini-finish-reason.js';
import { embeddingResult } from '../embeddings.js';
import * as z from 'zod';

/** Requests in one batchEmbedContents call (Gemini's limit). */
const GEMINI_EMBED_BATCH = 100;
/** OpenRouter's / Cohere's input_type as Gemini's taskType. */
const GEMINI_TASK_TYPES: Record<string, string> = {
  search_query: 'RETRIEVAL_QUERY', search_document: 'RETRIEVAL_DOCUMENT', classification: 'CLASSIFICATION', clustering: 'CLUSTERING',
};

/** batchEmbedContents reply: one ContentEmbedding per request, in order. Gemini counts no tokens for it. */
const geminiEmbeddingsSchema = z.object({ embeddings: z.array(z.object({ values: z.array(z.number()) })) });
import {
  describeGeminiError, geminiChunkSchema, geminiResponseSchema, geminiRetryDelayMs, geminiStatusCode,
  type GeminiPart, type GeminiUsageMetadata,
} from './gemini-api-types.js';

export const supportedParameters: readonly string[] = geminiSupportedParameters;

export interface GeminiSettings {
  /** Provider slug reported in metadata. */
  provider?: string;
  /** Base URL up to and including the version, e.g. https://generativelanguage.googleapis.com/v1beta. */
  baseURL: string;
  apiKey?: string | undefined;
  headers?: Record<string, string>;
  fetch?: FetchLike;
}

/** promptTokenCount already includes cached tokens; candidatesTokenCount excludes thoughts, so output adds them. */
export function mapGeminiUsage(usage: GeminiUsageMetadata): Usage {
  const thoughts = usage?.thoughtsTokenCount ?? 0;
  return {
    input_tokens: (usage?.promptTokenCount ?? 0) + (usage?.toolUsePromptTokenCount ?? 0),
    output_tokens: (usage?.candidatesTokenCount ?? 0) + thoughts,
    cached_input_tokens: usage?.cachedContentTokenCount ?? 0,
    cache_write_tokens: 0,
    reasoning_tokens: thoughts,
  };
}

/** Gemini has no call ids (or sometimes gives one): a new unique one otherwise. */
function toolCallOf(call: NonNullable<GeminiPart['functionCall']>): ToolCall {
  return { id: call.id ?? newToolCallId(), name: call.name, arguments: JSON.stringify(call.args ?? {}) };
}

function modelPath(model: string): string {
  return model.includes('/') ? model : `models/${model}`;
}

export function createGeminiAdapter(settings: GeminiSettings): ProviderAdapter {
  const provider = settings.provider ?? 'google-ai-studio';
  const fetchFn = settings.fetch ?? nodeFetch;
  const baseURL = settings.baseURL.replace(/\/+$/, '');
  const headers = { ...(settings.apiKey ? { 'x-goog-api-key': settings.apiKey } : {}), ...settings.headers };

  async function post(url: string, body: unknown, options: CallOptions): Promise<UpstreamResponse> {
    // postJson reports message and code; RetryInfo in the error body is Gemini's own Retry-After.
    let retryDelayMs: number | undefined;
    try {
      return await postJson({
        provider, fetch: fetchFn, url, headers, body, signal: options.signal, onBody: options.onBody,
        describeError: (errorBody) => {
          const described = describeGeminiError(errorBody);
          retryDelayMs = described?.retryAfterMs;
          return described;
        },
      });
    } catch (err) {
      if (err instanceof ProviderError && err.retryAfterMs === undefined && retryDelayMs !== undefined) {
        throw new ProviderError({
          provider, kind: err.kind, status: err.status, message: err.message, retryAfterMs: retryDelayMs,
          ...(err.providerCode !== undefined ? { providerCode: err.providerCode } : {}), cause: err.cause,
        });
      }
      throw err;
    }
  }

  return {
    provider,

    async generate(request: GenerationRequest, options: CallOptions = {}): Promise<GenerationResult> {
      if (request.embedding) {
        const { input, dimensions, inputType } = request.embedding;
        const model = modelPath(request.model);
        const taskType = inputType ? GEMINI_TASK_TYPES[inputType] : undefined;
        // batchEmbedContents takes at most 100 requests a call: larger inputs go in several, in order.
        const vectors: number[][] = [];
        for (let start = 0; start < input.length; start += GEMINI_EMBED_BATCH) {
          const response = await post(`${baseURL}/${model}:batchEmbedContents`, {
            requests: input.slice(start, start + GEMINI_EMBED_BATCH).map((text) => ({
              model, content: { parts: [{ text }] }, ...(dimensions !== undefined ? { outputDimensionality: dimensions } : {}), ...(taskType ? { taskType } : {}),
            })),
          }, options);
          const body = await readJson(provider, response, geminiEmbeddingsSchema, options.signal);
          vectors.push(...body.embeddings.map((embedding) => embedding.values));
        }
        return embeddingResult(provider, input, vectors, undefined);
      }
      const url = `${baseURL}/${modelPath(request.model)}:generateContent`;
      const response = await post(url, convertToGemini(request, provider), options);
      const body = await readJson(provider, response, geminiResponseSchema, options.signal);
      const candidate = body.candidates?.[0];
      const blockReason = body.promptFeedback?.blockReason ?? undefined;
      const excludeReasoning = request.reasoning?.exclude === true;
      let text = '';
      let reasoning = '';
      const toolCalls: ToolCall[] = [];
      let signature: string | undefined;
      for (const part of candidate?.content?.parts ?? []) {
        // Gemini signs the step on its first function call (or text) part; it goes back on the next turn.
        signature ??= part.thoughtSignature ?? undefined;
        if (part.functionCall) toolCalls.push(toolCallOf(part.functionCall));
        else if (part.text && part.thought) reasoning += part.text;
        else if (part.text) text += part.text;
      }
      const nativeReason = candidate?.finishReason ?? (candidate ? undefined : blockReason);
      return {
        text,
        ...(body.responseId ? { provider_id: body.responseId } : {}),
        ...(reasoning && !excludeReasoning ? { reasoning } : {}),
        ...(signature ? { reasoning_signature: signature } : {}),
        tool_calls: toolCalls,
        finish_reason: candidate ? mapGeminiFinishReason(candidate.finishReason, toolCalls.length > 0) : 'content_filter',
        ...(nativeReason ? { native_finish_reason: nativeReason } : {}),
        usage: mapGeminiUsage(body.usageMetadata),
      };
    },

    async *stream(request: GenerationRequest, options: CallOptions = {}): AsyncGenerator<StreamEvent> {
      const url = `${baseURL}/${modelPath(request.model)}:streamGenerateContent?alt=sse`;
      const response = await post(url, convertToGemini(request, provider), options);
      if (!response.body) throw new ProviderError({ provider, kind: 'invalid-response', status: 502, message: 'Upstream stream has no body' });
      const excludeReasoning = request.reasoning?.exclude === true;
      let finishReason: string | undefined;
      let blockReason: string | undefined;
      let usage: Usage | undefined;
      let providerId: string | undefined;
      let toolCalls = 0;
      let signed = false;
      try {
        for await (const event of parseSse(response.body)) {
          const chunk = parseUpstream(provider, geminiChunkSchema, parseJsonText(provider, event.data));
          if (chunk.error) {
            const status = chunk.error.code && chunk.error.code >= 400 ? chunk.error.code : geminiStatusCode(chunk.error.status);
            const retryAfterMs = geminiRetryDelayMs(chunk.error);
            throw new ProviderError({
              provider, kind: 'http', status, message: chunk.error.message ?? 'Upstream stream error',
              ...(chunk.error.status ? { providerCode: chunk.error.status } : {}),
              ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
            });
          }
          providerId ??= chunk.responseId ?? undefined;
          if (chunk.usageMetadata) usage = mapGeminiUsage(chunk.usageMetadata);
          if (chunk.promptFeedback?.blockReason) blockReason = chunk.promptFeedback.blockReason;
          const candidate = chunk.candidates?.[0];
          for (const part of candidate?.content?.parts ?? []) {
            if (part.thoughtSignature && !signed) {
              signed = true;
              yield { type: 'reasoning-signature', signature: part.thoughtSignature };
            }
            if (part.functionCall) {
              const call = toolCallOf(part.functionCall);
              yield { type: 'tool-call-delta', index: toolCalls, id: call.id, name: call.name, arguments_delta: call.arguments };
              toolCalls += 1;
            } else if (part.text && part.thought) {
              if (!excludeReasoning) yield { type: 'reasoning-delta', delta: part.text };
            } else if (part.text) {
              yield { type: 'text-delta', delta: part.text };
            }
          }
          if (candidate?.finishReason) finishReason = candidate.finishReason;
        }
      } catch (err) {
        throw transportError(provider, err, options.signal);
      }
      if (finishReason === undefined && blockReason === undefined) {
        throw new ProviderError({ provider, kind: 'network', status: 502, message: 'Upstream stream ended before it finished' });
      }
      const nativeReason = finishReason ?? blockReason;
      yield {
        type: 'finish',
        finish_reason: finishReason !== undefined ? mapGeminiFinishReason(finishReason, toolCalls > 0) : 'content_filter',
        ...(nativeReason ? { native_finish_reason: nativeReason } : {}),
        usage: usage ?? emptyUsage(),
        ...(providerId ? { provider_id: providerId } : {}),
      };
    },
  };
}
