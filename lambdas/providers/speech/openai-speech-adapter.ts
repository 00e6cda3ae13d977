// OpenAI's text to speech (POST /audio/speech): model, input, voice, response_format, speed. Reference
// content goes on as `input_references` (OpenRouter's field) to endpoints that declare voice cloning or
// image references; routing sends none elsewhere.
import { nodeFetch } from '../http-client.js';
import { postJson } from '../http.js';
import type { CallOptions, FetchLike, GenerationRequest, ProviderAdapter, StreamEvent } from '../types.js';
import { describeOpenAIError } from '../openai/openai-chat-api-types.js';
import { audioEvents, speechOf, speechOnly } from './audio-stream.js';

export interface OpenAISpeechSettings {
  provider: string;
  baseURL: string;
  apiKey?: string | undefined;
  fetch?: FetchLike;
}

/** The request body OpenAI's audio/speech takes. */
export function convertToOpenAISpeech(request: GenerationRequest): Record<string, unknown> {
  const speech = speechOf('openai', request);
  return Object.assign({}, speech.options, {
    model: request.model,
    input: speech.input,
    voice: speech.voice,
    response_format: speech.format,
    ...(speech.speed !== undefined ? { speed: speech.speed } : {}),
    ...(speech.instructions !== undefined ? { instructions: speech.instructions } : {}),
    ...(speech.references.length ? { input_references: speech.references } : {}),
  });
}

export function createOpenAISpeechAdapter(settings: OpenAISpeechSettings): ProviderAdapter {
  const { provider } = settings;
  const fetch = settings.fetch ?? nodeFetch;
  const url = `${settings.baseURL.replace(/\/+$/, '')}/audio/speech`;
  const headers: Record<string, string> = settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {};
  return {
    provider,
    generate: speechOnly(provider),
    async *stream(request: GenerationRequest, options: CallOptions = {}): AsyncGenerator<StreamEvent> {
      const speech = speechOf(provider, request);
      const response = await postJson({ provider, fetch, url, headers, body: convertToOpenAISpeech(request), signal: options.signal, describeError: describeOpenAIError });
      yield* audioEvents(provider, response, speech, options.signal);
    },
  };
}
