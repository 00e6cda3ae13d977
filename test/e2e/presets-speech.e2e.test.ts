// Presets and text to speech against `npm start`, through @openrouter/sdk: presets.* create, list and read
// presets and versions, a chat request through a preset answers, and tts.createSpeech returns audio.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OpenRouter } from '@openrouter/sdk';
import { BadRequestResponseError, NotFoundResponseError } from '@openrouter/sdk/models/errors';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';
import { generateKeyText } from '../../lambdas/keys/key-format.js';
import { objectOf } from '../support/sdk-shapes.js';
import { parseMp3, pcmSeconds } from '../support/mp3.js';

const ADMIN_KEY = generateKeyText();
let gateway: GatewayProcess;
let user: OpenRouter;

beforeAll(async () => {
  gateway = await startGatewayProcess({ GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_INITIAL_CREDITS: '25' });
  const admin = new OpenRouter({ apiKey: ADMIN_KEY, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
  const created = await admin.apiKeys.create({ requestBody: { name: 'presets and speech' } });
  user = new OpenRouter({ apiKey: created.key, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
}, 150_000);

afterAll(async () => {
  await gateway?.stop();
});

async function bytesOf(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

describe('presets through @openrouter/sdk', () => {
  it('creates a preset and a second version, lists and reads them, and answers a chat through it', async () => {
    const first = await user.presets.createPresetsMessages({
      slug: 'sdk-haiku',
      messagesRequest: { model: 'simulator/echo', system: 'Answer in haiku.', maxTokens: 40, messages: [{ role: 'user', content: 'not kept' }] },
    });
    expect(first.data).toMatchObject({ slug: 'sdk-haiku', status: 'active', designatedVersion: { version: 1, systemPrompt: 'Answer in haiku.', config: { model: 'simulator/echo', max_tokens: 40 } } });
    const second = await user.presets.createPresetsChatCompletions({
      slug: 'sdk-haiku',
      chatRequest: { model: 'simulator/echo', messages: [{ role: 'system', content: 'Answer in prose.' }, { role: 'user', content: 'x' }], temperature: 0.5 },
    });
    expect(second.data.designatedVersion).toMatchObject({ version: 2, systemPrompt: 'Answer in prose.' });
    expect(second.data.id).toBe(first.data.id);

    const listed = await user.presets.list({});
    expect(listed.result.totalCount).toBeGreaterThanOrEqual(1);
    expect(listed.result.data.map((preset) => preset.slug)).toContain('sdk-haiku');
    const read = await user.presets.get({ slug: 'sdk-haiku' });
    expect(read.data.designatedVersionId).toBe(second.data.designatedVersionId);
    const versions = await user.presets.listVersions({ slug: 'sdk-haiku' });
    expect(versions.result.data.map((version) => version?.version)).toEqual([1, 2]);
    const one = await user.presets.getVersion({ slug: 'sdk-haiku', version: '1' });
    expect(one.data?.config).toEqual({ model: 'simulator/echo', max_tokens: 40 });
    await expect(user.presets.get({ slug: 'no-such-preset' })).rejects.toBeInstanceOf(NotFoundResponseError);

    const reply = objectOf(await user.chat.send({ chatRequest: { model: '@preset/sdk-haiku', stream: false, messages: [{ role: 'user', content: 'through a preset' }] } }));
    expect(reply.model).toBe('simulator/echo');
    expect(reply.choices[0]!.message.content).toBe('through a preset');
  });
});

describe('tts.createSpeech through @openrouter/sdk', () => {
  it('returns MP3 that decodes and PCM of the right length', async () => {
    const mp3 = await bytesOf(await user.tts.createSpeech({ speechRequest: { model: 'simulator/tts', input: 'Hello from the gateway.', voice: 'nova', responseFormat: 'mp3' } }));
    expect(parseMp3(mp3).durationSeconds).toBeGreaterThan(1);
    // The SDK's default format is pcm.
    const pcm = await bytesOf(await user.tts.createSpeech({ speechRequest: { model: 'simulator/tts-elevenlabs', input: 'Hello again.' } }));
    expect(pcmSeconds(pcm, 24_000)).toBeCloseTo(0.72, 3);
    await expect(user.tts.createSpeech({ speechRequest: { model: 'simulator/tts', input: 'x', speed: 9 } })).rejects.toBeInstanceOf(BadRequestResponseError);
  });
});
