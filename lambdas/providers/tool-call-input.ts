// A tool call of the history as a provider that keeps its input as an object (Anthropic's tool_use.input,
// Gemini's functionCall.args) takes it: the arguments text parsed. Arguments that are not a JSON object
// (a call cut off by the token limit, a model's malformed JSON) go as `{"raw_arguments": <the text>}`: an
// object the provider accepts, holding what the model wrote. Neither `{}` (which would rewrite the
// conversation without a trace) nor a 400 (which would fail every later turn of a conversation that keeps
// the call in its history, though another provider of the same model takes it) serves the caller better.
import type { ToolCall } from './types.js';

export function toolCallInput(call: ToolCall): Record<string, unknown> {
  if (call.arguments.trim() === '') return {};
  try {
    const args: unknown = JSON.parse(call.arguments);
    if (args !== null && typeof args === 'object' && !Array.isArray(args)) return args as Record<string, unknown>;
  } catch {
    // kept as text below
  }
  return { raw_arguments: call.arguments };
}
