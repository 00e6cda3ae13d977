// Every optional top-level field of each inference route sent as null (as clients that serialize every unset
// field send them: pydantic models, SDK wrappers) is taken as left out, as OpenAI's API takes it: the request
// is served and charged once, through the real inference handler over DynamoDB Local and the simulator. The
// field lists come from the routes' own schemas, so a field added later is covered too. Batch items get the
// same treatment (test/unit/batch-input.test.ts).
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { z } from 'zod';
import { startSimulator, type Simulator } from '../../bin/simulator/server.js';
import { chatRequestSchema } from '../../lambdas/inference/formats/chat-schema.js';
import { responsesRequestSchema } from '../../lambdas/inference/formats/responses-schema.js';
import { messagesRequestSchema } from '../../lambdas/inference/formats/messages-schema.js';
import { embeddingsRequestSchema } from '../../lambdas/inference/formats/embeddings-schema.js';
import { speechRequestSchema } from '../../lambdas/inference/formats/speech-schema.js';
import { createTestStore, type TestStore } from '../support/store.js';
import { createTenant } from '../support/tenants.js';
import { httpEvent } from '../support/events.js';
import { handleInference, manage, readBody, type Json } from '../support/handler-calls.js';

let sim: Simulator;
let store: TestStore;
let key: string;

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
  store = await createTestStore({ SIMULATOR_URL: sim.url });
  key = (await (await createTenant(store.deps)).addKey('standard')).text;
});
afterAll(async () => {
  await store.drop();
  await sim.close();
});

/** The schema's optional top-level fields (those it accepts left out), less `keep`. */
function optionalFields(schema: z.ZodObject, keep: string[]): string[] {
  return Object.entries(schema.shape).filter(([name, field]) => !keep.includes(name) && (field as z.ZodType).safeParse(undefined).success).map(([name]) => name);
}

async function send(path: string, body: Json): Promise<{ status: number; headers: Record<string, string>; text: string }> {
  const reply = await handleInference(httpEvent({ method: 'POST', path, key, body }), store.deps);
  return { status: reply.statusCode, headers: reply.headers, text: await readBody(reply.body as string | Readable) };
}

const usage = async () => ((await manage(store.deps, key, 'GET', '/key')).json as Json).data.usage as number;

const cases: Array<{ route: string; path: string; schema: z.ZodObject; body: Json; served: (text: string, headers: Record<string, string>) => void }> = [
  {
    route: 'chat completions', path: '/api/v1/chat/completions', schema: chatRequestSchema as unknown as z.ZodObject,
    body: { model: 'simulator/echo', messages: [{ role: 'user', content: 'ping' }] },
    served: (text) => expect((JSON.parse(text) as Json).choices[0].message.content).toBe('ping'),
  },
  {
    route: 'responses', path: '/api/v1/responses', schema: responsesRequestSchema as unknown as z.ZodObject,
    body: { model: 'simulator/echo', input: 'ping' },
    served: (text) => expect((JSON.parse(text) as Json).output_text).toBe('ping'),
  },
  {
    route: 'messages', path: '/api/v1/messages', schema: messagesRequestSchema as unknown as z.ZodObject,
    body: { model: 'simulator/echo', max_tokens: 64, messages: [{ role: 'user', content: 'ping' }] },
    served: (text) => expect((JSON.parse(text) as Json).content[0].text).toBe('ping'),
  },
  {
    route: 'embeddings', path: '/api/v1/embeddings', schema: embeddingsRequestSchema as unknown as z.ZodObject,
    body: { model: 'simulator/embed', input: 'ping' },
    served: (text) => expect((JSON.parse(text) as Json).data[0].embedding.length).toBeGreaterThan(0),
  },
  {
    route: 'speech', path: '/api/v1/audio/speech', schema: speechRequestSchema as unknown as z.ZodObject,
    body: { model: 'simulator/tts', input: 'ping', voice: 'nova' },
    // response_format null is the default, PCM (README: Speech).
    served: (text, headers) => {
      expect(headers['content-type']).toBe('audio/pcm');
      expect(text.length).toBeGreaterThan(0);
    },
  },
];

describe('null for an optional field is the field left out', () => {
  it.each(cases)('$route: every optional field null at once is served and charged once', async ({ path, schema, body, served }) => {
    const fields = optionalFields(schema, Object.keys(body));
    expect(fields.length).toBeGreaterThan(3);
    const before = await usage();
    const reply = await send(path, { ...body, ...Object.fromEntries(fields.map((name) => [name, null])) });
    if (reply.status !== 200) throw new Error(`${path} with ${fields.join(', ')} null: ${reply.status} ${reply.text}`);
    served(reply.text, reply.headers);
    await store.converge();
    const record = await manage(store.deps, key, 'GET', '/generation', undefined, { id: reply.headers['x-generation-id']! });
    expect(record.status).toBe(200);
    const cost = record.json.data.total_cost as number;
    expect(cost).toBeGreaterThan(0);
    expect(await usage() - before).toBeCloseTo(cost, 12);
  });

  it('a required field sent as null is still refused, naming it', async () => {
    const reply = await send('/api/v1/chat/completions', { model: 'simulator/echo', messages: null });
    expect(reply.status).toBe(400);
    expect((JSON.parse(reply.text) as Json).error.message).toContain('body.messages');
  });

  it('null inside an object is not touched: a nested field that does not take null is refused', async () => {
    const reply = await send('/api/v1/chat/completions', { model: 'simulator/echo', messages: [{ role: 'user', content: 'ping', name: null }] });
    expect(reply.status).toBe(400);
    expect((JSON.parse(reply.text) as Json).error.message).toContain('body.messages.0');
  });
});
