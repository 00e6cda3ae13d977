// A speech reply's audio as stream events: the bytes as they arrive, then the finish event with the usage
// a speech endpoint is billed by (the input's characters). Shared by the speech adapters.
import { ProviderError } from '../provider-error.js';
import { transportError } from '../http.js';
import type { GenerationRequest, ProviderAdapter, SpeechInput, StreamEvent, UpstreamResponse } from '../types.js';

/** What a speech endpoint counts: one input token per character of the text (UTF-16 code units, as providers count). */
export function speechUsage(speech: SpeechInput) {
  return { input_tokens: speech.input.length, output_tokens: 0, cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 };
}

export function speechOf(provider: string, request: GenerationRequest): SpeechInput {
  if (!request.speech) throw new ProviderError({ provider, kind: 'invalid-response', status: 500, message: 'a speech endpoint was called without a speech request' });
  return request.speech;
}

export async function* audioEvents(provider: string, response: UpstreamResponse, speech: SpeechInput, signal: AbortSignal | undefined): AsyncGenerator<StreamEvent> {
  const type = response.headers.get('content-type') ?? '';
  // A 200 that is not audio (an error page, JSON) must not reach the client as sound.
  if (!/^audio\//i.test(type) && !/^application\/octet-stream/i.test(type)) {
    throw new ProviderError({ provider, kind: 'invalid-response', status: 502, message: `Upstream speech reply is ${type || 'untyped'}, not audio` });
  }
  if (!response.body) throw new ProviderError({ provider, kind: 'invalid-response', status: 502, message: 'Upstream speech reply has no body' });
  let bytes = 0;
  try {
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
      if (chunk.length === 0) continue;
      bytes += chunk.length;
      yield { type: 'audio', data: chunk };
    }
  } catch (err) {
    throw transportError(provider, err, signal);
  }
  if (bytes === 0) throw new ProviderError({ provider, kind: 'invalid-response', status: 502, message: 'Upstream speech reply has no audio' });
  yield { type: 'finish', finish_reason: 'stop', usage: speechUsage(speech) };
}

/** Speech is streamed only: a buffered generate() is a bug in the caller. */
export function speechOnly(provider: string): ProviderAdapter['generate'] {
  return () => Promise.reject(new ProviderError({ provider, kind: 'invalid-response', status: 500, message: 'speech endpoints answer POST /audio/speech, streamed' }));
}
