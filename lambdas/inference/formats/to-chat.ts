// Internal results and stream events → Chat Completions replies and chat.completion.chunk events.
import type { GenerationResult, StreamEvent, Usage } from '../../providers/types.js';
import { costFields, type CostBreakdown } from '../../billing/cost.js';
import { sseData } from './sse.js';

export interface ReplyIdentity {
  id: string;
  model: string;
  provider: string;
  created: number;
  serviceTier: string | null;
  /** The `format` of reasoning_details: which provider's signature scheme the reasoning carries. */
  reasoningFormat?: string;
}

/** OpenRouter's reasoning_details entry: the reasoning text and the provider's signature over it. */
export function reasoningDetail(identity: ReplyIdentity, text: string | undefined, signature: string | undefined) {
  return { type: 'reasoning.text', text: text ?? '', ...(signature ? { signature } : {}), format: identity.reasoningFormat ?? 'unknown', index: 0 };
}

const SYSTEM_FINGERPRINT = 'model-gateway';

/**
 * OpenRouter's `error_type` of a failure reported inside a stream (chat error chunks carry it in
 * `error.metadata.error_type`, which @openrouter/sdk requires; failed Responses carry it as `error_type`).
 */
export function apiErrorType(status: number): string {
  switch (status) {
    case 400: return 'invalid_request';
    case 401: return 'authentication';
    case 402: return 'payment_required';
    case 403: return 'permission_denied';
    case 404: return 'not_found';
    case 408: return 'timeout';
    case 413: return 'payload_too_large';
    case 422: return 'unprocessable';
    case 429: return 'rate_limit_exceeded';
    case 502: case 503: return 'provider_unavailable';
    case 529: return 'provider_overloaded';
    default: return 'server';
  }
}

export function chatUsage(usage: Usage, cost: CostBreakdown, isByok: boolean) {
  return {
    prompt_tokens: usage.input_tokens,
    completion_tokens: usage.output_tokens,
    total_tokens: usage.input_tokens + usage.output_tokens,
    prompt_tokens_details: { cached_tokens: usage.cached_input_tokens, cache_write_tokens: usage.cache_write_tokens },
    completion_tokens_details: { reasoning_tokens: usage.reasoning_tokens },
    ...costFields(cost, isByok),
  };
}

export function chatCompletion(identity: ReplyIdentity, result: GenerationResult, usage: ReturnType<typeof chatUsage>, extra: Record<string, unknown> = {}) {
  return {
    id: identity.id,
    object: 'chat.completion',
    created: identity.created,
    model: identity.model,
    provider: identity.provider,
    system_fingerprint: SYSTEM_FINGERPRINT,
    choices: [{
      index: 0,
      logprobs: null,
      finish_reason: result.finish_reason,
      native_finish_reason: result.native_finish_reason ?? result.finish_reason,
      message: {
        role: 'assistant',
        content: result.text.length || !result.tool_calls.length ? result.text : null,
        refusal: null,
        ...(result.reasoning ? { reasoning: result.reasoning } : {}),
        ...(result.reasoning || result.reasoning_signature ? { reasoning_details: [reasoningDetail(identity, result.reasoning, result.reasoning_signature)] } : {}),
        ...(result.tool_calls.length
          ? { tool_calls: result.tool_calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })) }
          : {}),
      },
    }],
    service_tier: result.service_tier ?? identity.serviceTier ?? 'default',
    usage,
    ...extra,
  };
}

/** Stateful: turns internal stream events into chunk events, in order. */
export class ChatStreamWriter {
  private started = false;
  /**
   * A text delta's frame around its content, made once per stream: the same bytes as chunk() gives for
   * `{ content }`, without building and serializing the whole chunk for every piece of text (about 0.05
   * instead of 0.7 µs of CPU per delta, measured alone; a streamed reply has dozens).
   */
  private textFrame: [string, string] | undefined;

  constructor(private readonly identity: ReplyIdentity) {}

  private chunk(choices: unknown[], extra: Record<string, unknown> = {}): string {
    return sseData({
      id: this.identity.id,
      object: 'chat.completion.chunk',
      created: this.identity.created,
      model: this.identity.model,
      provider: this.identity.provider,
      system_fingerprint: SYSTEM_FINGERPRINT,
      choices,
      ...extra,
    });
  }

  /** debug.echo_upstream_body: a chunk without choices that shows the request body sent to the provider. */
  debug(upstreamBody: unknown): string {
    return this.chunk([], { debug: { echo_upstream_body: upstreamBody } });
  }

  private delta(delta: Record<string, unknown>): string {
    return this.chunk([{ index: 0, delta, finish_reason: null, native_finish_reason: null, logprobs: null }]);
  }

  private text(content: string): string {
    if (!this.textFrame) {
      const marker = '\u0000text\u0000';
      const parts = this.delta({ content: marker }).split(JSON.stringify(marker));
      // (An id or model spelling the marker itself would split elsewhere too: then every chunk is built whole.)
      if (parts.length !== 2) return this.delta({ content });
      this.textFrame = [parts[0]!, parts[1]!];
    }
    return `${this.textFrame[0]}${JSON.stringify(content)}${this.textFrame[1]}`;
  }

  start(): string {
    this.started = true;
    return this.delta({ role: 'assistant', content: '' });
  }

  event(event: StreamEvent): string {
    const prefix = this.started ? '' : this.start();
    switch (event.type) {
      case 'text-delta':
        return prefix + this.text(event.delta);
      case 'reasoning-delta':
        return prefix + this.delta({ reasoning: event.delta, reasoning_details: [reasoningDetail(this.identity, event.delta, undefined)] });
      case 'reasoning-signature':
        return prefix + this.delta({ reasoning_details: [reasoningDetail(this.identity, '', event.signature)] });
      case 'tool-call-delta':
        return prefix + this.delta({
          tool_calls: [{
            index: event.index,
            ...(event.id ? { id: event.id, type: 'function' } : {}),
            function: event.name ? { name: event.name, arguments: event.arguments_delta } : { arguments: event.arguments_delta },
          }],
        });
      // Audio belongs to speech replies, which are not written as text streams.
      case 'audio':
        return prefix;
      case 'finish':
        return prefix + this.chunk([{ index: 0, delta: {}, finish_reason: event.finish_reason, native_finish_reason: event.native_finish_reason ?? event.finish_reason, logprobs: null }]);
    }
  }

  /** The last chunk: no choices, the usage (sent whether or not stream_options.include_usage asked for it). */
  usage(usage: ReturnType<typeof chatUsage>, extra: Record<string, unknown> = {}): string {
    return this.chunk([], { usage, ...extra });
  }

  /** A failure after the first byte: an error chunk with finish_reason "error"; no [DONE] follows. */
  error(code: number, message: string, metadata?: Record<string, unknown>): string {
    return (this.started ? '' : this.start()) + this.chunk(
      [{ index: 0, delta: { content: '' }, finish_reason: 'error', native_finish_reason: 'error', logprobs: null }],
      // A more precise error_type the failure already names (e.g. context_length_exceeded) wins over the status's.
      { error: { code, message, metadata: { ...metadata, error_type: typeof metadata?.error_type === 'string' ? metadata.error_type : apiErrorType(code) } } },
    );
  }
}
