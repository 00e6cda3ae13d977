// The simulator's text-to-speech formats (OpenAI /v1/audio/speech, ElevenLabs /v1/text-to-speech/{voice}/stream)
// seen through `fetch`, the audio checked frame by frame (test/support/mp3.ts), and the audio writers and the
// frame parser on their own.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startSimulator, type SpeechEvent, type Simulator } from '../../bin/simulator/server.js';
import { mp3BitrateAllowed, mp3Frames, pcmAudio, speechDurationSeconds } from '../../bin/simulator/audio.js';
import { parseMp3, pcmSeconds } from '../support/mp3.js';

type Body = Record<string, any>;

let sim: Simulator;
/** chunkDelayMs 20, firstByteDelayMs 30, watched through onSpeech and onRequest. */
let slow: Simulator;
const speechEvents: SpeechEvent[] = [];
const requests: Array<{ path: string; body: unknown }> = [];

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
  slow = await startSimulator({
    port: 0,
    chunkDelayMs: 20,
    firstByteDelayMs: 30,
    onSpeech: (event) => speechEvents.push(event),
    onRequest: (path, body) => requests.push({ path, body }),
  });
});
afterAll(async () => {
  await sim.close();
  await slow.close();
});

const TEXT = 'Hello, simulator! Please say this sentence out loud.';
const OPENAI_FRAME_SECONDS = 576 / 24000;

function post(base: string, path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test', 'xi-api-key': 'xi-test' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal,
  });
}

const openAi = (body: Body, base = sim.url, signal?: AbortSignal) => post(base, '/v1/audio/speech', body, signal);
const elevenLabs = (body: Body, format?: string, base = sim.url) =>
  post(base, `/v1/text-to-speech/voice-123/stream${format === undefined ? '' : `?output_format=${format}`}`, body);

async function bytesOf(res: Response): Promise<Buffer> {
  return Buffer.from(await res.arrayBuffer());
}

async function until<T>(find: () => T | undefined, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('audio writers', () => {
  it('speechDurationSeconds: 60 ms a character, at least 250 ms, divided by the speed', () => {
    expect(speechDurationSeconds(100, 1)).toBeCloseTo(6, 10);
    expect(speechDurationSeconds(100, 2)).toBeCloseTo(3, 10);
    expect(speechDurationSeconds(1, 1)).toBe(0.25);
    expect(speechDurationSeconds(1, 0.25)).toBe(1);
  });

  it('pcmAudio: exactly round(duration × rate) 16-bit samples of a quiet tone', () => {
    const pcm = pcmAudio(1.2345, 22050);
    expect(pcm.length).toBe(2 * Math.round(1.2345 * 22050));
    const samples = Array.from({ length: pcm.length / 2 }, (_, i) => pcm.readInt16LE(i * 2));
    const peak = Math.max(...samples.map(Math.abs));
    expect(peak).toBeGreaterThan(2900);
    expect(peak).toBeLessThanOrEqual(3000);
    // 220 Hz: a sign change about every 1/440 s.
    let crossings = 0;
    for (let i = 1; i < samples.length; i++) if (samples[i - 1]! < 0 !== samples[i]! < 0) crossings++;
    expect(Math.abs(crossings - 440 * 1.2345)).toBeLessThan(3);
    // Copies of the cached second join seamlessly and a fresh buffer comes back each time.
    const twoSeconds = pcmAudio(2, 24000);
    expect(twoSeconds.subarray(48000, 96000).equals(twoSeconds.subarray(0, 48000))).toBe(true);
    twoSeconds.fill(0);
    expect(pcmAudio(1, 24000).some((byte) => byte !== 0)).toBe(true);
  });

  it('mp3Frames: MPEG-1 and MPEG-2 frames of the right length and count, decodable by the parser', () => {
    for (const [rate, kbps, samplesPerFrame, factor] of [
      [44100, 128, 1152, 144], [48000, 320, 1152, 144], [32000, 32, 1152, 144],
      [24000, 48, 576, 72], [22050, 32, 576, 72], [16000, 8, 576, 72],
    ] as const) {
      const frames = mp3Frames(2.5, rate, kbps);
      expect(frames.length).toBe(Math.ceil((2.5 * rate) / samplesPerFrame));
      const exact = (factor * kbps * 1000) / rate;
      for (const frame of frames) expect([Math.floor(exact), Math.floor(exact) + 1]).toContain(frame.length);
      const info = parseMp3(Buffer.concat(frames));
      expect(info).toMatchObject({ frames: frames.length, sampleRate: rate, channels: 1, bitrateKbps: [kbps], samples: frames.length * samplesPerFrame });
      // Header: MPEG-1 0xFB / MPEG-2 0xF3 (layer III, no CRC), mono.
      expect(frames[0]![1]).toBe(samplesPerFrame === 1152 ? 0xfb : 0xf3);
      expect(frames[0]![3]! >> 6).toBe(0b11);
      // Side information and main data all zeros.
      expect(frames.every((frame) => frame.subarray(4).every((byte) => byte === 0))).toBe(true);
    }
  });

  it('mp3Frames: the padding bit keeps the average frame length exact at 44100 and 22050 Hz', () => {
    for (const [rate, kbps, factor] of [[44100, 128, 144], [22050, 64, 72], [44100, 32, 144]] as const) {
      const frames = mp3Frames(30, rate, kbps);
      const exact = (factor * kbps * 1000) / rate;
      const total = frames.reduce((sum, frame) => sum + frame.length, 0);
      expect(Math.abs(total - frames.length * exact)).toBeLessThan(1);
      // The padding bit is set exactly on the longer frames.
      for (const frame of frames) expect((frame[2]! >> 1) & 1).toBe(frame.length - Math.floor(exact));
    }
    // 24000 Hz at 48 kbps is a whole 144 bytes: never padded.
    expect(mp3Frames(5, 24000, 48).every((frame) => frame.length === 144 && (frame[2]! & 0b10) === 0)).toBe(true);
  });

  it('mp3Frames throws on a rate or bitrate Layer III does not have', () => {
    expect(() => mp3Frames(1, 44100, 144)).toThrow(/144 kbps at 44100/);
    expect(() => mp3Frames(1, 44100, 8)).toThrow(/kbps/);
    expect(() => mp3Frames(1, 24000, 320)).toThrow(/320 kbps at 24000/);
    expect(() => mp3Frames(1, 96000, 128)).toThrow(/96000 Hz/);
    expect(() => mp3Frames(1, 44100, 0)).toThrow();
    expect(() => mp3Frames(-1, 44100, 128)).toThrow(/duration/);
    expect(mp3BitrateAllowed(44100, 320)).toBe(true);
    expect(mp3BitrateAllowed(22050, 160)).toBe(true);
    expect(mp3BitrateAllowed(22050, 192)).toBe(false);
    expect(mp3BitrateAllowed(44100, 144)).toBe(false);
    expect(mp3Frames(0, 44100, 128)).toEqual([]);
  });
});

describe('parseMp3 and pcmSeconds', () => {
  const stream = () => Buffer.concat(mp3Frames(1, 44100, 128));

  it('skips an ID3v2 tag at the start', () => {
    const tag = Buffer.alloc(10 + 300);
    tag.write('ID3', 0, 'latin1');
    tag[3] = 4;
    tag[8] = 300 >> 7;
    tag[9] = 300 & 0x7f;
    expect(parseMp3(Buffer.concat([tag, stream()])).frames).toBe(Math.ceil(44100 / 1152));
  });

  it('throws on a truncated last frame, naming its offset', () => {
    const bytes = stream();
    const frames = mp3Frames(1, 44100, 128);
    const lastOffset = bytes.length - frames[frames.length - 1]!.length;
    expect(() => parseMp3(bytes.subarray(0, bytes.length - 1))).toThrow(`Truncated frame at offset ${lastOffset}`);
    expect(() => parseMp3(bytes.subarray(0, lastOffset + 2))).toThrow(`Truncated frame header at offset ${lastOffset}`);
  });

  it('throws on garbage between frames and at the start', () => {
    const frames = mp3Frames(1, 24000, 48);
    const withGarbage = Buffer.concat([...frames.slice(0, 3), Buffer.from([0, 1, 2]), ...frames.slice(3)]);
    expect(() => parseMp3(withGarbage)).toThrow(`No frame sync at offset ${3 * 144}`);
    expect(() => parseMp3(Buffer.concat([Buffer.from([0xff]), ...frames]))).toThrow(/offset 0/);
    expect(() => parseMp3(Buffer.alloc(0))).toThrow(/No MPEG audio frames/);
  });

  it('throws on bad headers', () => {
    const frame = () => Buffer.from(mp3Frames(0.01, 44100, 128)[0]!);
    const layerII = frame();
    layerII[1] = (layerII[1]! & ~0b110) | 0b100;
    expect(() => parseMp3(layerII)).toThrow('Not Layer III at offset 0');
    const reserved = frame();
    reserved[1] = (reserved[1]! & ~0b11000) | 0b01000;
    expect(() => parseMp3(reserved)).toThrow('Reserved MPEG version at offset 0');
    const freeFormat = frame();
    freeFormat[2] = freeFormat[2]! & 0x0f;
    expect(() => parseMp3(freeFormat)).toThrow('Bitrate index 0 at offset 0');
    const badBitrate = frame();
    badBitrate[2] = badBitrate[2]! | 0xf0;
    expect(() => parseMp3(badBitrate)).toThrow('Bitrate index 15 at offset 0');
    const badRate = frame();
    badRate[2] = badRate[2]! | 0b1100;
    expect(() => parseMp3(badRate)).toThrow('Reserved sample-rate index at offset 0');
    const mixed = Buffer.concat([...mp3Frames(0.1, 44100, 128), ...mp3Frames(0.1, 48000, 128)]);
    expect(() => parseMp3(mixed)).toThrow(/changes the stream to 48000 Hz/);
  });

  it('pcmSeconds', () => {
    expect(pcmSeconds(Buffer.alloc(48000), 24000)).toBe(1);
    expect(() => pcmSeconds(Buffer.alloc(3), 24000)).toThrow(/3 bytes/);
  });
});

describe('OpenAI POST /v1/audio/speech', () => {
  it('streams MP3 (MPEG-2 Layer III, 24 kHz, 48 kbps, mono) as long as the input takes to say', async () => {
    const res = await openAi({ model: 'simulator/tts-echo', input: TEXT, voice: 'alloy' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    expect(res.headers.get('content-length')).toBeNull();
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    expect(res.headers.get('x-simulator-characters')).toBe(String(TEXT.length));
    expect(res.headers.get('x-simulator-reference-audio')).toBe('0');
    expect(res.headers.get('x-simulator-reference-images')).toBe('0');
    const info = parseMp3(await bytesOf(res));
    expect(info).toMatchObject({ sampleRate: 24000, channels: 1, bitrateKbps: [48] });
    const expected = speechDurationSeconds(TEXT.length, 1);
    expect(info.durationSeconds).toBeGreaterThanOrEqual(expected);
    expect(info.durationSeconds - expected).toBeLessThan(OPENAI_FRAME_SECONDS);
  });

  it('speed 2 halves the audio', async () => {
    const input = 'x'.repeat(400);
    const normal = parseMp3(await bytesOf(await openAi({ model: 'tts-echo', input, voice: 'alloy', response_format: 'mp3' })));
    const fast = parseMp3(await bytesOf(await openAi({ model: 'tts-echo', input, voice: 'alloy', speed: 2 })));
    expect(Math.abs(fast.durationSeconds - speechDurationSeconds(400, 2))).toBeLessThan(OPENAI_FRAME_SECONDS);
    expect(Math.abs(fast.durationSeconds - normal.durationSeconds / 2)).toBeLessThan(OPENAI_FRAME_SECONDS);
  });

  it('streams PCM (24 kHz s16le mono): exactly round(duration × 24000) samples', async () => {
    const res = await openAi({ model: 'tts-echo', input: TEXT, voice: 'nova', response_format: 'pcm', speed: 1.5 });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/pcm');
    const pcm = await bytesOf(res);
    expect(pcm.length).toBe(2 * Math.round(speechDurationSeconds(TEXT.length, 1.5) * 24000));
    expect(pcmSeconds(pcm, 24000)).toBeCloseTo(speechDurationSeconds(TEXT.length, 1.5), 4);
    expect(pcm.equals(pcmAudio(speechDurationSeconds(TEXT.length, 1.5), 24000))).toBe(true);
  });

  it('counts input_references in the reply headers; characters in UTF-16 units', async () => {
    const input = 'Héllo 👋 world';
    const res = await openAi({
      model: 'tts-echo',
      input,
      voice: 'clone',
      instructions: 'Speak slowly.',
      input_references: [
        { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
        { type: 'text', text: 'Transcript of the sample.' },
        { type: 'input_audio', input_audio: { data: 'SUQz' } },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-simulator-reference-audio')).toBe('2');
    expect(res.headers.get('x-simulator-reference-images')).toBe('1');
    expect(res.headers.get('x-simulator-characters')).toBe(String(input.length));
    await bytesOf(res);
  });

  it.each([
    ['missing input', { voice: 'alloy' }, 'input'],
    ['empty input', { input: '', voice: 'alloy' }, 'input'],
    ['input over 4096 characters', { input: 'x'.repeat(4097), voice: 'alloy' }, 'input'],
    ['missing voice', { input: 'hi' }, 'voice'],
    ['empty voice', { input: 'hi', voice: '' }, 'voice'],
    ['unknown response_format', { input: 'hi', voice: 'alloy', response_format: 'ogg' }, 'response_format'],
    ['speed below 0.25', { input: 'hi', voice: 'alloy', speed: 0.2 }, 'speed'],
    ['speed above 4', { input: 'hi', voice: 'alloy', speed: 4.5 }, 'speed'],
    ['speed as a string', { input: 'hi', voice: 'alloy', speed: '1' }, 'speed'],
    ['input_references not an array', { input: 'hi', voice: 'alloy', input_references: {} }, 'input_references'],
    ['input_references part without data', { input: 'hi', voice: 'alloy', input_references: [{ type: 'input_audio', input_audio: {} }] }, 'input_references[0].input_audio.data'],
    ['input_references unknown part', { input: 'hi', voice: 'alloy', input_references: [{ type: 'video_url' }] }, 'input_references[0].type'],
  ])('400 for %s', async (_name, body, param) => {
    const res = await openAi({ model: 'tts-echo', ...body });
    expect(res.status).toBe(400);
    const error = ((await res.json()) as Body).error;
    expect(error).toMatchObject({ type: 'invalid_request_error', param });
    expect(typeof error.message).toBe('string');
    expect('code' in error).toBe(true);
  });

  it.each(['opus', 'aac', 'flac', 'wav'])('400 "not supported by the simulator" for response_format %s', async (format) => {
    const res = await openAi({ model: 'tts-echo', input: 'hi', voice: 'alloy', response_format: format });
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as Body;
    expect(error.param).toBe('response_format');
    expect(error.message).toContain('not supported by the simulator');
  });

  it('400 for a body that is not JSON or not an object; 405 for GET', async () => {
    const notJson = await post(sim.url, '/v1/audio/speech', '{nope');
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as Body).error.type).toBe('invalid_request_error');
    const array = await post(sim.url, '/v1/audio/speech', '[]');
    expect(array.status).toBe(400);
    await array.arrayBuffer();
    const get = await fetch(`${sim.url}/v1/audio/speech`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect(((await get.json()) as Body).error.type).toBe('invalid_request_error');
  });

  it('the scripted models: 404 unknown, 429 with retry-after, 500, timeout never answers', async () => {
    const unknown = await openAi({ model: 'nope-tts', input: 'hi', voice: 'alloy' });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as Body).error).toMatchObject({ code: 'model_not_found', type: 'invalid_request_error' });
    const limited = await openAi({ model: 'simulator/error-429', input: 'hi', voice: 'alloy' });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(((await limited.json()) as Body).error.code).toBe('rate_limit_exceeded');
    const failed = await openAi({ model: 'error-500', input: 'hi', voice: 'alloy' });
    expect(failed.status).toBe(500);
    expect(((await failed.json()) as Body).error.type).toBe('server_error');
    await expect(openAi({ model: 'timeout', input: 'hi', voice: 'alloy' }, sim.url, AbortSignal.timeout(200))).rejects.toThrow();
  });
});

describe('ElevenLabs POST /v1/text-to-speech/{voice_id}/stream', () => {
  it('mp3_44100_128 by default: MPEG-1 frames, padded to an average of 417.96 bytes', async () => {
    const text = 'y'.repeat(500);
    const res = await elevenLabs({ text, model_id: 'eleven_multilingual_v2/tts-echo' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    expect(res.headers.get('content-length')).toBeNull();
    expect(res.headers.get('x-simulator-characters')).toBe('500');
    const bytes = await bytesOf(res);
    const info = parseMp3(bytes);
    expect(info).toMatchObject({ sampleRate: 44100, channels: 1, bitrateKbps: [128] });
    expect(info.samples / info.frames).toBe(1152);
    expect(bytes[1]).toBe(0xfb);
    expect(Math.abs(bytes.length / info.frames - 417.96)).toBeLessThan(1);
    expect(Math.abs(bytes.length / info.frames - (144 * 128000) / 44100)).toBeLessThan(0.01);
    const expected = speechDurationSeconds(500, 1);
    expect(info.durationSeconds).toBeGreaterThanOrEqual(expected);
    expect(info.durationSeconds - expected).toBeLessThan(1152 / 44100);
  });

  it('mp3_22050_32 (MPEG-2) and voice_settings.speed', async () => {
    const res = await elevenLabs({ text: TEXT, model_id: 'tts-echo', voice_settings: { speed: 1.2, stability: 0.5, similarity_boost: 0.75, style: 0, use_speaker_boost: true } }, 'mp3_22050_32');
    expect(res.status).toBe(200);
    const info = parseMp3(await bytesOf(res));
    expect(info).toMatchObject({ sampleRate: 22050, bitrateKbps: [32] });
    expect(Math.abs(info.durationSeconds - speechDurationSeconds(TEXT.length, 1.2))).toBeLessThan(576 / 22050);
  });

  it.each([16000, 22050, 24000, 44100])('pcm_%i', async (rate) => {
    const res = await elevenLabs({ text: TEXT, model_id: 'tts-echo' }, `pcm_${rate}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/pcm');
    expect((await bytesOf(res)).length).toBe(2 * Math.round(speechDurationSeconds(TEXT.length, 1) * rate));
  });

  it.each(['mp3_24000_48', 'mp3_44100_144', 'mp3_22050_192', 'pcm_8000', 'ulaw_8000', 'opus_48000_64', ''])('422 for output_format %j', async (format) => {
    const res = await elevenLabs({ text: 'hi', model_id: 'tts-echo' }, format);
    expect(res.status).toBe(422);
    expect(((await res.json()) as Body).detail).toMatchObject({ status: 'invalid_output_format', message: expect.any(String) });
  });

  it.each([
    ['missing text', { model_id: 'tts-echo' }, 'invalid_text'],
    ['empty text', { text: '', model_id: 'tts-echo' }, 'invalid_text'],
    ['text over 5000 characters', { text: 'z'.repeat(5001), model_id: 'tts-echo' }, 'max_character_limit_exceeded'],
    ['missing model_id', { text: 'hi' }, 'invalid_model_id'],
    ['speed below 0.7', { text: 'hi', model_id: 'tts-echo', voice_settings: { speed: 0.5 } }, 'invalid_voice_settings'],
    ['speed above 1.2', { text: 'hi', model_id: 'tts-echo', voice_settings: { speed: 1.3 } }, 'invalid_voice_settings'],
    ['voice_settings not an object', { text: 'hi', model_id: 'tts-echo', voice_settings: 'fast' }, 'invalid_voice_settings'],
  ])('422 for %s', async (_name, body, status) => {
    const res = await elevenLabs(body);
    expect(res.status).toBe(422);
    expect(((await res.json()) as Body).detail).toMatchObject({ status, message: expect.any(String) });
  });

  it('the scripted models, a body that is not JSON, and 405', async () => {
    const unknown = await elevenLabs({ text: 'hi', model_id: 'eleven_turbo_v2_5' });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as Body).detail.status).toBe('model_not_found');
    const limited = await elevenLabs({ text: 'hi', model_id: 'error-429' });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(((await limited.json()) as Body).detail.status).toEqual(expect.any(String));
    const failed = await elevenLabs({ text: 'hi', model_id: 'error-500' });
    expect(failed.status).toBe(500);
    expect(((await failed.json()) as Body).detail.status).toBe('internal_server_error');
    const notJson = await post(sim.url, '/v1/text-to-speech/v/stream', 'nope');
    expect(notJson.status).toBe(422);
    expect(((await notJson.json()) as Body).detail.status).toBe('invalid_json');
    const get = await fetch(`${sim.url}/v1/text-to-speech/v/stream`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect(((await get.json()) as Body).detail.status).toBe('method_not_allowed');
  });
});

describe('streaming, onSpeech and onRequest', () => {
  it('sends about 100 ms of whole frames per chunk, chunkDelayMs apart, and reports the completed reply', async () => {
    const started = Date.now();
    const res = await openAi({ model: 'tts-echo', input: 'Hello there', voice: 'alloy' }, slow.url);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    const reader = res.body!.getReader();
    const chunks: Buffer[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(Buffer.from(value));
    }
    const bytes = Buffer.concat(chunks);
    const info = parseMp3(bytes);
    // 11 characters: 0.66 s = 28 frames of 24 ms, 4 frames (96 ms) a chunk.
    expect(info.frames).toBe(28);
    expect(chunks.length).toBeGreaterThan(1);
    expect(parseMp3(chunks[0]!).frames).toBe(4);
    const event = await until(() => speechEvents.find((e) => e.path === '/v1/audio/speech' && e.bytes === bytes.length));
    expect(event).toEqual({ path: '/v1/audio/speech', model: 'tts-echo', format: 'mp3', completed: true, bytes: bytes.length });
  });

  it('stops when the client goes away mid-stream, and reports it', async () => {
    speechEvents.length = 0;
    const text = 'w'.repeat(2000);
    const full = 2 * Math.round(speechDurationSeconds(text.length, 1) * 24000);
    const controller = new AbortController();
    const res = await post(slow.url, '/v1/text-to-speech/v/stream?output_format=pcm_24000', { text, model_id: 'tts-echo' }, controller.signal);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(first.value!.length).toBe(2 * 2400);
    controller.abort();
    const event = await until(() => speechEvents[0]);
    expect(event).toMatchObject({ path: '/v1/text-to-speech/v/stream', model: 'tts-echo', format: 'pcm', completed: false });
    expect(event.bytes).toBeGreaterThan(0);
    expect(event.bytes).toBeLessThan(full / 10);
    // No timer left writing: the event stays the only one.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(speechEvents).toHaveLength(1);
  });

  it('a client gone during the first-byte delay is reported with 0 bytes', async () => {
    // The client goes as soon as the simulator has its request, well inside a first-byte delay no busy
    // machine outlasts (a client timing out after a few ms raced a 30 ms delay, and lost under load).
    const events: SpeechEvent[] = [];
    const controller = new AbortController();
    const waiting = await startSimulator({ port: 0, firstByteDelayMs: 10_000, onSpeech: (event) => events.push(event), onRequest: () => controller.abort() });
    try {
      await expect(openAi({ model: 'tts-echo', input: 'hi', voice: 'alloy' }, waiting.url, controller.signal)).rejects.toThrow();
      const event = await until(() => events[0]);
      expect(event).toMatchObject({ completed: false, bytes: 0, format: 'mp3' });
    } finally {
      await waiting.close();
    }
  });

  it('close() ends a speech stream in progress', async () => {
    const events: SpeechEvent[] = [];
    const own = await startSimulator({ port: 0, chunkDelayMs: 50, onSpeech: (event) => events.push(event) });
    const res = await openAi({ model: 'tts-echo', input: 'v'.repeat(1000), voice: 'alloy' }, own.url);
    const reader = res.body!.getReader();
    await reader.read();
    await own.close();
    await expect((async () => {
      for (;;) if ((await reader.read()).done) return;
    })()).rejects.toThrow();
    expect(await until(() => events[0])).toMatchObject({ completed: false });
  });

  it('onRequest sees every parsed JSON body: chat, embeddings and speech', async () => {
    requests.length = 0;
    const speech = { model: 'tts-echo', input: 'hi', voice: 'alloy', response_format: 'pcm' };
    await bytesOf(await openAi(speech, slow.url));
    const eleven = { text: 'hi', model_id: 'tts-echo' };
    await bytesOf(await elevenLabs(eleven, 'pcm_16000', slow.url));
    const chat = { model: 'echo', messages: [{ role: 'user', content: 'hi' }] };
    expect((await post(slow.url, '/v1/chat/completions', chat)).status).toBe(200);
    const embed = { model: 'embed', input: 'hi' };
    expect((await post(slow.url, '/v1/embeddings', embed)).status).toBe(200);
    await post(slow.url, '/v1/audio/speech', '{not json');
    expect(requests).toEqual([
      { path: '/v1/audio/speech', body: speech },
      { path: '/v1/text-to-speech/voice-123/stream', body: eleven },
      { path: '/v1/chat/completions', body: chat },
      { path: '/v1/embeddings', body: embed },
    ]);
  });
});
