// Internal results and stream events → Responses results and the Responses event sequence
// (response.created, response.in_progress, output items and parts, deltas, .done events, response.completed).
import { randomBytes } from 'node:crypto';
import type { FinishReason, GenerationResult, StreamEvent, Usage } from '../../providers/types.js';
import { costFields, type CostBreakdown } from '../../billing/cost.js';
import { sseEvent } from './sse.js';
import { apiErrorType, type ReplyIdentity } from './to-chat.js';

type OutputItem =
  | { type: 'reasoning'; id: string; summary: Array<{ type: 'summary_text'; text: string }>; status?: string; encrypted_content?: string }
  | { type: 'message'; id: string; role: 'assistant'; status: string; content: Array<{ type: 'output_text'; text: string; annotations: unknown[]; logprobs: unknown[] }> }
  | { type: 'function_call'; id: string; call_id: string; name: string; arguments: string; status: string };

const itemId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

/**
 * The usage of a Responses reply. Its cost details name input and output where chat names prompt and
 * completions (`upstream_inference_input_cost`, `upstream_inference_output_cost`): the Responses API's own
 * names, which @openrouter/sdk requires.
 */
export function responsesUsage(usage: Usage, cost: CostBreakdown, isByok: boolean) {
  const { cost_details: chat, ...fields } = costFields(cost, isByok);
  return {
    input_tokens: usage.input_tokens,
    input_tokens_details: { cached_tokens: usage.cached_input_tokens, cache_write_tokens: usage.cache_write_tokens },
    output_tokens: usage.output_tokens,
    output_tokens_details: { reasoning_tokens: usage.reasoning_tokens },
    total_tokens: usage.input_tokens + usage.output_tokens,
    ...fields,
    cost_details: {
      upstream_inference_cost: chat.upstream_inference_cost,
      upstream_inference_input_cost: chat.upstream_inference_prompt_cost,
      upstream_inference_output_cost: chat.upstream_inference_completions_cost,
    },
  };
}

function statusOf(finish: FinishReason): { status: string; incomplete_details: { reason: string } | null } {
  if (finish === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finish === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

/**
 * The echoed tools as a Responses result lists them: a function tool always has `parameters` (null when the
 * request gave none), as in OpenAI's replies; @openrouter/sdk cannot read a function tool without it.
 */
function echoedTools(tools: unknown): unknown {
  if (!Array.isArray(tools)) return tools;
  return tools.map((tool: Record<string, unknown>) => (tool?.type === 'function' ? Object.assign({}, tool, { parameters: tool.parameters ?? null }) : tool));
}

export function responseObject(
  identity: ReplyIdentity,
  echo: Record<string, unknown>,
  state: { status: string; output: OutputItem[]; usage: ReturnType<typeof responsesUsage> | null; incomplete_details?: { reason: string } | null; error?: { code: string; message: string } | null; errorType?: string; completedAt?: number | null },
  extra: Record<string, unknown> = {},
) {
  const text = state.output.flatMap((item) => (item.type === 'message' ? item.content.map((part) => part.text) : [])).join('');
  return {
    id: identity.id,
    object: 'response',
    created_at: identity.created,
    completed_at: state.completedAt ?? null,
    status: state.status,
    model: identity.model,
    provider: identity.provider,
    output: state.output,
    output_text: text,
    error: state.error ?? null,
    incomplete_details: state.incomplete_details ?? null,
    ...(state.errorType ? { error_type: state.errorType } : {}),
    ...echo,
    ...('tools' in echo ? { tools: echoedTools(echo.tools) } : {}),
    service_tier: identity.serviceTier ?? 'default',
    usage: state.usage,
    ...extra,
  };
}

export function resultToOutput(result: GenerationResult): OutputItem[] {
  const output: OutputItem[] = [];
  const completed = statusOf(result.finish_reason).status === 'completed' ? 'completed' : 'incomplete';
  if (result.reasoning || result.reasoning_signature) {
    output.push({
      type: 'reasoning', id: itemId('rs'), summary: [{ type: 'summary_text', text: result.reasoning ?? '' }],
      ...(result.reasoning_signature ? { encrypted_content: result.reasoning_signature } : {}),
    });
  }
  if (result.text || !result.tool_calls.length) {
    output.push({ type: 'message', id: itemId('msg'), role: 'assistant', status: completed, content: [{ type: 'output_text', text: result.text, annotations: [], logprobs: [] }] });
  }
  for (const call of result.tool_calls) {
    output.push({ type: 'function_call', id: itemId('fc'), call_id: call.id, name: call.name, arguments: call.arguments, status: 'completed' });
  }
  return output;
}

export function responseResult(identity: ReplyIdentity, echo: Record<string, unknown>, result: GenerationResult, usage: ReturnType<typeof responsesUsage>, completedAt: number, extra: Record<string, unknown> = {}) {
  const { status, incomplete_details } = statusOf(result.finish_reason);
  return responseObject(identity, echo, { status, incomplete_details, output: resultToOutput(result), usage, completedAt }, extra);
}

/** Stateful: turns internal stream events into the Responses event sequence with increasing sequence numbers. */
export class ResponsesStreamWriter {
  private sequence = 0;
  private readonly output: OutputItem[] = [];
  private open: { item: OutputItem; index: number; toolIndex?: number } | undefined;
  private readonly toolItems = new Map<number, number>();

  constructor(private readonly identity: ReplyIdentity, private readonly echo: Record<string, unknown>) {}

  private emit(type: string, payload: Record<string, unknown>): string {
    return sseEvent(type, { type, sequence_number: this.sequence++, ...payload });
  }

  /** debug.echo_upstream_body: the body sent to the provider, as the stream's first event (before response.created). */
  debug(upstreamBody: unknown): string {
    return this.emit('response.debug', { debug: { echo_upstream_body: upstreamBody } });
  }

  start(): string {
    const response = responseObject(this.identity, this.echo, { status: 'in_progress', output: [], usage: null });
    return this.emit('response.created', { response }) + this.emit('response.in_progress', { response });
  }

  /** Closes the open item; a message cut short by the token limit or a filter closes as `incomplete` (as resultToOutput says). */
  private closeOpen(messageStatus: 'completed' | 'incomplete' = 'completed'): string {
    const open = this.open;
    if (!open) return '';
    this.open = undefined;
    const { item, index } = open;
    let out = '';
    if (item.type === 'message') {
      item.status = messageStatus;
      const part = item.content[0]!;
      out += this.emit('response.output_text.done', { item_id: item.id, output_index: index, content_index: 0, text: part.text, logprobs: [] });
      out += this.emit('response.content_part.done', { item_id: item.id, output_index: index, content_index: 0, part });
    } else if (item.type === 'reasoning') {
      item.status = 'completed';
      const part = item.summary[0]!;
      out += this.emit('response.reasoning_summary_text.done', { item_id: item.id, output_index: index, summary_index: 0, text: part.text });
      out += this.emit('response.reasoning_summary_part.done', { item_id: item.id, output_index: index, summary_index: 0, part });
    } else {
      item.status = 'completed';
      out += this.emit('response.function_call_arguments.done', { item_id: item.id, output_index: index, name: item.name, arguments: item.arguments });
    }
    return out + this.emit('response.output_item.done', { output_index: index, item });
  }

  private openItem(item: OutputItem, toolIndex?: number): string {
    let out = this.closeOpen();
    const index = this.output.length;
    this.output.push(item);
    this.open = { item, index, ...(toolIndex !== undefined ? { toolIndex } : {}) };
    const added = item.type === 'message' ? Object.assign({}, item, { content: [] }) : item.type === 'reasoning' ? Object.assign({}, item, { summary: [] }) : { ...item };
    out += this.emit('response.output_item.added', { output_index: index, item: added });
    if (item.type === 'message') {
      out += this.emit('response.content_part.added', { item_id: item.id, output_index: index, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } });
    } else if (item.type === 'reasoning') {
      out += this.emit('response.reasoning_summary_part.added', { item_id: item.id, output_index: index, summary_index: 0, part: { type: 'summary_text', text: '' } });
    }
    return out;
  }

  event(event: StreamEvent): string {
    switch (event.type) {
      case 'text-delta': {
        let out = '';
        if (this.open?.item.type !== 'message') {
          out += this.openItem({ type: 'message', id: itemId('msg'), role: 'assistant', status: 'in_progress', content: [{ type: 'output_text', text: '', annotations: [], logprobs: [] }] });
        }
        const { item, index } = this.open!;
        (item as Extract<OutputItem, { type: 'message' }>).content[0]!.text += event.delta;
        return out + this.emit('response.output_text.delta', { item_id: item.id, output_index: index, content_index: 0, delta: event.delta, logprobs: [] });
      }
      case 'reasoning-delta': {
        let out = '';
        if (this.open?.item.type !== 'reasoning') {
          out += this.openItem({ type: 'reasoning', id: itemId('rs'), summary: [{ type: 'summary_text', text: '' }], status: 'in_progress' });
        }
        const { item, index } = this.open!;
        (item as Extract<OutputItem, { type: 'reasoning' }>).summary[0]!.text += event.delta;
        return out + this.emit('response.reasoning_summary_text.delta', { item_id: item.id, output_index: index, summary_index: 0, delta: event.delta });
      }
      case 'reasoning-signature': {
        // Carried on the reasoning item (as encrypted_content), seen in its output_item.done event.
        const reasoning = [...this.output].reverse().find((item) => item.type === 'reasoning') as Extract<OutputItem, { type: 'reasoning' }> | undefined;
        if (reasoning) reasoning.encrypted_content = event.signature;
        return '';
      }
      case 'tool-call-delta': {
        let out = '';
        if (this.open?.toolIndex !== event.index) {
          const existing = this.toolItems.get(event.index);
          if (existing !== undefined) {
            // Interleaved deltas of an earlier call: append without reopening.
            const item = this.output[existing] as Extract<OutputItem, { type: 'function_call' }>;
            item.arguments += event.arguments_delta;
            return this.emit('response.function_call_arguments.delta', { item_id: item.id, output_index: existing, delta: event.arguments_delta });
          }
          out += this.openItem({ type: 'function_call', id: itemId('fc'), call_id: event.id ?? itemId('call'), name: event.name ?? '', arguments: '', status: 'in_progress' }, event.index);
          this.toolItems.set(event.index, this.open!.index);
        }
        const { item, index } = this.open!;
        const call = item as Extract<OutputItem, { type: 'function_call' }>;
        if (event.name && !call.name) call.name = event.name;
        call.arguments += event.arguments_delta;
        return event.arguments_delta
          ? out + this.emit('response.function_call_arguments.delta', { item_id: item.id, output_index: index, delta: event.arguments_delta })
          : out;
      }
      // Audio belongs to speech replies, which are not written as text streams.
      case 'audio':
      case 'finish':
        return '';
    }
  }

  finish(finish: FinishReason, usage: ReturnType<typeof responsesUsage>, completedAt: number, extra: Record<string, unknown> = {}): string {
    const { status, incomplete_details } = statusOf(finish);
    const messageStatus = status === 'completed' ? 'completed' : 'incomplete';
    let out = this.closeOpen(messageStatus);
    if (!this.output.length) {
      out += this.openItem({ type: 'message', id: itemId('msg'), role: 'assistant', status: 'in_progress', content: [{ type: 'output_text', text: '', annotations: [], logprobs: [] }] });
      out += this.closeOpen(messageStatus);
    }
    // A message closed earlier (a tool call opened after it) ends as the buffered reply says of it too.
    if (messageStatus === 'incomplete') for (const item of this.output) if (item.type === 'message') item.status = messageStatus;
    const response = responseObject(this.identity, this.echo, { status, incomplete_details, output: this.output, usage, completedAt }, extra);
    return out + this.emit(status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
  }

  /** A failure after the first byte: an error event and response.failed; no [DONE] follows. */
  error(code: number, message: string, extra: Record<string, unknown> = {}): string {
    const error = { code: code === 429 ? 'rate_limit_exceeded' : 'server_error', message };
    // The item the failure cut off is not finished (no .done events follow it).
    if (this.open) {
      this.open.item.status = 'incomplete';
      this.open = undefined;
    }
    const response = responseObject(this.identity, this.echo, { status: 'failed', output: this.output, usage: null, error, errorType: apiErrorType(code) }, extra);
    return this.emit('error', { code: error.code, message, param: null }) + this.emit('response.failed', { response });
  }
}
