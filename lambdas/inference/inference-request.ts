// The format-independent inference request both inbound formats are translated into.
import type { GenerationRequest } from '../providers/types.js';
import type { Plugin, ProviderPreferences } from './formats/common-schema.js';

export type InboundFormat = 'chat' | 'responses' | 'messages' | 'embeddings' | 'speech';

/** A preset the request runs through: `@preset/<slug>`, `<model>@preset/<slug>` or `preset: "<slug>"`. */
export interface PresetReference {
  slug: string;
  /** The request names its own model (`<model>@preset/<slug>`, or `model` beside `preset`): the preset's models are not used. */
  fixedModel: boolean;
}

export interface InferenceRequest {
  format: InboundFormat;
  /** Gateway model ids to try, in order (model first, then models); a preset's come in when it is applied. */
  models: string[];
  preset?: PresetReference;
  /** Everything for the provider except the model, which routing decides. */
  params: Omit<GenerationRequest, 'model'>;
  provider: ProviderPreferences | undefined;
  /** From the deprecated `route` field: fallback → partition model, sort → partition none. */
  routePartition: 'model' | 'none' | undefined;
  stream: boolean;
  serviceTier: string | null;
  sessionId: string | undefined;
  user: string | undefined;
  safetyIdentifier: string | undefined;
  metadata: Record<string, string> | undefined;
  /** The request's `trace` object: for observability destinations only, never sent upstream. */
  trace?: Record<string, unknown> | undefined;
  plugins: Plugin[];
  /** The request as received, for echoing settings back (Responses). */
  echo: Record<string, unknown>;
  /** `debug.echo_upstream_body` of a streamed chat completion or Responses request: the stream opens with the body sent upstream. */
  echoUpstreamBody?: boolean;
}

/** Internal parameter → the OpenRouter parameter name that endpoints list as supported. */
export const PARAMETER_NAMES: Partial<Record<keyof GenerationRequest, string>> = {
  max_output_tokens: 'max_tokens',
  temperature: 'temperature',
  top_p: 'top_p',
  top_k: 'top_k',
  frequency_penalty: 'frequency_penalty',
  presence_penalty: 'presence_penalty',
  repetition_penalty: 'repetition_penalty',
  min_p: 'min_p',
  seed: 'seed',
  stop: 'stop',
  logprobs: 'logprobs',
  top_logprobs: 'top_logprobs',
  logit_bias: 'logit_bias',
  tools: 'tools',
  tool_choice: 'tool_choice',
  parallel_tool_calls: 'parallel_tool_calls',
  response_format: 'response_format',
  reasoning: 'reasoning',
};

const PARAMETER_ENTRIES = Object.entries(PARAMETER_NAMES) as Array<[keyof GenerationRequest, string]>;

/**
 * Values that ask for nothing, as clients that send every option with its default do: a parameter set to
 * one is not requested (provider.require_parameters does not skip an endpoint for it).
 */
const ASKS_NOTHING: Partial<Record<keyof GenerationRequest, unknown>> = {
  logprobs: false, top_logprobs: 0, frequency_penalty: 0, presence_penalty: 0, repetition_penalty: 1, min_p: 0, parallel_tool_calls: true,
};

function asksNothing(field: keyof GenerationRequest, value: unknown): boolean {
  if (value === undefined || (Array.isArray(value) && value.length === 0)) return true;
  if (field === 'logit_bias') return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
  return ASKS_NOTHING[field] === value;
}

/** The parameters a request sets, by their supported-parameter names. */
export function requestedParameters(params: InferenceRequest['params']): Map<string, keyof GenerationRequest> {
  const requested = new Map<string, keyof GenerationRequest>();
  // An embeddings request's own parameter: provider.require_parameters then keeps it to endpoints that take it.
  if (params.embedding?.dimensions !== undefined) requested.set('dimensions', 'embedding');
  for (const [field, name] of PARAMETER_ENTRIES) {
    if (asksNothing(field, params[field as keyof typeof params])) continue;
    requested.set(name, field);
  }
  return requested;
}
