// What Claude takes of an OpenAI-style request's sampling settings, on Anthropic's API and on Bedrock alike:
// a temperature of at most 1 (OpenAI's range goes to 2: a higher one is Claude's highest), and stop
// sequences with something besides whitespace in them (Claude refuses the request otherwise: "each stop
// sequence must contain non-whitespace"; such a sequence, "\n" the common one, is left out and the reply
// runs on past it).
export const CLAUDE_MAX_TEMPERATURE = 1;

export const claudeTemperature = (temperature: number): number => Math.min(temperature, CLAUDE_MAX_TEMPERATURE);

export function claudeStopSequences(stop: readonly string[] | undefined): string[] | undefined {
  const kept = stop?.filter((sequence) => sequence.trim() !== '');
  return kept?.length ? kept : undefined;
}

/** Whether a request's stop sequences lose one on Claude (claudeStopSequences): provider.require_parameters then skips Claude's endpoints. */
export const losesStopOnClaude = (stop: readonly string[] | undefined): boolean => stop?.some((sequence) => sequence.trim() === '') ?? false;

/** Whether a Bedrock model id names a Claude model. */
export const isClaudeOnBedrock = (modelId: string): boolean => modelId.toLowerCase().includes('anthropic.claude');

/** Whether an endpoint serves Claude: Anthropic's API, or a Claude model on Bedrock. */
export const isClaudeEndpoint = (adapter: string, upstreamModel: string): boolean =>
  adapter === 'anthropic' || (adapter === 'bedrock' && isClaudeOnBedrock(upstreamModel));
