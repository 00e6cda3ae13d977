// Text to speech: OpenAI's POST /v1/audio/speech and ElevenLabs' POST /v1/text-to-speech/{voice_id}/stream.
// The `tts-echo` model "says" the text in speechDurationSeconds (audio.ts) and streams the audio as it is
// produced: chunked, no content-length, about 100 ms of audio per chunk (MP3: whole frames), chunkDelayMs
// apart. `error-429`, `error-500` and `timeout` behave as the chat models do; any other model is a 404.
import type { ServerResponse } from 'node:http';
import { isObject, upstreamName, writeCorked, type ErrorReply } from './common.js';
import { openAiError } from './openai-chat.js';
import { mp3BitrateAllowed, mp3Frames, mp3SamplesPerFrame, pcmSlice, sampleCount, speechDurationSeconds } from './audio.js';

export const OPENAI_SPEECH_PATH = '/v1/audio/speech';
export const ELEVENLABS_SPEECH_PATH = /^\/v1\/text-to-speech\/[^/]+\/stream$/;

export type SpeechFormat = 'mp3' | 'pcm';

/** The audio of one reply, made a chunk at a time as it is sent (a long, slow reply holds no copy of it all). */
export interface SpeechAudio {
  format: SpeechFormat;
  /** Number of chunks; chunk(i) for i in [0, chunks). */
  chunks: number;
  /** Total bytes of all chunks. */
  bytes: number;
  chunk(index: number): Buffer;
}

export type SpeechReply =
  | { kind: 'audio'; model: string; audio: SpeechAudio; headers: Record<string, string> }
  /** `delayed`: sent after the first-byte delay, as a model's answer is; validation failures are not. */
  | { kind: 'error'; status: number; body: unknown; headers?: Record<string, string>; delayed: boolean }
  | { kind: 'timeout' };

/** One text-to-speech API: its answer to a request body (`undefined` when the body was not JSON), and its 405. */
export interface SpeechApi {
  answer(body: { value: unknown } | undefined, query: string): SpeechReply;
  methodNotAllowed(method: string): ErrorReply;
}

const CHUNK_SECONDS = 0.1;

/** MPEG audio Layer III silence, about 100 ms of whole frames per chunk. */
export function mp3Audio(durationSeconds: number, sampleRate: number, bitrateKbps: number): SpeechAudio {
  const frames = mp3Frames(durationSeconds, sampleRate, bitrateKbps);
  const perChunk = Math.max(1, Math.round((CHUNK_SECONDS * sampleRate) / mp3SamplesPerFrame(sampleRate)));
  let bytes = 0;
  for (const frame of frames) bytes += frame.length;
  return {
    format: 'mp3',
    chunks: Math.ceil(frames.length / perChunk),
    bytes,
    chunk: (index) => Buffer.concat(frames.slice(index * perChunk, (index + 1) * perChunk)),
  };
}

/** 16-bit little-endian mono PCM, 100 ms of samples per chunk (views of audio.ts's cached tone, no copies). */
export function pcmStream(durationSeconds: number, sampleRate: number): SpeechAudio {
  const samples = sampleCount(durationSeconds, sampleRate);
  const perChunk = Math.max(1, Math.round(CHUNK_SECONDS * sampleRate));
  return {
    format: 'pcm',
    chunks: Math.ceil(samples / perChunk),
    bytes: samples * 2,
    chunk: (index) => pcmSlice(index * perChunk, Math.min(perChunk, samples - index * perChunk), sampleRate),
  };
}

/** The scripted models: `undefined` for `tts-echo` (speak), else the reply. */
function scripted(model: string, failures: { rateLimit: ErrorReply; server: ErrorReply; notFound: ErrorReply }): SpeechReply | undefined {
  switch (upstreamName(model)) {
    case 'tts-echo':
      return undefined;
    case 'error-429':
      return { kind: 'error', ...failures.rateLimit, headers: { 'retry-after': '1' }, delayed: true };
    case 'error-500':
      return { kind: 'error', ...failures.server, delayed: true };
    case 'timeout':
      return { kind: 'timeout' };
    default:
      return { kind: 'error', ...failures.notFound, delayed: false };
  }
}

// ---- OpenAI -----------------------------------------------------------------------------------

const OPENAI_MAX_INPUT = 4096;
/** OpenAI's other response formats: real, but this simulator only makes MP3 and PCM. */
const OPENAI_UNSUPPORTED_FORMATS: ReadonlySet<string> = new Set(['opus', 'aac', 'flac', 'wav']);
const OPENAI_RATE = 24000;
const OPENAI_MP3_KBPS = 48;

function openAiInvalid(message: string, param: string | null, code: string | null = null): SpeechReply {
  return { kind: 'error', status: 400, body: { error: { message, type: 'invalid_request_error', param, code } }, delayed: false };
}

/** `input_references` (OpenRouter's voice-cloning extension): the count of audio and image parts, or the 400. */
function countReferences(value: unknown): { audio: number; images: number } | SpeechReply {
  if (value === undefined || value === null) return { audio: 0, images: 0 };
  if (!Array.isArray(value)) return openAiInvalid("Invalid 'input_references': expected an array of parts.", 'input_references');
  let audio = 0;
  let images = 0;
  for (let i = 0; i < value.length; i++) {
    const part: unknown = value[i];
    const where = `input_references[${i}]`;
    if (!isObject(part)) return openAiInvalid(`Invalid '${where}': expected an object.`, where);
    if (part.type === 'input_audio') {
      const input = part.input_audio;
      if (!isObject(input) || typeof input.data !== 'string' || input.data === '') return openAiInvalid(`Invalid '${where}.input_audio.data': expected a non-empty string.`, `${where}.input_audio.data`);
      if (input.format !== undefined && typeof input.format !== 'string') return openAiInvalid(`Invalid '${where}.input_audio.format': expected a string.`, `${where}.input_audio.format`);
      audio++;
    } else if (part.type === 'image_url') {
      const image = part.image_url;
      if (!isObject(image) || typeof image.url !== 'string' || image.url === '') return openAiInvalid(`Invalid '${where}.image_url.url': expected a non-empty string.`, `${where}.image_url.url`);
      images++;
    } else if (part.type === 'text') {
      if (typeof part.text !== 'string') return openAiInvalid(`Invalid '${where}.text': expected a string.`, `${where}.text`);
    } else {
      return openAiInvalid(`Invalid '${where}.type': expected one of 'input_audio', 'text', 'image_url'.`, `${where}.type`);
    }
  }
  return { audio, images };
}

/** POST /v1/audio/speech: MP3 (MPEG-2 Layer III, 24 kHz, 48 kbps, mono) or PCM (24 kHz s16le mono). */
export const openAiSpeech: SpeechApi = {
  answer(parsed) {
    if (!parsed) return openAiInvalid('We could not parse the JSON body of your request. The request body must be valid JSON.', null);
    const body = parsed.value;
    if (!isObject(body)) return openAiInvalid('The request body must be a JSON object.', null);
    const { model, input, voice } = body;
    if (typeof model !== 'string' || model === '') return openAiInvalid("Missing required parameter: 'model'.", 'model');
    if (typeof input !== 'string' || input === '') return openAiInvalid("Invalid 'input': expected a non-empty string.", 'input');
    if (input.length > OPENAI_MAX_INPUT) return openAiInvalid(`Invalid 'input': string too long. Expected a string with maximum length ${OPENAI_MAX_INPUT}, but got a string with length ${input.length} instead.`, 'input', 'string_above_max_length');
    if (typeof voice !== 'string' || voice === '') return openAiInvalid("Invalid 'voice': expected a non-empty string.", 'voice');
    const format = body.response_format ?? 'mp3';
    if (format !== 'mp3' && format !== 'pcm') {
      if (typeof format === 'string' && OPENAI_UNSUPPORTED_FORMATS.has(format)) return openAiInvalid(`response_format '${format}' is not supported by the simulator; use 'mp3' or 'pcm'.`, 'response_format');
      return openAiInvalid("Invalid 'response_format': expected one of 'mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'.", 'response_format');
    }
    const speed = body.speed ?? 1;
    if (typeof speed !== 'number' || speed < 0.25 || speed > 4) return openAiInvalid("Invalid 'speed': expected a number from 0.25 to 4.0.", 'speed');
    if (body.instructions !== undefined && body.instructions !== null && typeof body.instructions !== 'string') return openAiInvalid("Invalid 'instructions': expected a string.", 'instructions');
    const references = countReferences(body.input_references);
    if ('kind' in references) return references;
    const failure = scripted(model, { rateLimit: openAiError('rate_limit', ''), server: openAiError('server', ''), notFound: openAiError('not_found', '', model) });
    if (failure) return failure;
    const seconds = speechDurationSeconds(input.length, speed);
    return {
      kind: 'audio',
      model,
      audio: format === 'mp3' ? mp3Audio(seconds, OPENAI_RATE, OPENAI_MP3_KBPS) : pcmStream(seconds, OPENAI_RATE),
      headers: {
        'content-type': format === 'mp3' ? 'audio/mpeg' : 'audio/pcm',
        'x-simulator-characters': String(input.length),
        'x-simulator-reference-audio': String(references.audio),
        'x-simulator-reference-images': String(references.images),
      },
    };
  },
  methodNotAllowed(method) {
    return { status: 405, body: { error: { message: `Method ${method} not allowed; use POST.`, type: 'invalid_request_error', param: null, code: null } } };
  },
};

// ---- ElevenLabs -------------------------------------------------------------------------------

const ELEVENLABS_MAX_TEXT = 5000;
const ELEVENLABS_DEFAULT_FORMAT = 'mp3_44100_128';
const ELEVENLABS_MP3_RATES: ReadonlySet<number> = new Set([22050, 44100]);
const ELEVENLABS_PCM_RATES: ReadonlySet<number> = new Set([16000, 22050, 24000, 44100]);

function elevenLabsError(status: number, code: string, message: string): ErrorReply {
  return { status, body: { detail: { status: code, message } } };
}

function elevenLabsInvalid(code: string, message: string): SpeechReply {
  return { kind: 'error', ...elevenLabsError(422, code, message), delayed: false };
}

type OutputFormat = { format: 'mp3'; rate: number; kbps: number } | { format: 'pcm'; rate: number };

function outputFormat(value: string): OutputFormat | undefined {
  const mp3 = /^mp3_(\d+)_(\d+)$/.exec(value);
  if (mp3) {
    const rate = Number(mp3[1]);
    const kbps = Number(mp3[2]);
    return ELEVENLABS_MP3_RATES.has(rate) && mp3BitrateAllowed(rate, kbps) ? { format: 'mp3', rate, kbps } : undefined;
  }
  const pcm = /^pcm_(\d+)$/.exec(value);
  if (pcm && ELEVENLABS_PCM_RATES.has(Number(pcm[1]))) return { format: 'pcm', rate: Number(pcm[1]) };
  return undefined;
}

/** POST /v1/text-to-speech/{voice_id}/stream?output_format=mp3_<rate>_<kbps>|pcm_<rate>. */
export const elevenLabsSpeech: SpeechApi = {
  answer(parsed, query) {
    const requested = new URLSearchParams(query).get('output_format') ?? ELEVENLABS_DEFAULT_FORMAT;
    const output = outputFormat(requested);
    if (!output) return elevenLabsInvalid('invalid_output_format', `Invalid output_format '${requested}': the simulator makes mp3_22050_<kbps>, mp3_44100_<kbps> and pcm_16000, pcm_22050, pcm_24000, pcm_44100.`);
    if (!parsed) return elevenLabsInvalid('invalid_json', 'The request body is not valid JSON.');
    const body = parsed.value;
    if (!isObject(body)) return elevenLabsInvalid('invalid_json', 'The request body must be a JSON object.');
    const { text, model_id: model } = body;
    if (typeof text !== 'string' || text === '') return elevenLabsInvalid('invalid_text', "'text' must be a non-empty string.");
    if (text.length > ELEVENLABS_MAX_TEXT) return elevenLabsInvalid('max_character_limit_exceeded', `The text is ${text.length} characters long; the limit is ${ELEVENLABS_MAX_TEXT}.`);
    if (typeof model !== 'string' || model === '') return elevenLabsInvalid('invalid_model_id', "'model_id' must be a non-empty string.");
    const settings = body.voice_settings;
    if (settings !== undefined && settings !== null && !isObject(settings)) return elevenLabsInvalid('invalid_voice_settings', "'voice_settings' must be an object.");
    const speed = (settings ? settings.speed : undefined) ?? 1;
    if (typeof speed !== 'number' || speed < 0.7 || speed > 1.2) return elevenLabsInvalid('invalid_voice_settings', "'voice_settings.speed' must be a number from 0.7 to 1.2.");
    const failure = scripted(model, {
      rateLimit: elevenLabsError(429, 'too_many_concurrent_requests', 'Too many concurrent requests. Please try again in 1s.'),
      server: elevenLabsError(500, 'internal_server_error', 'An internal server error occurred.'),
      notFound: elevenLabsError(404, 'model_not_found', `A model with model ID ${model} does not exist.`),
    });
    if (failure) return failure;
    const seconds = speechDurationSeconds(text.length, speed);
    return {
      kind: 'audio',
      model,
      audio: output.format === 'mp3' ? mp3Audio(seconds, output.rate, output.kbps) : pcmStream(seconds, output.rate),
      headers: { 'content-type': output.format === 'mp3' ? 'audio/mpeg' : 'audio/pcm', 'x-simulator-characters': String(text.length) },
    };
  },
  methodNotAllowed(method) {
    return elevenLabsError(405, 'method_not_allowed', `Method ${method} not allowed; use POST.`);
  },
};

// ---- streaming --------------------------------------------------------------------------------

/**
 * Send `audio` with status 200 and `headers`: after `firstByteDelayMs` the headers and the first chunk,
 * then one chunk every `chunkDelayMs` (0: every chunk in this tick, corked into one writev). When the
 * client goes first, the pending timer is cleared. `done` runs once, when the response closes:
 * `completed` when the last byte was handed to the socket, `bytes` the bytes written until then.
 */
export function streamSpeech(
  res: ServerResponse,
  audio: SpeechAudio,
  headers: Record<string, string>,
  firstByteDelayMs: number,
  chunkDelayMs: number,
  done?: (completed: boolean, bytes: number) => void,
): void {
  if (res.destroyed) {
    done?.(false, 0);
    return;
  }
  let index = 0;
  let bytes = 0;
  let finished = false;
  let timer: NodeJS.Timeout | undefined;
  res.once('finish', () => {
    finished = true;
  });
  res.once('close', () => {
    clearTimeout(timer);
    timer = undefined;
    done?.(finished, bytes);
  });
  const next = (): Buffer => {
    const chunk = audio.chunk(index++);
    bytes += chunk.length;
    return chunk;
  };
  const tick = () => {
    timer = undefined;
    if (res.destroyed) return;
    const chunk = next();
    if (index < audio.chunks) {
      res.write(chunk);
      timer = setTimeout(tick, chunkDelayMs);
    } else res.end(chunk);
  };
  const start = () => {
    timer = undefined;
    if (res.destroyed) return;
    res.writeHead(200, headers);
    if (audio.chunks === 0) res.end();
    else if (chunkDelayMs === 0 || audio.chunks === 1) {
      const chunks: Buffer[] = [];
      while (index < audio.chunks) chunks.push(next());
      writeCorked(res, chunks);
    } else tick();
  };
  if (firstByteDelayMs > 0) timer = setTimeout(start, firstByteDelayMs);
  else start();
}
