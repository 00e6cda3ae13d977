// Internal results and stream events → Anthropic Messages replies (a `message` object) and its SSE events
// (message_start, content_block_start / _delta / _stop, message_delta, message_stop), as Anthropic's SDKs
// read them. The usage carries the gateway's cost fields beside Anthropic's token counts.
import type { FinishReason, GenerationResult, StreamEvent, Usage } from '../../providers/types.js';
import { toolCallInput } from '../../providers/tool-call-input.js';
import { costFields, type CostBreakdown } from '../../billing/cost.js';
import { sseEvent } from './sse.js';
import { anthropicErrorType } from '../../platform/http/anthropic-error-type.js';
import type { ReplyIdentity } from './to-chat.js';

type StopReason = 'end_turn' | 'max_tokens' | 'tool_use' | 'refusal';

/**
 * Anthropic's stop reason. A reply that calls tools stopped for them (`tool_use`), whatever the provider said:
 * some OpenAI-compatible servers end tool calls with finish_reason "stop", and an Anthropic client only runs
 * the tools when the stop reason says so; a reply cut by max_tokens stays `max_tokens`.
 */
export function stopReason(finish: FinishReason, calledTools = false): StopReason {
  if (calledTools && finish !== 'length') return 'tool_use';
  switch (finish) {
    case 'length': return 'max_tokens';
    case 'tool_calls': return 'tool_use';
    case 'content_filter': return 'refusal';
    default: return 'end_turn';
  }
}

/** Anthropic counts input apart from the cache: input_tokens excludes the tokens read from or written to it. */
export function messagesUsage(usage: Usage, cost: CostBreakdown, isByok: boolean) {
  return {
    input_tokens: Math.max(0, usage.input_tokens - usage.cached_input_tokens - usage.cache_write_tokens),
    output_tokens: usage.output_tokens,
    cache_creation_input_tokens: usage.cache_write_tokens,
    cache_read_input_tokens: usage.cached_input_tokens,
    ...costFields(cost, isByok),
  };
}

export function messagesResult(identity: ReplyIdentity, result: GenerationResult, usage: ReturnType<typeof messagesUsage>, extra: Record<string, unknown> = {}) {
  const content: Array<Record<string, unknown>> = [];
  if (result.reasoning || result.reasoning_signature) content.push({ type: 'thinking', thinking: result.reasoning ?? '', signature: result.reasoning_signature ?? '' });
  if (result.text.length || !result.tool_calls.length) content.push({ type: 'text', text: result.text });
  for (const call of result.tool_calls) content.push({ type: 'tool_use', id: call.id, name: call.name, input: toolCallInput(call.arguments) });
  return {
    id: identity.id,
    type: 'message',
    role: 'assistant',
    model: identity.model,
    provider: identity.provider,
    content,
    stop_reason: stopReason(result.finish_reason, result.tool_calls.length > 0),
    stop_sequence: null,
    usage,
    ...extra,
  };
}

/** Stateful: turns internal stream events into Anthropic's events, one content block open at a time. */
export class MessagesStreamWriter {
  private started = false;
  private index = -1;
  private open: 'text' | 'thinking' | 'tool' | undefined;
  private toolIndex = -1;
  private calledTools = false;
  private finish: FinishReason = 'stop';

  /**
   * @param promptTokens the input tokens message_start reports. Anthropic counts them before the first
   *   token and some clients (LangChain) read them only there; the gateway knows the provider's count only
   *   at the end (message_delta, which carries the whole usage), so this is the prompt's estimate.
   */
  constructor(private readonly identity: ReplyIdentity, private readonly promptTokens = 0) {}

  start(): string {
    this.started = true;
    return sseEvent('message_start', {
      type: 'message_start',
      message: {
        id: this.identity.id, type: 'message', role: 'assistant', model: this.identity.model, provider: this.identity.provider,
        content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: this.promptTokens, output_tokens: 0 },
      },
    });
  }

  private close(): string {
    if (this.open === undefined) return '';
    this.open = undefined;
    return sseEvent('content_block_stop', { type: 'content_block_stop', index: this.index });
  }

  private block(kind: 'text' | 'thinking' | 'tool', contentBlock: Record<string, unknown>): string {
    const closed = this.close();
    this.index += 1;
    this.open = kind;
    return closed + sseEvent('content_block_start', { type: 'content_block_start', index: this.index, content_block: contentBlock });
  }

  private delta(delta: Record<string, unknown>): string {
    return sseEvent('content_block_delta', { type: 'content_block_delta', index: this.index, delta });
  }

  event(event: StreamEvent): string {
    const prefix = this.started ? '' : this.start();
    switch (event.type) {
      case 'text-delta': {
        const opened = this.open === 'text' ? '' : this.block('text', { type: 'text', text: '' });
        return prefix + opened + this.delta({ type: 'text_delta', text: event.delta });
      }
      case 'reasoning-delta': {
        const opened = this.open === 'thinking' ? '' : this.block('thinking', { type: 'thinking', thinking: '', signature: '' });
        return prefix + opened + this.delta({ type: 'thinking_delta', thinking: event.delta });
      }
      case 'reasoning-signature': {
        const opened = this.open === 'thinking' ? '' : this.block('thinking', { type: 'thinking', thinking: '', signature: '' });
        return prefix + opened + this.delta({ type: 'signature_delta', signature: event.signature });
      }
      case 'tool-call-delta': {
        let opened = '';
        this.calledTools = true;
        if (this.open !== 'tool' || event.index !== this.toolIndex) {
          this.toolIndex = event.index;
          opened = this.block('tool', { type: 'tool_use', id: event.id ?? `call_${event.index}`, name: event.name ?? '', input: {} });
        }
        return prefix + opened + (event.arguments_delta ? this.delta({ type: 'input_json_delta', partial_json: event.arguments_delta }) : '');
      }
      // Audio belongs to speech replies, which are not written as text streams.
      case 'audio':
        return prefix;
      case 'finish':
        this.finish = event.finish_reason;
        return prefix + this.close();
    }
  }

  /** The end: the stop reason and usage, then message_stop. */
  end(usage: ReturnType<typeof messagesUsage>, extra: Record<string, unknown> = {}): string {
    return (this.started ? '' : this.start()) + this.close()
      + sseEvent('message_delta', { type: 'message_delta', delta: { stop_reason: stopReason(this.finish, this.calledTools), stop_sequence: null }, usage, ...extra })
      + sseEvent('message_stop', { type: 'message_stop' });
  }

  /** A failure after the first byte: Anthropic's error event (the stream ends with it). */
  error(status: number, message: string, metadata?: Record<string, unknown>): string {
    return this.close() + sseEvent('error', { type: 'error', error: { type: anthropicErrorType(status), message, code: status, ...(metadata ? { metadata } : {}) } });
  }
}
