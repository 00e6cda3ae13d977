// Presets over DynamoDB Local, through the real handlers: versions made from the three inbound formats,
// gapless numbering under concurrent writers, reads in the shapes @openrouter/sdk parses, and requests
// through a preset (the merged body checked where the simulator receives it).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CreatePresetFromInferenceResponse$inboundSchema, GetPresetResponse$inboundSchema, GetPresetVersionResponse$inboundSchema, ListPresetsResponse$inboundSchema, ListPresetVersionsResponse$inboundSchema } from '@openrouter/sdk/models';
import { startSimulator, type Simulator } from '../../bin/simulator/server.js';
import { createTestStore, type TestStore } from '../support/store.js';
import { createTenant } from '../support/tenants.js';
import { chatCompletion, handleInference, manage, readBody, type Json } from '../support/handler-calls.js';
import { httpEvent } from '../support/events.js';

let sim: Simulator;
let store: TestStore;
let key: string;
let otherWorkspaceKey: string;
let managementKey: string;
const upstream: Array<{ path: string; body: Json }> = [];

beforeAll(async () => {
  sim = await startSimulator({ port: 0, onRequest: (path, body) => upstream.push({ path, body: body as Json }) });
  store = await createTestStore({ SIMULATOR_URL: sim.url });
  const tenant = await createTenant(store.deps);
  key = (await tenant.addKey('standard')).text;
  managementKey = (await tenant.addKey('management')).text;
  const other = await createTenant(store.deps, 'organization', 'Other');
  otherWorkspaceKey = (await other.addKey('standard')).text;
});
afterAll(async () => {
  await store.drop();
  await sim.close();
});

const presets = (method: string, path: string, body?: unknown, as = key, query?: Record<string, string>) => manage(store.deps, as, method, `/presets${path}`, body, query);

/** The body the simulator received for the request whose last user message is `marker`. */
function upstreamBodyOf(marker: string): Json {
  const found = upstream.filter((request) => JSON.stringify(request.body).includes(marker));
  expect(found).toHaveLength(1);
  return found[0]!.body;
}

describe('making presets', () => {
  it('answers 413 naming the store\'s limit for a preset within the body limit that would be a record over 400 KB', async () => {
    const big = await presets('POST', '/too-big/messages', { model: 'simulator/echo', system: [{ type: 'text', text: 'S'.repeat(900_000) }], messages: [] });
    expect(big.status).toBe(413);
    expect(big.json.error).toMatchObject({ code: 413, message: expect.stringContaining('400 KB') });
  });

  it('creates a preset from a Messages body, keeping only request settings; the reply parses with the SDK', async () => {
    const reply = await presets('POST', '/writer/messages', {
      model: 'simulator/echo', fallbacks: [{ model: 'simulator/echo-2' }], system: 'You write haiku.', max_tokens: 64, temperature: 0.3,
      stop_sequences: ['END'], speed: 'fast', messages: [{ role: 'user', content: 'not kept' }], stream: true, session_id: 's1', unknown_field: 1,
    });
    expect(reply.status).toBe(200);
    expect(CreatePresetFromInferenceResponse$inboundSchema.safeParse(reply.json).error).toBeUndefined();
    const { data } = reply.json;
    expect(data).toMatchObject({ slug: 'writer', name: 'writer', status: 'active', description: null, designated_version_id: data.designated_version.id });
    expect(data.designated_version).toMatchObject({ version: 1, preset_id: data.id, system_prompt: 'You write haiku.' });
    expect(data.designated_version.config).toEqual({ model: 'simulator/echo', models: ['simulator/echo-2'], max_tokens: 64, temperature: 0.3, stop: ['END'], speed: 'fast' });
  });

  it('creates from Chat Completions (leading system messages are the system prompt) and Responses (instructions) bodies', async () => {
    const chat = await presets('POST', '/from-chat/chat/completions', {
      model: 'simulator/echo', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'x' }], max_completion_tokens: 20,
      reasoning_effort: 'low', response_format: { type: 'json_object' }, provider: { max_price: { prompt: 1.5 }, sort: 'price' }, seed: 7,
    });
    expect(chat.status).toBe(200);
    expect(chat.json.data.designated_version.system_prompt).toBe('Be brief.');
    // Stored as sent (a price stays dollars per million tokens, as the caller wrote it).
    expect(chat.json.data.designated_version.config).toEqual({
      model: 'simulator/echo', max_tokens: 20, reasoning: { effort: 'low' }, response_format: { type: 'json_object' }, provider: { max_price: { prompt: 1.5 }, sort: 'price' }, seed: 7,
    });
    const responses = await presets('POST', '/from-responses/responses', {
      model: 'simulator/echo', instructions: 'Answer in French.', input: 'ignored', max_output_tokens: 30,
      text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' } } },
    });
    expect(responses.status).toBe(200);
    expect(responses.json.data.designated_version).toMatchObject({
      system_prompt: 'Answer in French.',
      config: { model: 'simulator/echo', max_tokens: 30, response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' } } } },
    });
  });

  it('takes a top-level null as a setting left out, as the inference routes do, in each of the three formats', async () => {
    const messages = await presets('POST', '/nulls-messages/messages', {
      model: 'simulator/echo', system: null, max_tokens: null, session_id: null, user: null, models: null, temperature: 0.2, thinking: null, output_config: null, service_tier: null,
    });
    expect(messages.status).toBe(200);
    expect(messages.json.data.designated_version).toMatchObject({ system_prompt: null, config: { model: 'simulator/echo', temperature: 0.2 } });
    expect(Object.keys(messages.json.data.designated_version.config).sort()).toEqual(['model', 'temperature']);
    const chat = await presets('POST', '/nulls-chat/chat/completions', { model: 'simulator/echo', messages: null, tools: null, user: null, session_id: null, seed: 3 });
    expect(chat.status).toBe(200);
    expect(chat.json.data.designated_version.config).toEqual({ model: 'simulator/echo', seed: 3 });
    const responses = await presets('POST', '/nulls-responses/responses', { model: 'simulator/echo', instructions: null, user: null, session_id: null, text: null, max_output_tokens: 9 });
    expect(responses.status).toBe(200);
    expect(responses.json.data.designated_version.config).toEqual({ model: 'simulator/echo', max_tokens: 9 });
  });

  it('stores and reads back user JSON with keys named "constructor" (a schema property, a price), which the store\'s marshaller took for a class', async () => {
    const schema = { type: 'object', properties: { constructor: { type: 'string' }, name: { constructor: { name: 'String' } } } };
    const reply = await presets('POST', '/ctor/chat/completions', {
      model: 'simulator/echo', response_format: { type: 'json_schema', json_schema: { name: 'answer', schema } }, provider: { max_price: { constructor: 1 } }, messages: [],
    });
    expect(reply.status).toBe(200);
    const read = await presets('GET', '/ctor');
    expect(read.status).toBe(200);
    expect(read.json.data.designated_version.config.response_format.json_schema.schema).toEqual(schema);
    expect(read.json.data.designated_version.config.provider.max_price).toEqual({ constructor: 1 });
  });

  it('refuses bad bodies with a 400 naming the field, and bad slugs before any store access', async () => {
    const tooMany = await presets('POST', '/x/messages', { model: 'a/b', fallbacks: [1, 2, 3, 4].map((n) => ({ model: `a/${n}` })) });
    expect(tooMany.status).toBe(400);
    expect(tooMany.json.error.message).toMatch(/fallbacks/);
    const both = await presets('POST', '/x/messages', { model: 'a/b', models: ['a/c'], fallbacks: [{ model: 'a/d' }] });
    expect(both.status).toBe(400);
    expect(both.json.error.message).toMatch(/fallbacks.*models/);
    const extra = await presets('POST', '/x/messages', { model: 'a/b', fallbacks: [{ model: 'a/d', provider: 'x' }] });
    expect(extra.status).toBe(400);
    const speed = await presets('POST', '/x/messages', { model: 'a/b', speed: 'turbo' });
    expect(speed.status).toBe(400);
    expect(speed.json.error.message).toMatch(/speed/);
    const temperature = await presets('POST', '/x/chat/completions', { model: 'a/b', temperature: 3 });
    expect(temperature.status).toBe(400);
    expect(temperature.json.error.message).toMatch(/temperature/);
    const price = await presets('POST', '/x/chat/completions', { model: 'a/b', provider: { max_price: { prompt: -1 } } });
    expect(price.status).toBe(400);
    expect(price.json.error.message).toMatch(/provider/);
    const plugins = await presets('POST', '/x/chat/completions', { model: 'a/b', plugins: [{ id: 'web' }] });
    expect(plugins.status).toBe(400);
    expect(plugins.json.error.message).toMatch(/plugins.*"web" is not available/);
    // What POST /responses refuses (responses are not stored) is refused in a preset made from one too.
    const previous = await presets('POST', '/x/responses', { model: 'a/b', input: 'x', previous_response_id: 'resp_1' });
    expect([previous.status, previous.json.error.message]).toEqual([400, expect.stringMatching(/previous_response_id: is not supported/)]);
    expect((await presets('POST', '/x/responses', { model: 'a/b', background: true })).status).toBe(400);
    const slug = await presets('POST', '/-bad/messages', { model: 'a/b' });
    expect(slug.status).toBe(400);
    expect(slug.json.error.message).toMatch(/slug/);
    expect((await presets('GET', '/x')).status).toBe(404);
  });

  it('numbers 20 concurrent versions of one new slug 1..20, without a gap or a duplicate', async () => {
    const replies = await Promise.all(Array.from({ length: 20 }, (_, n) => presets('POST', '/raced/chat/completions', { model: 'simulator/echo', seed: n })));
    expect(replies.map((reply) => reply.status)).toEqual(Array(20).fill(200));
    const numbers = replies.map((reply) => reply.json.data.designated_version.version as number).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 20 }, (_, n) => n + 1));
    // One preset, every version stored once, each with the seed of the write that made it.
    expect(new Set(replies.map((reply) => reply.json.data.id)).size).toBe(1);
    const listed = await presets('GET', '/raced/versions', undefined, key, { limit: '100' });
    expect(ListPresetVersionsResponse$inboundSchema.safeParse(listed.json).error).toBeUndefined();
    expect(listed.json.total_count).toBe(20);
    expect(listed.json.data.map((version: Json) => version.version)).toEqual(numbers);
    expect(new Set(listed.json.data.map((version: Json) => version.config.seed)).size).toBe(20);
    const latest = await presets('GET', '/raced');
    expect(latest.json.data.designated_version.version).toBe(20);
  });
});

describe('reading presets', () => {
  it('lists the workspace\'s presets newest first, pages them, and reads one and its versions', async () => {
    await presets('POST', '/paged/messages', { model: 'simulator/echo', max_tokens: 5 });
    await presets('POST', '/paged/messages', { model: 'simulator/echo', max_tokens: 6 });
    const list = await presets('GET', '', undefined, key, { limit: '2' });
    expect(list.status).toBe(200);
    expect(ListPresetsResponse$inboundSchema.safeParse(list.json).error).toBeUndefined();
    expect(list.json.data).toHaveLength(2);
    expect(list.json.data[0].slug).toBe('paged');
    expect(list.json.data[0]).not.toHaveProperty('designated_version');
    expect(list.json.total_count).toBeGreaterThanOrEqual(5);
    const rest = await presets('GET', '', undefined, key, { offset: '2', limit: '100' });
    expect(rest.json.data.map((preset: Json) => preset.slug)).not.toContain('paged');

    const one = await presets('GET', '/paged');
    expect(GetPresetResponse$inboundSchema.safeParse(one.json).error).toBeUndefined();
    expect(one.json.data.designated_version.config.max_tokens).toBe(6);
    const first = await presets('GET', '/paged/versions/1');
    expect(GetPresetVersionResponse$inboundSchema.safeParse(first.json).error).toBeUndefined();
    expect(first.json.data).toMatchObject({ version: 1, config: { max_tokens: 5 } });
    expect((await presets('GET', '/paged/versions/3')).status).toBe(404);
    expect((await presets('GET', '/paged/versions/0')).status).toBe(400);
    // A management key of the organization sees the same workspace's presets.
    expect((await presets('GET', '/paged', undefined, managementKey)).status).toBe(200);
  });

  it('keeps presets to their workspace: another organization\'s key sees none of them', async () => {
    expect((await presets('GET', '/paged', undefined, otherWorkspaceKey)).status).toBe(404);
    const list = await presets('GET', '', undefined, otherWorkspaceKey);
    expect(list.json).toEqual({ data: [], total_count: 0 });
  });
});

describe('requests through a preset', () => {
  it('sends upstream exactly the merged body: the request wins field by field, the preset\'s system prompt first', async () => {
    await presets('POST', '/merged/chat/completions', {
      model: 'simulator/echo', messages: [{ role: 'system', content: 'You are terse.' }], temperature: 0.2, max_tokens: 50, top_p: 0.9, stop: ['STOP'],
    });
    const reply = await chatCompletion(store.deps, key, { model: '@preset/merged', temperature: 0.7, messages: [{ role: 'system', content: 'Own system.' }, { role: 'user', content: 'merge-marker-1' }] });
    expect(reply.status).toBe(200);
    expect(reply.json.model).toBe('simulator/echo');
    expect(upstreamBodyOf('merge-marker-1')).toEqual({
      model: 'echo',
      messages: [{ role: 'system', content: 'You are terse.' }, { role: 'system', content: 'Own system.' }, { role: 'user', content: 'merge-marker-1' }],
      temperature: 0.7, max_completion_tokens: 50, top_p: 0.9, stop: ['STOP'],
      // The account-level hashed identity every request carries (no safety_identifier was sent).
      user: expect.any(String),
    });
  });

  it('routes the preset\'s fallback models as models, and applies a new version to the next request', async () => {
    await presets('POST', '/fallback/messages', { model: 'simulator/error-500', fallbacks: [{ model: 'simulator/echo' }], max_tokens: 40 });
    const first = await chatCompletion(store.deps, key, { model: '@preset/fallback', messages: [{ role: 'user', content: 'fallback-marker' }] });
    expect(first.status).toBe(200);
    expect(first.json.model).toBe('simulator/echo');
    await presets('POST', '/fallback/messages', { model: 'simulator/echo', max_tokens: 41 });
    await chatCompletion(store.deps, key, { model: '@preset/fallback', messages: [{ role: 'user', content: 'version-2-marker' }] });
    expect(upstreamBodyOf('version-2-marker').max_completion_tokens).toBe(41);
  });

  it('keeps the request\'s model with <model>@preset/<slug> and with the preset field', async () => {
    await presets('POST', '/pinned/chat/completions', { model: 'simulator/does-not-exist', temperature: 0.4 });
    const pinned = await chatCompletion(store.deps, key, { model: 'simulator/echo@preset/pinned', messages: [{ role: 'user', content: 'pinned-marker' }] });
    expect(pinned.status).toBe(200);
    expect(upstreamBodyOf('pinned-marker')).toMatchObject({ model: 'echo', temperature: 0.4 });
    const field = await chatCompletion(store.deps, key, { model: 'simulator/echo', preset: 'pinned', messages: [{ role: 'user', content: 'field-marker' }] });
    expect(field.status).toBe(200);
    expect(upstreamBodyOf('field-marker')).toMatchObject({ model: 'echo', temperature: 0.4 });
  });

  it('applies a preset to the Responses and Messages formats too, and streams', async () => {
    await presets('POST', '/formats/responses', { model: 'simulator/echo', instructions: 'Speak plainly.', max_output_tokens: 33 });
    const responses = await handleInference(httpEvent({ method: 'POST', path: '/api/v1/responses', key, body: { model: '@preset/formats', input: 'responses-marker' } }), store.deps);
    expect(responses.statusCode).toBe(200);
    expect(upstreamBodyOf('responses-marker')).toMatchObject({ max_completion_tokens: 33, messages: [{ role: 'system', content: 'Speak plainly.' }, { role: 'user', content: 'responses-marker' }] });
    const messages = await handleInference(httpEvent({ method: 'POST', path: '/api/v1/messages', key, body: { model: '@preset/formats', max_tokens: 12, messages: [{ role: 'user', content: 'messages-marker' }] } }), store.deps);
    expect(messages.statusCode).toBe(200);
    expect(upstreamBodyOf('messages-marker')).toMatchObject({ max_completion_tokens: 12 });
    const streamed = await chatCompletion(store.deps, key, { model: '@preset/formats', stream: true, messages: [{ role: 'user', content: 'stream-marker' }] });
    expect(streamed.status).toBe(200);
    expect(upstreamBodyOf('stream-marker')).toMatchObject({ stream: true, max_completion_tokens: 33 });
  });

  it('answers 404 for an unknown preset or another workspace\'s, and 400 for a preset with no model', async () => {
    const unknown = await chatCompletion(store.deps, key, { model: '@preset/nope', messages: [{ role: 'user', content: 'x' }] });
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.message).toMatch(/Preset "nope" not found/);
    const foreign = await chatCompletion(store.deps, otherWorkspaceKey, { model: '@preset/merged', messages: [{ role: 'user', content: 'x' }] });
    expect(foreign.status).toBe(404);
    await presets('POST', '/modelless/chat/completions', { temperature: 0.1 });
    const modelless = await chatCompletion(store.deps, key, { model: '@preset/modelless', messages: [{ role: 'user', content: 'x' }] });
    expect(modelless.status).toBe(400);
    expect(modelless.json.error.message).toMatch(/names no model/);
    const badSlug = await chatCompletion(store.deps, key, { model: '@preset/', messages: [{ role: 'user', content: 'x' }] });
    expect(badSlug.status).toBe(400);
    const mismatch = await chatCompletion(store.deps, key, { model: '@preset/merged', preset: 'other', messages: [{ role: 'user', content: 'x' }] });
    expect(mismatch.status).toBe(400);
    expect(mismatch.json.error.message).toMatch(/preset/);
  });

  it('keeps a chat completion to 4 stop sequences when its preset, made from a Messages body, holds more: 400 unless the request sends its own', async () => {
    await presets('POST', '/many-stops/messages', { model: 'simulator/echo', max_tokens: 20, stop_sequences: ['a', 'b', 'c', 'd', 'e'] });
    const chat = await chatCompletion(store.deps, key, { model: '@preset/many-stops', messages: [{ role: 'user', content: 'stops-marker-1' }] });
    expect(chat.status).toBe(400);
    expect(chat.json.error).toMatchObject({ message: 'Invalid preset "many-stops": its stop has 5 sequences and a chat completion takes at most 4; send "stop" to replace them', metadata: { param: 'stop' } });
    expect(upstream.some((request) => JSON.stringify(request.body).includes('stops-marker-1'))).toBe(false);
    const own = await chatCompletion(store.deps, key, { model: '@preset/many-stops', stop: ['z'], messages: [{ role: 'user', content: 'stops-marker-2' }] });
    expect(own.status).toBe(200);
    expect(upstreamBodyOf('stops-marker-2')).toMatchObject({ stop: ['z'] });
    // A Messages request takes them all, as its own stop_sequences would.
    const messages = await handleInference(httpEvent({ method: 'POST', path: '/api/v1/messages', key, body: { model: '@preset/many-stops', max_tokens: 12, messages: [{ role: 'user', content: 'stops-marker-3' }] } }), store.deps);
    expect(messages.statusCode).toBe(200);
    expect(upstreamBodyOf('stops-marker-3')).toMatchObject({ stop: ['a', 'b', 'c', 'd', 'e'] });
  });

  it('reads a reply body to the end for a streamed preset request', async () => {
    const reply = await handleInference(httpEvent({ method: 'POST', path: '/api/v1/chat/completions', key, body: { model: '@preset/merged', stream: true, messages: [{ role: 'user', content: 'sse-marker' }] } }), store.deps);
    const text = await readBody(reply.body);
    expect(text.trim().endsWith('data: [DONE]')).toBe(true);
  });
});
