// Adapter for the Anthropic Messages API (POST {baseURL}/messages), non-streaming and SSE streaming.
import { nodeFetch } from '../http-client.js';
import type { CallOptions, FetchLike, FinishReason, GenerationRequest, GenerationResult, ProviderAdapter, StreamEvent, ToolCall, Usage } from '../types.js';
import { emptyUsage } from '../types.js';
import { parseJsonText, parseUpstream, postJson, readJson, transportError } from '../http.js';
import { parseSse } from '../sse.js';
import { ProviderError } from '../provider-error.js';
import { convertToAnthropicMessages, jsonOutputTool } from './convert-to-anthropic-messages.js';
import { mapAnthropicFinishReason } from './map-anthropic-finish-reason.js';
import { anthropicErrorStatus, anthropicMessageSchema, anthropicStreamEventSchema, describeAnthropicError, type AnthropicUsage } from './anthropic-api-types.js';
import type * as z from 'zod';

export const ANTHROPIC_VERSION = '2023-06-01';

/**
 * The GenerationRequest fields this adapter honours. response_format has no native equivalent: JSON formats are
 * asked for through a tool (convert-to-anthropic-messages.ts, JSON_OUTPUT_TOOL) and the call comes back as text.
 */
export const supportedParameters: readonly string[] = [
  'max_output_tokens',
  'temperature',
  'top_p',
  'top_k',
  'stop',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'reasoning',
  'response_format',
  'user',
];

export interface AnthropicSettings {
  /** Provider slug reported in metadata; default anthropic. */
  provider?: string;
  /** Base URL up to and including the version, e.g. https://api.anthropic.com/v1. */
  baseURL: string;
  apiKey?: string | undefined;
  /** Extra headers, e.g. anthropic-beta. */
  headers?: Record<string, string>;
  fetch?: FetchLike;
}

/** Anthropic's input_tokens exclude cache reads and writes; the internal input_tokens include both. */
export function mapAnthropicUsage(usage: AnthropicUsage | null | undefined): Usage {
  const uncached = usage?.input_tokens ?? 0;
  const cacheRead = usage?.cache_read_input_tokens ?? 0;
  const cacheWrite = usage?.cache_creation_input_tokens ?? 0;
  return {
    input_tokens: uncached + cacheRead + cacheWrite,
    output_tokens: usage?.output_tokens ?? 0,
    cached_input_tokens: cacheRead,
    cache_write_tokens: cacheWrite,
    // Anthropic does not report thinking tokens apart from output tokens.
    reasoning_tokens: 0,
  };
}

/** Later usage (message_delta) wins field by field over earlier (message_start). */
function mergeUsage(earlier: AnthropicUsage | null | undefined, later: AnthropicUsage | null | undefined): AnthropicUsage {
  const merged: Record<string, unknown> = Object.assign({}, earlier);
  for (const [key, value] of Object.entries(later ?? {})) {
    if (value !== null && value !== undefined) merged[key] = value;
  }
  return merged as AnthropicUsage;
}

type BlockState =
  | { kind: 'tool'; index: number; input: unknown; argumentsSent: boolean }
  /** The call of the JSON-output tool (a JSON response format): its input is streamed as the reply's text. */
  | { kind: 'json'; input: unknown; sent: boolean }
  | { kind: 'text' | 'thinking' | 'other' };

/**
 * An Anthropic message (a live reply, or a Message Batches result's `message`) as the internal result.
 * `jsonTool`: the tool a JSON response format was asked for through (jsonOutputTool): its call's input is the text.
 */
export function messageResult(body: z.output<typeof anthropicMessageSchema>, jsonTool?: string): GenerationResult {
  let text = '';
  let json: string | undefined;
  const reasoning: string[] = [];
  let signature: string | undefined;
  const toolCalls: ToolCall[] = [];
  for (const block of body.content) {
    switch (block.type) {
      case 'text':
        text += block.text;
        break;
      case 'thinking':
        reasoning.push(block.thinking);
        if (block.signature) signature = block.signature;
        break;
      case 'tool_use':
        if (block.name === jsonTool) json = (json ?? '') + JSON.stringify(block.input ?? {});
        else toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) });
        break;
      default:
        // redacted_thinking and server-side blocks have no internal counterpart.
        break;
    }
  }
  const serviceTier = body.usage?.service_tier;
  // The JSON tool's input is the answer: text written before the call (under extended thinking, where the
  // call is asked for, not forced) is not part of it.
  if (json !== undefined) text = json;
  return {
    text,
    ...(body.id ? { provider_id: body.id } : {}),
    ...(reasoning.length ? { reasoning: reasoning.join('\n\n') } : {}),
    ...(signature ? { reasoning_signature: signature } : {}),
    tool_calls: toolCalls,
    finish_reason: jsonFinish(body.stop_reason, toolCalls.length > 0, jsonTool),
    ...(body.stop_reason ? { native_finish_reason: body.stop_reason } : {}),
    usage: mapAnthropicUsage(body.usage),
    ...(serviceTier ? { service_tier: serviceTier } : {}),
  };
}

/** The finish reason; a stop to call the JSON-output tool alone is the answer's end, not a tool call. */
function jsonFinish(stopReason: string | null | undefined, hasToolCalls: boolean, jsonTool: string | undefined): FinishReason {
  if (jsonTool !== undefined && stopReason === 'tool_use' && !hasToolCalls) return 'stop';
  return mapAnthropicFinishReason(stopReason, hasToolCalls);
}

export function createAnthropicAdapter(settings: AnthropicSettings): ProviderAdapter {
  const provider = settings.provider ?? 'anthropic';
  const fetchFn = settings.fetch ?? nodeFetch;
  const url = `${settings.baseURL.replace(/\/+$/, '')}/messages`;
  const headers = {
    ...(settings.apiKey ? { 'x-api-key': settings.apiKey } : {}),
    'anthropic-version': ANTHROPIC_VERSION,
    ...settings.headers,
  };

  const post = (body: unknown, options: CallOptions) =>
    postJson({ provider, fetch: fetchFn, url, headers, body, signal: options.signal, onBody: options.onBody, describeError: describeAnthropicError });

  return {
    provider,

    async generate(request: GenerationRequest, options: CallOptions = {}): Promise<GenerationResult> {
      const response = await post(convertToAnthropicMessages(request, { stream: false, provider }), options);
      const body = await readJson(provider, response, anthropicMessageSchema, options.signal);
      return messageResult(body, jsonOutputTool(request));
    },

    async *stream(request: GenerationRequest, options: CallOptions = {}): AsyncGenerator<StreamEvent> {
      const response = await post(convertToAnthropicMessages(request, { stream: true, provider }), options);
      if (!response.body) throw new ProviderError({ provider, kind: 'invalid-response', status: 502, message: 'Upstream stream has no body' });
      let providerId: string | undefined;
      let usage: AnthropicUsage | undefined;
      let stopReason: string | undefined;
      let sawStop = false;
      let sawReasoning = false;
      let toolCount = 0;
      const json = jsonOutputTool(request);
      // With a JSON format, text is held back until the JSON tool is called (then dropped: the tool's input is
      // the answer) or the reply ends without the call (then it is the answer).
      let heldText: string[] | undefined = json !== undefined ? [] : undefined;
      /** The JSON tool has been called: text after it is not part of the answer either. */
      let jsonCalled = false;
      const blocks = new Map<number, BlockState>();
      try {
        for await (const sse of parseSse(response.body)) {
          const event = parseUpstream(provider, anthropicStreamEventSchema, parseJsonText(provider, sse.data));
          switch (event.type) {
            case 'message_start':
              providerId ??= event.message.id ?? undefined;
              usage = mergeUsage(usage, event.message.usage);
              break;
            case 'content_block_start': {
              const block = event.content_block;
              if (block.type === 'tool_use' && block.name === json) {
                heldText = undefined;
                jsonCalled = true;
                blocks.set(event.index, { kind: 'json', input: block.input, sent: false });
              } else if (block.type === 'tool_use') {
                const state: BlockState = { kind: 'tool', index: toolCount++, input: block.input, argumentsSent: false };
                blocks.set(event.index, state);
                yield { type: 'tool-call-delta', index: state.index, id: block.id, name: block.name, arguments_delta: '' };
              } else if (block.type === 'thinking') {
                blocks.set(event.index, { kind: 'thinking' });
                // Separate thinking blocks the way the non-streaming reply joins them.
                if (sawReasoning) yield { type: 'reasoning-delta', delta: '\n\n' };
                if (block.thinking) {
                  sawReasoning = true;
                  yield { type: 'reasoning-delta', delta: block.thinking };
                }
              } else if (block.type === 'text') {
                blocks.set(event.index, { kind: 'text' });
                if (block.text && heldText) heldText.push(block.text);
                else if (block.text && !jsonCalled) yield { type: 'text-delta', delta: block.text };
              } else {
                blocks.set(event.index, { kind: 'other' });
              }
              break;
            }
            case 'content_block_delta': {
              const state = blocks.get(event.index);
              const delta = event.delta;
              if (delta.type === 'text_delta' && state?.kind === 'text') {
                if (heldText) heldText.push(delta.text);
                else if (!jsonCalled) yield { type: 'text-delta', delta: delta.text };
              } else if (delta.type === 'thinking_delta' && state?.kind === 'thinking') {
                sawReasoning = true;
                yield { type: 'reasoning-delta', delta: delta.thinking };
              } else if (delta.type === 'input_json_delta' && state?.kind === 'json') {
                if (delta.partial_json) {
                  state.sent = true;
                  yield { type: 'text-delta', delta: delta.partial_json };
                }
              } else if (delta.type === 'input_json_delta' && state?.kind === 'tool') {
                if (delta.partial_json) {
                  state.argumentsSent = true;
                  yield { type: 'tool-call-delta', index: state.index, arguments_delta: delta.partial_json };
                }
              }
              else if (delta.type === 'signature_delta' && state?.kind === 'thinking') {
                yield { type: 'reasoning-signature', signature: delta.signature };
              }
              break;
            }
            case 'content_block_stop': {
              const state = blocks.get(event.index);
              // A tool call that streamed no input still gets parseable arguments, as in the non-streaming reply.
              if (state?.kind === 'tool' && !state.argumentsSent) {
                state.argumentsSent = true;
                yield { type: 'tool-call-delta', index: state.index, arguments_delta: JSON.stringify(state.input ?? {}) };
              } else if (state?.kind === 'json' && !state.sent) {
                state.sent = true;
                yield { type: 'text-delta', delta: JSON.stringify(state.input ?? {}) };
              }
              break;
            }
            case 'message_delta':
              stopReason = event.delta.stop_reason ?? stopReason;
              usage = mergeUsage(usage, event.usage);
              break;
            case 'message_stop':
              sawStop = true;
              break;
            case 'error':
              throw new ProviderError({
                provider, kind: 'http', status: anthropicErrorStatus(event.error.type),
                message: event.error.message, providerCode: event.error.type,
              });
            default:
              // ping and event types added after this adapter was written.
              break;
          }
          if (sawStop) break;
        }
      } catch (err) {
        throw transportError(provider, err, options.signal);
      }
      if (!sawStop) {
        throw new ProviderError({ provider, kind: 'network', status: 502, message: 'Upstream stream ended before it finished' });
      }
      if (heldText?.length) yield { type: 'text-delta', delta: heldText.join('') };
      const serviceTier = usage?.service_tier;
      yield {
        type: 'finish',
        finish_reason: jsonFinish(stopReason, toolCount > 0, json),
        ...(stopReason ? { native_finish_reason: stopReason } : {}),
        usage: usage ? mapAnthropicUsage(usage) : emptyUsage(),
        ...(providerId ? { provider_id: providerId } : {}),
        ...(serviceTier ? { service_tier: serviceTier } : {}),
      };
    },
  };
}
