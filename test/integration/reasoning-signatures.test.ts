// Reasoning signatures through the gateway: an Anthropic thinking reply comes back as reasoning_details (chat)
// or encrypted_content (Responses) carrying the signature, and the next turn's reasoning_details go back to
// Anthropic as a signed thinking block, as extended thinking with tools requires.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { installAwsLambdaShim } from '../../bin/local/awslambda-shim.js';
import type { CatalogFile } from '../../lambdas/catalog/catalog-config.js';
import { createTestStore, type TestStore } from '../support/store.js';
import { createTenant } from '../support/tenants.js';
import { httpEvent } from '../support/events.js';
import { fixtureJson, fixtureSse, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';

installAwsLambdaShim();
const { handleInference } = await import('../../lambdas/handlers/inference.js');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

const SIGNATURE = 'BDaL4VrbR2Oj0hO4XpJxT28J5TILnCrrUXoKiiNBZW9P+nr8XSj1zuZzAl4egiCCpQNvfyUuFFJP5CncdYZEQPPmLxYsNrcs....';
let upstream: FakeUpstream;
let store: TestStore;
let key: string;
let dir: string;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  dir = mkdtempSync(join(tmpdir(), 'gateway-signatures-'));
  const catalog: CatalogFile = {
    models: [{
      id: 'acme/claude',
      endpoints: [{ provider: 'acme-anthropic', adapter: 'anthropic' as const, base_url: upstream.url, credential: 'ACME_KEY', upstream_model: 'claude-x', pricing: { prompt: '0.000003', completion: '0.000015' }, context_length: 200000 }],
    }],
  };
  writeFileSync(join(dir, 'catalog.json'), JSON.stringify(catalog));
  store = await createTestStore({ GATEWAY_CATALOG_FILE: join(dir, 'catalog.json'), ACME_KEY: 'k' });
  key = (await (await createTenant(store.deps)).addKey('standard')).text;
});
afterAll(async () => {
  await store.drop();
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

async function text(body: string | Readable): Promise<string> {
  if (typeof body === 'string') return body;
  let out = '';
  for await (const chunk of body) out += String(chunk);
  return out;
}

async function send(path: string, body: Json): Promise<string> {
  const reply = await handleInference(httpEvent({ method: 'POST', path: `/api/v1${path}`, key, body }), store.deps);
  expect(reply.statusCode).toBe(200);
  return text(reply.body);
}

describe('reasoning signatures', () => {
  it('returns the thinking signature in chat reasoning_details and Responses encrypted_content', async () => {
    upstream.reply({ json: fixtureJson('anthropic/message-thinking.json') });
    const chat = JSON.parse(await send('/chat/completions', { model: 'acme/claude', messages: [{ role: 'user', content: 'weather in Paris?' }], max_tokens: 100 })) as Json;
    expect(chat.choices[0].message.reasoning_details).toEqual([{ type: 'reasoning.text', text: chat.choices[0].message.reasoning, signature: SIGNATURE, format: 'anthropic-claude-v1', index: 0 }]);

    upstream.reply({ json: fixtureJson('anthropic/message-thinking.json') });
    const response = JSON.parse(await send('/responses', { model: 'acme/claude', input: 'weather in Paris?', max_output_tokens: 100 })) as Json;
    expect((response.output as Json[]).find((item) => item.type === 'reasoning')).toMatchObject({ encrypted_content: SIGNATURE });
  });

  it('streams the signature as a reasoning_details delta', async () => {
    upstream.reply({ chunks: fixtureSse('anthropic/stream-thinking.sse') });
    const stream = await send('/chat/completions', { model: 'acme/claude', messages: [{ role: 'user', content: '27 * 453?' }], max_tokens: 100, stream: true });
    const details = stream.split('\n\n').filter((frame) => frame.startsWith('data: {')).map((frame) => JSON.parse(frame.slice(6)) as Json)
      .flatMap((chunk) => chunk.choices?.[0]?.delta?.reasoning_details ?? []);
    expect(details.filter((detail: Json) => detail.signature)).toEqual([{ type: 'reasoning.text', text: '', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds...', format: 'anthropic-claude-v1', index: 0 }]);
  });

  it('sends an earlier turn\'s reasoning_details back to Anthropic as a signed thinking block', async () => {
    upstream.reply({ json: fixtureJson('anthropic/message-thinking.json') });
    const before = upstream.received.length;
    await send('/chat/completions', {
      model: 'acme/claude',
      max_tokens: 100,
      messages: [
        { role: 'user', content: 'weather in Paris?' },
        {
          role: 'assistant', content: null, tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }],
          reasoning_details: [{ type: 'reasoning.text', text: 'I should call the tool.', signature: 'sig-123', format: 'anthropic-claude-v1', index: 0 }],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: 'sunny' },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } } }],
    });
    const sent = upstream.received[before]!.body as Json;
    const assistant = (sent.messages as Json[]).find((message) => message.role === 'assistant')!;
    expect(assistant.content[0]).toEqual({ type: 'thinking', thinking: 'I should call the tool.', signature: 'sig-123' });
  });
});
