// A tool call's input as an object, for the formats that keep it so (Anthropic's tool_use.input, Gemini's
// functionCall.args, Bedrock Converse's toolUse.input, and /messages replies): the arguments text parsed.
// Arguments that are not a JSON object (a call cut off by the token limit, a model's malformed JSON) go as
// `{"raw_arguments": <the text>}`: an object the provider accepts, holding what the model wrote. Neither
// `{}` (which would rewrite the conversation without a trace) nor a 400 (which would fail every later turn
// of a conversation that keeps the call in its history, though another provider of the same model takes
// it) serves the caller better.
export function toolCallInput(argumentsText: string): Record<string, unknown> {
  if (argumentsText.trim() === '') return {};
  try {
    const args: unknown = JSON.parse(argumentsText);
    if (args !== null && typeof args === 'object' && !Array.isArray(args)) return args as Record<string, unknown>;
  } catch {
    // kept as text below
  }
  return { raw_arguments: argumentsText };
}
