import type { FinishReason } from '../types.js';

/** Bedrock Converse `stopReason` → internal finish reason. */
export function mapBedrockStopReason(reason: string | null | undefined, hasToolCalls = false): FinishReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'guardrail_intervened':
    case 'content_filtered':
      return 'content_filter';
    case 'malformed_model_output':
    case 'malformed_tool_use':
      return 'error';
    default:
      return hasToolCalls ? 'tool_calls' : 'stop';
  }
}
