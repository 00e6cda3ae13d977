// Inference as `npm start` serves it, driven by the Vercel AI SDK (`ai`), a third-party client many
// applications use: its OpenAI provider over Chat Completions and over the Responses API (its default), and
// the OpenRouter provider for it. Text, streams with usage, multi-step tool calls, structured output,
// embeddings, and the typed errors it raises; every reply has to pass the SDK's own schemas.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { APICallError, embedMany, generateObject, generateText, stepCountIs, streamText, tool, type LanguageModel } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenRouter } from '@openrouter/ai-sdk-provider';
import { z } from 'zod';
import { OpenRouter } from '@openrouter/sdk';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';
import { generateKeyText } from '../../lambdas/keys/key-format.js';

const ADMIN_KEY = generateKeyText();
let gateway: GatewayProcess;
let userKey: string;
let brokeKey: string;

beforeAll(async () => {
  gateway = await startGatewayProcess({ GATEWAY_ADMIN_KEY: ADMIN_KEY });
  const admin = new OpenRouter({ apiKey: ADMIN_KEY, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
  userKey = (await admin.apiKeys.create({ requestBody: { name: 'e2e ai sdk' } })).key;
  brokeKey = (await admin.apiKeys.create({ requestBody: { name: 'e2e ai sdk broke', limit: 0.000001 } })).key;
}, 150_000);

afterAll(async () => {
  await gateway?.stop();
});

const lookup = tool({
  description: 'Looks things up',
  inputSchema: z.object({ echo: z.string() }),
  execute: async ({ echo }) => ({ found: echo.length }),
});

/** The three ways the SDK reaches the gateway, for a model id. */
function models(key: string): Array<[string, (id: string) => LanguageModel]> {
  const openai = createOpenAI({ apiKey: key, baseURL: gateway.baseUrl });
  const openrouter = createOpenRouter({ apiKey: key, baseURL: gateway.baseUrl });
  return [
    ['openai chat', (id) => openai.chat(id)],
    ['openai responses', (id) => openai.responses(id)],
    ['openrouter', (id) => openrouter.chat(id)],
  ];
}

describe.each(['openai chat', 'openai responses', 'openrouter'])('the AI SDK through its %s provider', (name) => {
  const modelOf = (key: string, id: string) => models(key).find(([label]) => label === name)![1](id);
  const model = (id: string) => modelOf(userKey, id);

  it('generateText: the text, a stop, and the usage', async () => {
    const result = await generateText({ model: model('simulator/echo'), prompt: 'Hello from the AI SDK', maxRetries: 0 });
    expect(result.text).toBe('Hello from the AI SDK');
    expect(result.finishReason).toBe('stop');
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    expect(result.usage.outputTokens).toBeGreaterThan(0);
  });

  it('streamText: the deltas add up to the text, with usage at the end', async () => {
    const errors: unknown[] = [];
    const result = streamText({ model: model('simulator/echo'), system: 'Be brief.', prompt: 'Stream this back, please.', maxRetries: 0, onError: ({ error }) => { errors.push(error); } });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    expect(errors).toEqual([]);
    expect(text).toBe('Stream this back, please.');
    expect(await result.finishReason).toBe('stop');
    expect((await result.usage).totalTokens).toBeGreaterThan(0);
  });

  it('tool calls over several steps: the call parsed, the result sent back', async () => {
    const result = await generateText({ model: model('simulator/tool-call'), prompt: 'find cats', tools: { lookup }, stopWhen: stepCountIs(2), maxRetries: 0 });
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0]!.toolCalls).toEqual([expect.objectContaining({ toolName: 'lookup', input: { echo: 'find cats' } })]);
    expect(result.steps[0]!.toolResults).toEqual([expect.objectContaining({ toolName: 'lookup', output: { found: 9 } })]);
  });

  it('generateObject: structured output checked against its schema', async () => {
    const { object } = await generateObject({ model: model('simulator/echo'), schema: z.object({ city: z.string(), days: z.number() }), prompt: '{"city":"Lisbon","days":3}', maxRetries: 0 });
    expect(object).toEqual({ city: 'Lisbon', days: 3 });
  });

  it('errors: an unknown model is a 400 and a key out of money a 402, as APICallError', async () => {
    const rejection = async (call: Promise<unknown>) => call.then(() => undefined, (err: unknown) => err);
    const unknown = await rejection(generateText({ model: model('nobody/nothing'), prompt: 'x', maxRetries: 0 }));
    expect(APICallError.isInstance(unknown)).toBe(true);
    expect((unknown as APICallError).statusCode).toBe(400);
    expect((unknown as APICallError).message).toMatch(/nobody\/nothing/);
    const broke = await rejection(generateText({ model: modelOf(brokeKey, 'simulator/echo'), prompt: 'x', maxRetries: 0 }));
    expect((broke as APICallError).statusCode).toBe(402);
  });
});

describe('the AI SDK, embeddings', () => {
  it('embedMany: one vector per value, in order, with the usage', async () => {
    const openai = createOpenAI({ apiKey: userKey, baseURL: gateway.baseUrl });
    const { embeddings, usage } = await embedMany({ model: openai.embedding('simulator/embed'), values: ['first', 'second', 'third'], maxRetries: 0 });
    expect(embeddings).toHaveLength(3);
    expect(new Set(embeddings.map((vector) => vector.length)).size).toBe(1);
    expect(embeddings[0]).not.toEqual(embeddings[1]);
    expect(usage.tokens).toBeGreaterThan(0);
  });
});
