import type { FinishReason } from '../types.js';

/**
 * Gemini `finishReason` → internal finish reason. Gemini says STOP also when it stops to call functions,
 * so a reply with function calls counts as tool_calls.
 */
export function mapGeminiFinishReason(reason: string | null | undefined, hasToolCalls = false): FinishReason {
  switch (reason) {
    case 'STOP':
      return hasToolCalls ? 'tool_calls' : 'stop';
    case 'MAX_TOKENS':
      return 'length';
    case 'SAFETY':
    case 'RECITATION':
    case 'BLOCKLIST':
    case 'PROHIBITED_CONTENT':
    case 'SPII':
    case 'IMAGE_SAFETY':
    case 'IMAGE_PROHIBITED_CONTENT':
    case 'IMAGE_RECITATION':
      return 'content_filter';
    case 'MALFORMED_FUNCTION_CALL':
    case 'UNEXPECTED_TOOL_CALL':
    case 'TOO_MANY_TOOL_CALLS':
    case 'MISSING_THOUGHT_SIGNATURE':
    case 'MALFORMED_RESPONSE':
    case 'LANGUAGE':
    case 'OTHER':
      return 'error';
    default:
      return hasToolCalls ? 'tool_calls' : 'stop';
  }
}

