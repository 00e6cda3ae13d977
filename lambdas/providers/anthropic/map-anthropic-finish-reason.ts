import type { FinishReason } from '../types.js';

/** Anthropic `stop_reason` → internal finish reason. A missing reason with tool calls counts as tool_calls. */
export function mapAnthropicFinishReason(reason: string | null | undefined, hasToolCalls = false): FinishReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
    case 'pause_turn':
      return 'stop';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return hasToolCalls ? 'tool_calls' : 'stop';
  }
}
