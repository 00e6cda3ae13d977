// Adapter for the OpenAI Responses API (POST {baseURL}/responses), stateless (store: false), non-streaming and SSE.
import { nodeFetch } from '../http-client.js';
import type { CallOptions, FetchLike, FinishReason, GenerationRequest, GenerationResult, ProviderAdapter, StreamEvent, ToolCall, Usage } from '../types.js';
import { emptyUsage } from '../types.js';
import { parseJsonText, parseUpstream, postJson, readJson, transportError } from '../http.js';
import { parseSse } from '../sse.js';
import { ProviderError } from '../provider-error.js';
import { convertToOpenAIResponses } from './convert-to-openai-responses.js';
import { describeOpenAIError } from './openai-chat-api-types.js';
import {
  openAIResponseSchema,
  openAIResponsesStreamEventSchema,
  responsesErrorStatus,
  type ResponsesOutputItem,
  type ResponsesUsage,
  type StreamedOpenAIResponse,
} from './openai-responses-api-types.js';

/** The GenerationRequest fields this adapter honours (the Responses API has no stop sequences, seed or penalties). */
export const supportedParameters: readonly string[] = [
  'max_output_tokens',
  'temperature',
  'top_p',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'reasoning',
  'response_format',
  'user',
  'service_tier',
  'top_logprobs',
];

export interface OpenAIResponsesSettings {
  /** Provider slug reported in metadata; default openai. */
  provider?: string;
  /** Base URL up to and including the version, e.g. https://api.openai.com/v1. */
  baseURL: string;
  apiKey?: string | undefined;
  headers?: Record<string, string>;
  fetch?: FetchLike;
}

export function mapResponsesUsage(usage: ResponsesUsage | null | undefined): Usage {
  return {
    input_tokens: usage?.input_tokens ?? 0,
    output_tokens: usage?.output_tokens ?? 0,
    cached_input_tokens: usage?.input_tokens_details?.cached_tokens ?? 0,
    cache_write_tokens: 0,
    reasoning_tokens: usage?.output_tokens_details?.reasoning_tokens ?? 0,
  };
}

/** Response status (and why it is incomplete) → internal finish reason, plus the native reason kept for metadata. */
export function mapResponsesFinishReason(response: StreamedOpenAIResponse, hasToolCalls: boolean): { finish_reason: FinishReason; native_finish_reason?: string } {
  const status = response.status ?? undefined;
  if (status === 'incomplete') {
    const reason = response.incomplete_details?.reason ?? undefined;
    return { finish_reason: reason === 'content_filter' ? 'content_filter' : 'length', native_finish_reason: reason ?? status };
  }
  if (status === 'failed') return { finish_reason: 'error', native_finish_reason: status };
  return { finish_reason: hasToolCalls ? 'tool_calls' : 'stop', ...(status ? { native_finish_reason: status } : {}) };
}

function failure(provider: string, response: StreamedOpenAIResponse): ProviderError {
  const code = response.error?.code ?? undefined;
  return new ProviderError({
    provider, kind: 'http', status: responsesErrorStatus(code),
    message: response.error?.message ?? 'Upstream response failed', providerCode: code,
  });
}

function readOutput(output: ResponsesOutputItem[]): { text: string; reasoning: string[]; toolCalls: ToolCall[] } {
  let text = '';
  const reasoning: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const item of output) {
    if (item.type === 'message') {
      for (const part of item.content) {
        if (part.type === 'output_text') text += part.text;
        else if (part.type === 'refusal') text += part.refusal;
      }
    } else if (item.type === 'function_call') {
      toolCalls.push({ id: item.call_id, name: item.name, arguments: item.arguments });
    } else if (item.type === 'reasoning') {
      for (const part of [...(item.summary ?? []), ...(item.content ?? [])]) {
        if (part.text) reasoning.push(part.text);
      }
    }
  }
  return { text, reasoning, toolCalls };
}

export function createOpenAIResponsesAdapter(settings: OpenAIResponsesSettings): ProviderAdapter {
  const provider = settings.provider ?? 'openai';
  const fetchFn = settings.fetch ?? nodeFetch;
  const url = `${settings.baseURL.replace(/\/+$/, '')}/responses`;
  const headers = { ...(settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {}), ...settings.headers };

  const post = (body: unknown, options: CallOptions) =>
    postJson({ provider, fetch: fetchFn, url, headers, body, signal: options.signal, onBody: options.onBody, describeError: describeOpenAIError });

  return {
    provider,

    async generate(request: GenerationRequest, options: CallOptions = {}): Promise<GenerationResult> {
      const response = await post(convertToOpenAIResponses(request, { stream: false, provider }), options);
      const body = await readJson(provider, response, openAIResponseSchema, options.signal);
      if (body.status === 'failed') throw failure(provider, body);
      const { text, reasoning, toolCalls } = readOutput(body.output);
      return {
        text,
        ...(body.id ? { provider_id: body.id } : {}),
        ...(reasoning.length ? { reasoning: reasoning.join('\n\n') } : {}),
        tool_calls: toolCalls,
        ...mapResponsesFinishReason(body, toolCalls.length > 0),
        usage: mapResponsesUsage(body.usage),
        ...(body.service_tier ? { service_tier: body.service_tier } : {}),
      };
    },

    async *stream(request: GenerationRequest, options: CallOptions = {}): AsyncGenerator<StreamEvent> {
      const response = await post(convertToOpenAIResponses(request, { stream: true, provider }), options);
      if (!response.body) throw new ProviderError({ provider, kind: 'invalid-response', status: 502, message: 'Upstream stream has no body' });
      let final: StreamedOpenAIResponse | undefined;
      let providerId: string | undefined;
      let sawReasoning = false;
      const calls = new Map<number, { index: number; argumentsSent: boolean }>();
      const callFor = (outputIndex: number) => {
        let call = calls.get(outputIndex);
        const isNew = call === undefined;
        if (!call) {
          call = { index: calls.size, argumentsSent: false };
          calls.set(outputIndex, call);
        }
        return { call, isNew };
      };
      try {
        for await (const sse of parseSse(response.body)) {
          const event = parseUpstream(provider, openAIResponsesStreamEventSchema, parseJsonText(provider, sse.data));
          switch (event.type) {
            case 'response.created':
            case 'response.in_progress':
            case 'response.queued':
              providerId ??= event.response.id ?? undefined;
              break;
            case 'response.output_text.delta':
            case 'response.refusal.delta':
              if (event.delta) yield { type: 'text-delta', delta: event.delta };
              break;
            case 'response.reasoning_summary_part.added':
              // Separate summary parts the way the non-streaming reply joins them.
              if (sawReasoning) yield { type: 'reasoning-delta', delta: '\n\n' };
              break;
            case 'response.reasoning_summary_text.delta':
            case 'response.reasoning_text.delta':
              if (event.delta) {
                sawReasoning = true;
                yield { type: 'reasoning-delta', delta: event.delta };
              }
              break;
            case 'response.output_item.added':
              if (event.item.type === 'function_call') {
                const { call } = callFor(event.output_index);
                call.argumentsSent = event.item.arguments !== '';
                yield { type: 'tool-call-delta', index: call.index, id: event.item.call_id, name: event.item.name, arguments_delta: event.item.arguments };
              }
              break;
            case 'response.function_call_arguments.delta': {
              const { call } = callFor(event.output_index);
              if (event.delta) {
                call.argumentsSent = true;
                yield { type: 'tool-call-delta', index: call.index, arguments_delta: event.delta };
              }
              break;
            }
            case 'response.output_item.done':
              // Some servers announce a function call only when it is done: send what was not streamed.
              if (event.item.type === 'function_call') {
                const { call, isNew } = callFor(event.output_index);
                if (isNew || !call.argumentsSent) {
                  call.argumentsSent = true;
                  yield {
                    type: 'tool-call-delta', index: call.index,
                    ...(isNew ? { id: event.item.call_id, name: event.item.name } : {}),
                    arguments_delta: event.item.arguments,
                  };
                }
              }
              break;
            case 'response.completed':
            case 'response.incomplete':
              final = event.response;
              break;
            case 'response.failed':
              throw failure(provider, event.response);
            case 'error':
              throw new ProviderError({
                provider, kind: 'http', status: responsesErrorStatus(event.code),
                message: event.message ?? 'Upstream stream error', providerCode: event.code ?? undefined,
              });
            default:
              break;
          }
          if (final) break;
        }
      } catch (err) {
        throw transportError(provider, err, options.signal);
      }
      if (!final) {
        throw new ProviderError({ provider, kind: 'network', status: 502, message: 'Upstream stream ended before it finished' });
      }
      const id = final.id ?? providerId;
      yield {
        type: 'finish',
        ...mapResponsesFinishReason(final, calls.size > 0),
        usage: final.usage ? mapResponsesUsage(final.usage) : emptyUsage(),
        ...(id ? { provider_id: id } : {}),
        ...(final.service_tier ? { service_tier: final.service_tier } : {}),
      };
    },
  };
}
