// ElevenLabs' streaming text to speech (POST /text-to-speech/{voice_id}/stream?output_format=…): the text,
// the model as model_id, speed among the voice settings. MP3 is asked for at 44.1 kHz and 128 kbps, PCM at
// 24 kHz (16-bit little-endian, as OpenAI's pcm), so a format sounds the same whichever provider served it.
import { nodeFetch } from '../http-client.js';
import { postJson } from '../http.js';
import type { CallOptions, FetchLike, GenerationRequest, ProviderAdapter, StreamEvent } from '../types.js';
import { audioEvents, speechOf, speechOnly } from './audio-stream.js';
import { ProviderError } from '../provider-error.js';

export interface ElevenLabsSettings {
  provider: string;
  baseURL: string;
  apiKey?: string | undefined;
  fetch?: FetchLike;
}

const OUTPUT_FORMAT = { mp3: 'mp3_44100_128', pcm: 'pcm_24000' } as const;

/** ElevenLabs' errors: `{detail: {status, message}}`, or a list of validation problems under `detail`. */
export function describeElevenLabsError(body: unknown): { message?: string; code?: string } | undefined {
  const detail = (body as { detail?: unknown } | undefined)?.detail;
  if (typeof detail === 'string') return { message: detail };
  if (Array.isArray(detail)) return { message: detail.map((item) => (item as { msg?: unknown }).msg).filter((msg) => typeof msg === 'string').join('; ') || undefined };
  if (detail && typeof detail === 'object') {
    const { message, status } = detail as { message?: unknown; status?: unknown };
    return { ...(typeof message === 'string' ? { message } : {}), ...(typeof status === 'string' ? { code: status } : {}) };
  }
  return undefined;
}

/** An ElevenLabs voice id: letters and digits (21m00Tcm4TlvDq8ikWAM), never a path segment such as `..`. */
const VOICE_ID = /^[A-Za-z0-9_-]{1,64}$/;

export function convertToElevenLabs(request: GenerationRequest, provider = 'elevenlabs'): { path: string; body: Record<string, unknown> } {
  const speech = speechOf(provider, request);
  if (!VOICE_ID.test(speech.voice ?? '')) {
    throw new ProviderError({ provider, kind: 'http', status: 400, message: `Voice "${(speech.voice ?? '').slice(0, 64)}" is not an ElevenLabs voice id (letters, digits, - and _)` });
  }
  const options = speech.options ?? {};
  const voiceSettings = { ...(options.voice_settings as Record<string, unknown> | undefined), ...(speech.speed !== undefined ? { speed: speech.speed } : {}) };
  return {
    path: `/text-to-speech/${encodeURIComponent(speech.voice ?? '')}/stream?output_format=${OUTPUT_FORMAT[speech.format]}`,
    body: Object.assign({}, options, { text: speech.input, model_id: request.model }, Object.keys(voiceSettings).length ? { voice_settings: voiceSettings } : {}),
  };
}

export function createElevenLabsAdapter(settings: ElevenLabsSettings): ProviderAdapter {
  const { provider } = settings;
  const fetch = settings.fetch ?? nodeFetch;
  const base = settings.baseURL.replace(/\/+$/, '');
  const headers: Record<string, string> = settings.apiKey ? { 'xi-api-key': settings.apiKey } : {};
  return {
    provider,
    generate: speechOnly(provider),
    async *stream(request: GenerationRequest, options: CallOptions = {}): AsyncGenerator<StreamEvent> {
      const speech = speechOf(provider, request);
      const { path, body } = convertToElevenLabs(request, provider);
      const response = await postJson({ provider, fetch, url: base + path, headers, body, signal: options.signal, describeError: describeElevenLabsError });
      yield* audioEvents(provider, response, speech, options.signal);
    },
  };
}
