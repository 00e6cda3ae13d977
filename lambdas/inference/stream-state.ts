// What a stream has produced so far, gathered event by event: the result its settlement charges, with
// usage estimated from the output when the provider reported none (a stream cut short).
import { estimateUsage } from './estimate.js';
import { speechUsage } from '../providers/speech/audio-stream.js';
import type { GenerationResult, StreamEvent, ToolCall } from '../providers/types.js';
import type { InferenceRequest } from './inference-request.js';

export interface StreamState {
  text: string;
  reasoning: string;
  signature?: string;
  toolCalls: Map<number, ToolCall>;
  /** Bytes of audio a speech reply has produced. */
  audioBytes: number;
  finish: Extract<StreamEvent, { type: 'finish' }> | undefined;
}

export function newStreamState(): StreamState {
  return { text: '', reasoning: '', toolCalls: new Map(), audioBytes: 0, finish: undefined };
}

export function gather(state: StreamState, event: StreamEvent): void {
  if (event.type === 'text-delta') state.text += event.delta;
  else if (event.type === 'reasoning-delta') state.reasoning += event.delta;
  else if (event.type === 'reasoning-signature') state.signature = event.signature;
  else if (event.type === 'tool-call-delta') {
    const call = state.toolCalls.get(event.index) ?? { id: event.id ?? '', name: event.name ?? '', arguments: '' };
    if (event.id && !call.id) call.id = event.id;
    if (event.name && !call.name) call.name = event.name;
    call.arguments += event.arguments_delta;
    state.toolCalls.set(event.index, call);
  } else if (event.type === 'audio') state.audioBytes += event.data.length;
  else state.finish = event;
}

export function resultFromState(state: StreamState, request: InferenceRequest): GenerationResult & { usageEstimated: boolean } {
  const reported = state.finish?.usage;
  const output = state.text + state.reasoning + [...state.toolCalls.values()].map((call) => call.name + call.arguments).join('');
  return {
    usageEstimated: reported === undefined,
    text: state.text,
    ...(state.reasoning ? { reasoning: state.reasoning } : {}),
    ...(state.signature ? { reasoning_signature: state.signature } : {}),
    tool_calls: [...state.toolCalls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call),
    finish_reason: state.finish?.finish_reason ?? 'error',
    ...(state.finish?.native_finish_reason ? { native_finish_reason: state.finish.native_finish_reason } : {}),
    // A speech reply cut short is billed for its whole input (the provider took all of it): its characters.
    usage: reported ?? (request.params.speech ? speechUsage(request.params.speech) : estimateUsage(request.params, output)),
    ...(state.finish?.provider_id ? { provider_id: state.finish.provider_id } : {}),
    ...(state.finish?.service_tier ? { service_tier: state.finish.service_tier } : {}),
  };
}
