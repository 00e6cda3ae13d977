// POST /audio/speech through the real inference handler, DynamoDB Local and the simulator's two speech wire
// formats (OpenAI, ElevenLabs): audio that decodes, per-character cost in the headers and the record, the
// reference-content rules one case each, speed, provider options, and a client that leaves mid-audio.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Readable } from 'node:stream';
import { startSimulator, type Simulator, type SpeechEvent } from '../../bin/simulator/server.js';
import { speechDurationSeconds } from '../../bin/simulator/audio.js';
import { parseMp3, pcmSeconds } from '../support/mp3.js';
import { createTestStore, type TestStore } from '../support/store.js';
import { createTenant } from '../support/tenants.js';
import { handleInference, manage, readBody, type Json } from '../support/handler-calls.js';
import { httpEvent } from '../support/events.js';
import { waitFor } from '../support/wait.js';

let sim: Simulator;
let store: TestStore;
let key: string;
const upstream: Array<{ path: string; body: Json }> = [];
const spoken: SpeechEvent[] = [];
const CLIP = `data:audio/wav;base64,${Buffer.from('RIFF0000WAVEfmt ').toString('base64')}`;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, chunkDelayMs: 5, onRequest: (path, body) => upstream.push({ path, body: body as Json }), onSpeech: (event) => spoken.push(event) });
  store = await createTestStore({ SIMULATOR_URL: sim.url });
  key = (await (await createTenant(store.deps)).addKey('standard')).text;
});
afterAll(async () => {
  await store.drop();
  await sim.close();
});

async function speak(body: Json): Promise<{ status: number; headers: Record<string, string>; audio: Buffer; json?: Json }> {
  const reply = await handleInference(httpEvent({ method: 'POST', path: '/api/v1/audio/speech', key, body }), store.deps);
  if (reply.statusCode !== 200) return { status: reply.statusCode, headers: reply.headers, audio: Buffer.alloc(0), json: JSON.parse(await readBody(reply.body)) as Json };
  const chunks: Buffer[] = [];
  for await (const chunk of reply.body as Readable) chunks.push(Buffer.from(chunk as Uint8Array));
  return { status: 200, headers: reply.headers, audio: Buffer.concat(chunks) };
}

const lastUpstream = (marker: string): Json => {
  const found = upstream.filter((request) => JSON.stringify(request.body).includes(marker));
  expect(found).toHaveLength(1);
  return found[0]!.body;
};

describe('audio', () => {
  it('answers MP3 that decodes, as long as the text implies, with its per-character cost in the headers and the record', async () => {
    const input = 'The quick brown fox jumps over the lazy dog.';
    const reply = await speak({ model: 'simulator/tts', input, voice: 'nova', response_format: 'mp3' });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('audio/mpeg');
    const mp3 = parseMp3(reply.audio);
    expect(mp3.sampleRate).toBe(24_000);
    // Within one frame (576 samples at 24 kHz) of what the text implies.
    expect(Math.abs(mp3.durationSeconds - speechDurationSeconds(input.length, 1))).toBeLessThanOrEqual(576 / 24_000);
    // $15 per million characters.
    expect(reply.headers['x-usage-characters']).toBe(String(input.length));
    expect(Number(reply.headers['x-usage-cost'])).toBeCloseTo(input.length * 0.000015, 12);
    await store.converge();
    const record = await manage(store.deps, key, 'GET', '/generation', undefined, { id: reply.headers['x-generation-id']! });
    expect(record.status).toBe(200);
    expect(record.json.data).toMatchObject({ model: 'simulator/tts', tokens_prompt: input.length, total_cost: Number(reply.headers['x-usage-cost']), streamed: true });
  });

  it('answers PCM of exactly the length the sample rate gives, and honours speed', async () => {
    const input = 'Twenty-four thousand samples a second.';
    const normal = await speak({ model: 'simulator/tts', input, voice: 'alloy', response_format: 'pcm' });
    expect(normal.status).toBe(200);
    expect(normal.headers['content-type']).toBe('audio/pcm');
    expect(normal.headers['x-audio-sample-rate']).toBe('24000');
    expect(normal.audio.length).toBe(2 * Math.round(speechDurationSeconds(input.length, 1) * 24_000));
    const fast = await speak({ model: 'simulator/tts', input, voice: 'alloy', response_format: 'pcm', speed: 2 });
    expect(pcmSeconds(fast.audio, 24_000)).toBeCloseTo(pcmSeconds(normal.audio, 24_000) / 2, 3);
  });

  it('speaks through ElevenLabs\' wire format too (MP3 at 44.1 kHz, PCM at 24 kHz, speed within its range)', async () => {
    const mp3 = await speak({ model: 'simulator/tts-elevenlabs', input: 'eleven-marker one', response_format: 'mp3', speed: 1.2 });
    expect(mp3.status).toBe(200);
    expect(parseMp3(mp3.audio).sampleRate).toBe(44_100);
    expect(lastUpstream('eleven-marker one')).toEqual({ text: 'eleven-marker one', model_id: 'tts-echo', voice_settings: { speed: 1.2 } });
    const pcm = await speak({ model: 'simulator/tts-elevenlabs', input: 'eleven-marker two', response_format: 'pcm' });
    expect(pcm.audio.length).toBe(2 * Math.round(speechDurationSeconds('eleven-marker two'.length, 1) * 24_000));
    const tooFast = await speak({ model: 'simulator/tts-elevenlabs', input: 'x', speed: 2 });
    expect(tooFast.status).toBe(400);
    expect(tooFast.json!.error.message).toMatch(/cannot play at speed 2 \(its range: 0\.7-1\.2\)/);
    // ElevenLabs takes any voice id of the account.
    const ownVoice = await speak({ model: 'simulator/tts-elevenlabs', input: 'eleven-marker three', voice: 'my-cloned-voice-id', response_format: 'pcm' });
    expect(ownVoice.status).toBe(200);
    expect(upstream.find((request) => JSON.stringify(request.body).includes('eleven-marker three'))!.path).toBe('/v1/text-to-speech/my-cloned-voice-id/stream');
    // But a voice that is a path segment (.., .) or anything but an id is refused, and nothing goes upstream.
    const before = upstream.length;
    for (const voice of ['..', '.', 'a/b', 'x y']) {
      const refused = await speak({ model: 'simulator/tts-elevenlabs', input: 'eleven-marker four', voice });
      expect(refused.status).toBe(400);
      expect(refused.json!.error.message).toContain('is not an ElevenLabs voice id');
    }
    expect(upstream.length).toBe(before);
  });

  it('refuses a non-default speed for a model without speed control, and takes speed 1', async () => {
    const refused = await speak({ model: 'simulator/tts-fixed-speed', input: 'x', speed: 1.5 });
    expect(refused.status).toBe(400);
    expect(refused.json!.error.message).toMatch(/has no speed control/);
    expect((await speak({ model: 'simulator/tts-fixed-speed', input: 'x', speed: 1 })).status).toBe(200);
  });

  it('sends neither session_id nor user upstream, and only the serving provider\'s options', async () => {
    const reply = await speak({
      model: 'simulator/tts', input: 'options-marker', voice: 'echo', response_format: 'mp3', session_id: 'sess-1', user: 'end-user-7',
      provider: { options: { simulator: { instructions: 'whisper' }, elevenlabs: { stability: 0.2 } } },
    });
    expect(reply.status).toBe(200);
    expect(lastUpstream('options-marker')).toEqual({ model: 'tts-echo', input: 'options-marker', voice: 'echo', response_format: 'mp3', instructions: 'whisper' });
  });

  it('sends instructions to OpenAI\'s speech endpoints only', async () => {
    await speak({ model: 'simulator/tts', input: 'instructions-marker', voice: 'echo', response_format: 'mp3', instructions: 'Speak softly.' });
    expect(lastUpstream('instructions-marker').instructions).toBe('Speak softly.');
    const refused = await speak({ model: 'simulator/tts-elevenlabs', input: 'x', instructions: 'Speak softly.' });
    expect(refused.status).toBe(400);
    expect(refused.json!.error.message).toMatch(/takes no instructions/);
  });

  it('delivers the whole audio to a client that reads slowly (the provider is read only as fast as the client takes it)', async () => {
    const input = 'slow-reader '.repeat(20);
    const reply = await handleInference(httpEvent({ method: 'POST', path: '/api/v1/audio/speech', key, body: { model: 'simulator/tts', input, response_format: 'pcm' } }), store.deps);
    const body = reply.body as Readable;
    let bytes = 0;
    for await (const chunk of body) {
      bytes += (chunk as Uint8Array).length;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(bytes).toBe(2 * Math.round(speechDurationSeconds(input.length, 1) * 24_000));
  });

  it('uses the endpoint\'s first voice when none is named, and refuses a voice it does not have', async () => {
    await speak({ model: 'simulator/tts', input: 'voice-marker', response_format: 'mp3' });
    expect(lastUpstream('voice-marker').voice).toBe('alloy');
    const unknown = await speak({ model: 'simulator/tts', input: 'x', voice: 'nobody' });
    expect(unknown.status).toBe(400);
    expect(unknown.json!.error.message).toMatch(/has no voice "nobody" \(its voices: alloy, echo, nova, shimmer/);
    const long = await speak({ model: 'simulator/tts', input: 'x'.repeat(4097) });
    expect(long.status).toBe(400);
    expect(long.json!.error.message).toMatch(/takes at most 4096 characters of input, got 4097/);
  });

  it('stops the upstream call when the client goes away mid-audio, and charges the characters sent', async () => {
    const input = 'a'.repeat(400);
    const reply = await handleInference(httpEvent({ method: 'POST', path: '/api/v1/audio/speech', key, body: { model: 'simulator/tts', input, response_format: 'pcm' } }), store.deps);
    expect(reply.statusCode).toBe(200);
    const body = reply.body as Readable;
    await new Promise<void>((resolve) => body.once('data', () => resolve()));
    body.destroy();
    await waitFor(() => spoken.some((event) => event.format === 'pcm' && !event.completed));
    const cut = spoken.find((event) => !event.completed)!;
    expect(cut.bytes).toBeLessThan(2 * Math.round(speechDurationSeconds(input.length, 1) * 24_000));
    await store.converge();
    const record = await manage(store.deps, key, 'GET', '/generation', undefined, { id: reply.headers['x-generation-id']! });
    expect(record.json.data).toMatchObject({ tokens_prompt: 400 });
  });

  it('holds exactly the characters\' price, so credits that cover it suffice, and refuses without talk of output tokens', async () => {
    // $0.0008 of credits: 50 characters cost $0.00075 ($15 per million), 60 cost $0.0009.
    const poor = await (await createTenant(store.deps, 'organization', 'Few credits', 800_000n)).addKey('standard');
    const say = (input: string) => handleInference(httpEvent({ method: 'POST', path: '/api/v1/audio/speech', key: poor.text, body: { model: 'simulator/tts', input, response_format: 'pcm' } }), store.deps);
    const fits = await say('b'.repeat(50));
    expect(fits.statusCode).toBe(200);
    await readBody(fits.body as Readable);
    const refused = await say('c'.repeat(60));
    expect(refused.statusCode).toBe(402);
    const error = JSON.parse(String(refused.body)).error;
    expect(error.message).toMatch(/^This request requires more credits: it can cost up to \$0\.0009\b/);
    expect(error.message).not.toMatch(/token/);
    expect(error.metadata).not.toHaveProperty('requested_tokens');
  });

  it('answers a failing provider with an error envelope, and a model of the wrong kind with a 400', async () => {
    const failed = await speak({ model: 'simulator/tts-error-500', input: 'x' });
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(failed.json!.error.code).toBe(failed.status);
    const chatModel = await speak({ model: 'simulator/echo', input: 'x' });
    expect(chatModel.status).toBe(400);
    expect(chatModel.json!.error.message).toMatch(/not a text-to-speech model/);
    const chat = await handleInference(httpEvent({ method: 'POST', path: '/api/v1/chat/completions', key, body: { model: 'simulator/tts', messages: [{ role: 'user', content: 'x' }] } }), store.deps);
    expect(chat.statusCode).toBe(400);
    expect(JSON.parse(await readBody(chat.body)).error.message).toMatch(/is a text-to-speech model; call POST \/audio\/speech/);
    const empty = await speak({ model: 'simulator/tts', input: '' });
    expect(empty.status).toBe(400);
    expect(empty.json!.error.message).toMatch(/input/);
  });
});

describe('the catalog', () => {
  it('lists the speech models under output_modalities=audio, with their voices and what a request may set', async () => {
    const listed = await manage(store.deps, key, 'GET', '/models', undefined, { output_modalities: 'audio' });
    const ids = listed.json.data.map((model: Json) => model.id);
    expect(ids).toEqual(expect.arrayContaining(['simulator/tts', 'simulator/tts-clone', 'simulator/tts-elevenlabs']));
    expect(ids).not.toContain('simulator/echo');
    const tts = listed.json.data.find((model: Json) => model.id === 'simulator/tts');
    expect(tts).toMatchObject({ architecture: { input_modalities: ['text'], output_modalities: ['audio'] }, supported_voices: ['alloy', 'echo', 'nova', 'shimmer'], pricing: { prompt: '0.000015' } });
    expect(tts.supported_parameters).toEqual(['response_format', 'speed', 'voice']);
    const fixed = listed.json.data.find((model: Json) => model.id === 'simulator/tts-fixed-speed');
    expect(fixed.supported_parameters).toEqual(['response_format', 'voice']);
    const speech = await manage(store.deps, key, 'GET', '/models', undefined, { output_modalities: 'speech' });
    expect(speech.json.data.map((model: Json) => model.id)).toEqual(ids);
    const all = await manage(store.deps, key, 'GET', '/models');
    expect(all.json.data.find((model: Json) => model.id === 'simulator/echo').supported_voices).toBeNull();
    const endpoints = await manage(store.deps, key, 'GET', '/models/simulator/tts-clone/endpoints');
    expect(endpoints.json.data.endpoints[0].supports_voice_cloning).toBe(true);
  });
});

describe('reference content', () => {
  const ok = async (model: string, references: Json[], marker: string) => {
    const reply = await speak({ model, input: marker, response_format: 'mp3', input_references: references });
    expect(reply.json).toBeUndefined();
    expect(reply.status).toBe(200);
    return lastUpstream(marker);
  };
  const refused = async (model: string, references: Json[], pattern: RegExp) => {
    const reply = await speak({ model, input: 'x', input_references: references });
    expect(reply.status).toBe(400);
    expect(reply.json!.error.message).toMatch(pattern);
  };
  const clip = { type: 'input_audio', input_audio: { data: CLIP, format: 'wav' } };
  const text = (words: string) => ({ type: 'text', text: words });
  const image = { type: 'image_url', image_url: { url: 'https://example.com/face.png' } };

  it('an empty array means no reference (any speech model)', async () => {
    expect((await ok('simulator/tts', [], 'ref-empty')).input_references).toBeUndefined();
  });
  it('one clip, alone or with its transcript after or before it, goes to a cloning endpoint as sent', async () => {
    expect((await ok('simulator/tts-clone', [clip], 'ref-one')).input_references).toEqual([clip]);
    expect((await ok('simulator/tts-clone', [clip, text('hello')], 'ref-after')).input_references).toEqual([clip, text('hello')]);
    expect((await ok('simulator/tts-clone', [text('hello'), clip], 'ref-before')).input_references).toEqual([text('hello'), clip]);
  });
  it('up to three clips, each transcript right after its clip', async () => {
    expect((await ok('simulator/tts-clone', [clip, text('a'), clip, clip, text('c')], 'ref-three')).input_references).toHaveLength(5);
  });
  it('one image, to an endpoint that takes image references', async () => {
    expect((await ok('simulator/tts-clone', [image], 'ref-image')).input_references).toEqual([image]);
  });
  it('refuses a transcript that does not follow its clip when there are several clips', async () => {
    await refused('simulator/tts-clone', [text('a'), clip, clip], /right after its input_audio clip/);
  });
  it('refuses more than three clips', async () => {
    await refused('simulator/tts-clone', [clip, clip, clip, clip], /one to three input_audio clips/);
  });
  it('refuses a second transcript for one clip', async () => {
    await refused('simulator/tts-clone', [text('a'), clip, text('b')], /at most one transcript/);
  });
  it('refuses a transcript without a clip', async () => {
    await refused('simulator/tts-clone', [text('a')], /send the input_audio clip/);
  });
  it('refuses mixing an image with audio', async () => {
    await refused('simulator/tts-clone', [clip, image], /cannot be mixed/);
  });
  it('refuses more than one image', async () => {
    await refused('simulator/tts-clone', [image, image], /exactly one image_url/);
  });
  it('refuses audio that is not a data URL', async () => {
    await refused('simulator/tts-clone', [{ type: 'input_audio', input_audio: { data: 'https://example.com/a.wav' } }], /data URL/);
  });
  it('refuses a clip for a model without voice cloning, and an image for one without image references', async () => {
    await refused('simulator/tts', [clip], /supports no voice cloning/);
    await refused('simulator/tts', [image], /supports no image reference/);
  });
});
