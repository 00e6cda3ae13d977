// The Amazon Bedrock Converse adapter, through the real AWS SDK, against a local HTTP fake: JSON replies for
// Converse, AWS event-stream frames (built here with the SDK's codec) for ConverseStream.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { createBedrockAdapter, supportedParameters } from '../../lambdas/providers/bedrock/bedrock-adapter.js';
import { ProviderError } from '../../lambdas/providers/provider-error.js';
import type { GenerationRequest, ProviderAdapter } from '../../lambdas/providers/types.js';
import { collect, fixtureJson, startFakeUpstream, type FakeReply, type FakeUpstream } from '../support/fake-upstream.js';

let upstream: FakeUpstream;
let adapter: ProviderAdapter;

const MODEL = 'us.anthropic.claude-sonnet-4-20250514-v1:0';
const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** One event-stream message; Bedrock pads payloads with a random `p` field, kept here to show it is ignored. */
function frame(type: string, body: unknown, messageType: 'event' | 'exception' = 'event'): Uint8Array {
  return codec.encode({
    headers: {
      ':message-type': { type: 'string', value: messageType },
      [messageType === 'event' ? ':event-type' : ':exception-type']: { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
    },
    body: fromUtf8(JSON.stringify({ ...(body as object), p: 'abcdefghijklmnopqrstuvwxyzABCDEF' })),
  });
}

/** A fixture of `{ eventType: payload }` items, as ConverseStream documents its output, encoded frame by frame. */
function eventStream(path: string): Uint8Array[] {
  return (fixtureJson(path) as Record<string, unknown>[]).map((event) => {
    const [type, body] = Object.entries(event)[0]!;
    return frame(type, body);
  });
}

/** fake-upstream writes each chunk with res.write, which takes bytes as well as text; its type only says text. */
function streamReply(frames: Uint8Array[], extra: Partial<FakeReply> = {}): FakeReply {
  return {
    headers: { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'req-stream-1' },
    chunks: frames.map((bytes) => Buffer.from(bytes)) as unknown as string[],
    ...extra,
  };
}

const jsonReply = (path: string): FakeReply => ({ json: fixtureJson(path), headers: { 'x-amzn-requestid': 'req-1' } });

const errorReply = (status: number, type: string, body: unknown, headers: Record<string, string> = {}): FakeReply => ({
  status, json: body, headers: { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`, ...headers },
});

const request: GenerationRequest = {
  model: MODEL,
  messages: [
    { role: 'system', content: [{ type: 'text', text: 'You are a radio assistant.', cache_control: { type: 'ephemeral' } }] },
    { role: 'user', content: [{ type: 'text', text: 'What is on this sign?' }, { type: 'image', url: 'data:image/png;base64,iVBORw0KGgo=' }] },
    { role: 'user', content: [{ type: 'text', text: 'And the top song on WZPZ?' }, { type: 'file', filename: 'play list.v2.pdf', url: 'data:application/pdf;base64,JVBERi0=' }] },
    {
      role: 'assistant',
      content: [{ type: 'text', text: 'Let me look both up.' }],
      reasoning: 'Two lookups are needed.',
      reasoning_signature: 'sig-1',
      tool_calls: [
        { id: 'tooluse_1', name: 'read_sign', arguments: '{}' },
        { id: 'tooluse_2', name: 'top_song', arguments: '{"sign":"WZPZ"}' },
      ],
    },
    { role: 'tool', tool_call_id: 'tooluse_1', content: [{ type: 'text', text: 'OPEN' }] },
    { role: 'tool', tool_call_id: 'tooluse_2', content: [{ type: 'text', text: '{"song":"Elemental Hotel","artist":"8 Storey Hike"}' }] },
    { role: 'user', content: [{ type: 'text', text: 'Thanks!' }] },
  ],
  tools: [
    { name: 'read_sign' },
    { name: 'top_song', description: 'Get the most popular song played on a radio station.', parameters: { type: 'object', properties: { sign: { type: 'string' } }, required: ['sign'] } },
  ],
  tool_choice: 'required',
  max_output_tokens: 2000,
  temperature: 1,
  top_p: 0.95,
  top_k: 50,
  stop: ['END'],
  response_format: { type: 'json_schema', name: 'answer', description: 'The answer', schema: { type: 'object', properties: { song: { type: 'string' } } } },
  reasoning: { effort: 'medium' },
  service_tier: 'priority',
};

const simple: GenerationRequest = { model: MODEL, messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }] };

beforeAll(async () => {
  upstream = await startFakeUpstream();
  adapter = createBedrockAdapter({ region: 'us-east-1', endpoint: upstream.url });
});
afterAll(() => upstream.close());

describe('Bedrock Converse adapter', () => {
  it('translates the request: system, merged turns, images, documents, reasoning, tool calls and results, config', async () => {
    upstream.reply(jsonReply('bedrock/converse-text.json'));
    await adapter.generate(request);
    const sent = upstream.received.at(-1)!;
    expect(sent.url).toBe('/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse');
    expect(String(sent.headers.authorization)).toMatch(/^AWS4-HMAC-SHA256 Credential=\w+\/\d{8}\/us-east-1\/bedrock\/aws4_request/);
    expect(sent.body).toEqual({
      system: [{ text: 'You are a radio assistant.' }, { cachePoint: { type: 'default' } }],
      messages: [
        {
          role: 'user',
          content: [
            { text: 'What is on this sign?' },
            { image: { format: 'png', source: { bytes: 'iVBORw0KGgo=' } } },
            { text: 'And the top song on WZPZ?' },
            { document: { format: 'pdf', name: 'play list-v2', source: { bytes: 'JVBERi0=' } } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { reasoningContent: { reasoningText: { text: 'Two lookups are needed.', signature: 'sig-1' } } },
            { text: 'Let me look both up.' },
            { toolUse: { toolUseId: 'tooluse_1', name: 'read_sign', input: {} } },
            { toolUse: { toolUseId: 'tooluse_2', name: 'top_song', input: { sign: 'WZPZ' } } },
          ],
        },
        {
          role: 'user',
          content: [
            { toolResult: { toolUseId: 'tooluse_1', content: [{ text: 'OPEN' }] } },
            { toolResult: { toolUseId: 'tooluse_2', content: [{ text: '{"song":"Elemental Hotel","artist":"8 Storey Hike"}' }] } },
            { text: 'Thanks!' },
          ],
        },
      ],
      inferenceConfig: { maxTokens: 2000, temperature: 1, topP: 0.95, stopSequences: ['END'] },
      toolConfig: {
        tools: [
          { toolSpec: { name: 'read_sign', inputSchema: { json: { type: 'object', properties: {} } } } },
          { toolSpec: { name: 'top_song', description: 'Get the most popular song played on a radio station.', inputSchema: { json: { type: 'object', properties: { sign: { type: 'string' } }, required: ['sign'] } } } },
        ],
        toolChoice: { any: {} },
      },
      additionalModelRequestFields: { top_k: 50, thinking: { type: 'enabled', budget_tokens: 1024 } },
      outputConfig: {
        textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: '{"type":"object","properties":{"song":{"type":"string"}}}', name: 'answer', description: 'The answer' } } },
      },
      serviceTier: { type: 'priority' },
    });
  });

  it('keeps Claude\'s temperature at most 1 and leaves out stop sequences of whitespace only, which Claude refuses; other models get them as sent', async () => {
    const sent = async (extra: Partial<GenerationRequest>) => {
      upstream.reply(jsonReply('bedrock/converse-text.json'));
      await adapter.generate({ ...simple, ...extra });
      return (upstream.received.at(-1)!.body as { inferenceConfig?: Record<string, unknown> }).inferenceConfig;
    };
    expect(await sent({ temperature: 1.7, stop: ['\n', '', 'END', ' \t'] })).toEqual({ temperature: 1, stopSequences: ['END'] });
    expect(await sent({ temperature: 0.4, stop: ['\n'] })).toEqual({ temperature: 0.4 });
    expect(await sent({ model: 'mistral.mistral-large-2407-v1:0', temperature: 0.4, stop: ['\n', 'END'] })).toEqual({ temperature: 0.4, stopSequences: ['\n', 'END'] });
  });

  it('maps tool choice, and model-specific top_k and reasoning fields by model family', async () => {
    const sent = async (extra: Partial<GenerationRequest>) => {
      upstream.reply(jsonReply('bedrock/converse-text.json'));
      await adapter.generate({ ...simple, tools: [{ name: 'top_song' }], ...extra });
      return upstream.received.at(-1)!.body as Record<string, unknown>;
    };
    expect((await sent({ tool_choice: 'auto' })).toolConfig).toMatchObject({ toolChoice: { auto: {} } });
    expect((await sent({ tool_choice: { name: 'top_song' } })).toolConfig).toMatchObject({ toolChoice: { tool: { name: 'top_song' } } });
    // No "none" in Converse: without tool history the tools are left out.
    expect((await sent({ tool_choice: 'none' })).toolConfig).toBeUndefined();
    // With tool history Converse needs the tool list; Claude can still be told not to call tools.
    const history: GenerationRequest['messages'] = [
      ...simple.messages,
      { role: 'assistant', content: [], tool_calls: [{ id: 'tooluse_1', name: 'top_song', arguments: '{"sign":"WZPZ"}' }] },
      { role: 'tool', tool_call_id: 'tooluse_1', content: [{ type: 'text', text: 'Elemental Hotel' }] },
    ];
    const noneWithHistory = await sent({ tool_choice: 'none', messages: history });
    expect(noneWithHistory.toolConfig).toEqual({ tools: [{ toolSpec: { name: 'top_song', inputSchema: { json: { type: 'object', properties: {} } } } }] });
    expect(noneWithHistory.additionalModelRequestFields).toEqual({ tool_choice: { type: 'none' } });
    await expect(adapter.generate({ ...simple, model: 'amazon.nova-pro-v1:0', tools: [{ name: 'top_song' }], tool_choice: 'none', messages: history }))
      .rejects.toMatchObject({ status: 400, message: expect.stringContaining('tool_choice "none"') });
    expect((await sent({ reasoning: { max_tokens: 4096 } })).additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: 4096 } });
    expect((await sent({ reasoning: { effort: 'high' } })).additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: 16384 } });
    expect((await sent({ reasoning: { effort: 'none' } })).additionalModelRequestFields).toBeUndefined();
    expect((await sent({ model: 'amazon.nova-2-lite-v1:0', top_k: 20, reasoning: { effort: 'low' } })).additionalModelRequestFields)
      .toEqual({ inferenceConfig: { topK: 20 }, reasoningConfig: { type: 'enabled', maxReasoningEffort: 'low' } });
    expect((await sent({ model: 'openai.gpt-oss-120b-1:0', reasoning: { effort: 'high' } })).additionalModelRequestFields).toEqual({ reasoning_effort: 'high' });
  });

  it('refuses what Converse cannot take before calling it', async () => {
    const before = upstream.received.length;
    const cases: GenerationRequest[] = [
      { ...simple, messages: [{ role: 'user', content: [{ type: 'image', url: 'https://example.com/cat.png' }] }] },
      { ...simple, response_format: { type: 'json_object' } },
      { ...simple, model: 'meta.llama3-1-70b-instruct-v1:0', top_k: 10 },
      { ...simple, model: 'meta.llama3-1-70b-instruct-v1:0', reasoning: { effort: 'high' } },
      { ...simple, service_tier: 'turbo' },
    ];
    for (const bad of cases) {
      const failure = await adapter.generate(bad).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(ProviderError);
      expect(failure).toMatchObject({ status: 400, retryable: false });
    }
    await expect(adapter.generate(cases[0]!)).rejects.toMatchObject({ message: expect.stringContaining('data URL') });
    expect(upstream.received.length).toBe(before);
  });

  it('maps a text reply: usage with cache reads and writes added to input, request id, service tier', async () => {
    upstream.reply(jsonReply('bedrock/converse-text.json'));
    expect(await adapter.generate(simple)).toEqual({
      provider_id: 'req-1',
      text: "Hello! I'm Claude, an AI assistant. How can I help you today?",
      tool_calls: [],
      finish_reason: 'stop',
      native_finish_reason: 'end_turn',
      usage: { input_tokens: 1548, output_tokens: 19, cached_input_tokens: 1024, cache_write_tokens: 512, reasoning_tokens: 0 },
      service_tier: 'default',
    });
  });

  it('maps a tool use reply', async () => {
    upstream.reply(jsonReply('bedrock/converse-tool-use.json'));
    const result = await adapter.generate(simple);
    expect(result.tool_calls).toEqual([{ id: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', name: 'top_song', arguments: '{"sign":"WZPZ"}' }]);
    expect(result).toMatchObject({ text: '', finish_reason: 'tool_calls', native_finish_reason: 'tool_use', usage: { input_tokens: 392, output_tokens: 54 } });
  });

  it('maps reasoning content', async () => {
    upstream.reply(jsonReply('bedrock/converse-reasoning.json'));
    const result = await adapter.generate({ ...simple, reasoning: { max_tokens: 1024 } });
    expect(result.reasoning).toBe('The user is asking how many r\'s are in strawberry. Let me spell it out: s-t-r-a-w-b-e-r-r-y. The r\'s are at positions 3, 8 and 9, so there are 3.');
    expect(result.text).toBe('There are 3 r\'s in "strawberry".');

    upstream.reply(jsonReply('bedrock/converse-reasoning.json'));
    expect((await adapter.generate({ ...simple, reasoning: { max_tokens: 1024, exclude: true } })).reasoning).toBeUndefined();
  });

  it('maps stop reasons', async () => {
    const reply = (stopReason: string): FakeReply => ({ json: { output: { message: { role: 'assistant', content: [{ text: 'x' }] } }, stopReason, usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } } });
    for (const [native, mapped] of [['stop_sequence', 'stop'], ['max_tokens', 'length'], ['guardrail_intervened', 'content_filter'], ['content_filtered', 'content_filter'], ['malformed_tool_use', 'error']] as const) {
      upstream.reply(reply(native));
      expect(await adapter.generate(simple)).toMatchObject({ finish_reason: mapped, native_finish_reason: native });
    }
  });

  it('streams text from the event stream, with one finish after messageStop and metadata', async () => {
    upstream.reply(streamReply(eventStream('bedrock/converse-stream-text.json')));
    const events = await collect(adapter.stream(simple));
    expect(upstream.received.at(-1)!.url).toBe('/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse-stream');
    expect(events).toEqual([
      { type: 'text-delta', delta: 'Hello' },
      { type: 'text-delta', delta: '! How can I help you today?' },
      {
        type: 'finish', finish_reason: 'stop', native_finish_reason: 'end_turn', provider_id: 'req-stream-1',
        usage: { input_tokens: 264, output_tokens: 12, cached_input_tokens: 256, cache_write_tokens: 0, reasoning_tokens: 0 },
      },
    ]);
  });

  it('streams a tool call: start with id and name, then argument fragments', async () => {
    upstream.reply(streamReply(eventStream('bedrock/converse-stream-tool-use.json')));
    const events = await collect(adapter.stream(simple));
    expect(events).toEqual([
      { type: 'text-delta', delta: "I'll check the top song on WZPZ." },
      { type: 'tool-call-delta', index: 0, id: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', name: 'top_song', arguments_delta: '' },
      { type: 'tool-call-delta', index: 0, arguments_delta: '' },
      { type: 'tool-call-delta', index: 0, arguments_delta: '{"sign": ' },
      { type: 'tool-call-delta', index: 0, arguments_delta: '"WZPZ"}' },
      expect.objectContaining({ type: 'finish', finish_reason: 'tool_calls', native_finish_reason: 'tool_use', usage: expect.objectContaining({ input_tokens: 392, output_tokens: 71 }) }),
    ]);
  });

  it('streams reasoning deltas', async () => {
    upstream.reply(streamReply(eventStream('bedrock/converse-stream-reasoning.json')));
    const events = await collect(adapter.stream({ ...simple, reasoning: { effort: 'low' } }));
    expect(events).toEqual([
      { type: 'reasoning-delta', delta: 'Let me spell it out: ' },
      { type: 'reasoning-delta', delta: "s-t-r-a-w-b-e-r-r-y has 3 r's." },
      // The signature comes back on the next turn with the reasoning (reasoning_signature).
      { type: 'reasoning-signature', signature: 'ErcBCkgIAhABGAIiQMuPsJ+xSiHmvH3bB/2vrzzs3Bm2p6H4a5e9T8N5wS9lZy3mJx8cYpQ2r4wOe6Mzt1Ew0A9c7R2xw1gR2NDhmoQEgwY' },
      { type: 'text-delta', delta: 'There are 3 r\'s in "strawberry".' },
      expect.objectContaining({ type: 'finish', finish_reason: 'stop' }),
    ]);
  });

  it('turns error replies into ProviderErrors: throttling retryable with Retry-After, validation final', async () => {
    const before = upstream.received.length;
    upstream.reply(errorReply(429, 'ThrottlingException', fixtureJson('bedrock/error-throttling.json'), { 'retry-after': '3' }));
    const throttled = await adapter.generate(simple).catch((err: unknown) => err);
    expect(throttled).toBeInstanceOf(ProviderError);
    expect(throttled).toMatchObject({
      status: 429, retryable: true, retryAfterMs: 3000, providerCode: 'ThrottlingException', message: 'Too many requests, please wait before trying again.',
    });
    // The SDK does not retry on its own: the gateway decides.
    expect(upstream.received.length).toBe(before + 1);

    upstream.reply(errorReply(400, 'ValidationException', fixtureJson('bedrock/error-validation.json')));
    await expect(adapter.generate(simple)).rejects.toMatchObject({ status: 400, retryable: false, providerCode: 'ValidationException', message: expect.stringContaining('must start with a user message') });

    upstream.reply(errorReply(403, 'AccessDeniedException', { message: 'You don\'t have access to the model with the specified model ID.' }));
    await expect(adapter.generate(simple)).rejects.toMatchObject({ status: 403, retryable: false, providerCode: 'AccessDeniedException' });

    upstream.reply(errorReply(503, 'ServiceUnavailableException', { message: 'Service is temporarily unavailable.' }));
    await expect(collect(adapter.stream(simple))).rejects.toMatchObject({ status: 503, retryable: true, providerCode: 'ServiceUnavailableException' });
  });

  it('reports exceptions sent inside the event stream', async () => {
    const [start, delta] = eventStream('bedrock/converse-stream-text.json');
    upstream.reply(streamReply([start!, delta!, frame('throttlingException', { message: 'Too many tokens, please wait before trying again.' }, 'exception')]));
    const seen: string[] = [];
    const failure = await (async () => {
      for await (const event of adapter.stream(simple)) seen.push(event.type);
    })().catch((err: unknown) => err);
    expect(seen).toEqual(['text-delta']);
    expect(failure).toBeInstanceOf(ProviderError);
    expect(failure).toMatchObject({ status: 429, retryable: true, providerCode: 'ThrottlingException', message: 'Too many tokens, please wait before trying again.' });

    upstream.reply(streamReply([start!, frame('modelStreamErrorException', { message: 'Model stream error', originalStatusCode: 500, originalMessage: 'boom' }, 'exception')]));
    await expect(collect(adapter.stream(simple))).rejects.toMatchObject({ status: 502, retryable: true, providerCode: 'ModelStreamErrorException' });

    upstream.reply(streamReply([start!, frame('validationException', { message: 'Input is too long for requested model.' }, 'exception')]));
    await expect(collect(adapter.stream(simple))).rejects.toMatchObject({ status: 400, retryable: false, providerCode: 'ValidationException' });
  });

  it('reports exception members the SDK hands over as events (as a mocked client may)', async () => {
    const client = {
      send: async () => ({
        $metadata: { requestId: 'req-x' },
        stream: (async function* () {
          yield { messageStart: { role: 'assistant' } };
          yield { serviceUnavailableException: { message: 'Bedrock is unable to process your request.' } };
        })(),
      }),
    } as unknown as BedrockRuntimeClient;
    await expect(collect(createBedrockAdapter({ client }).stream(simple)))
      .rejects.toMatchObject({ name: 'ProviderError', status: 503, retryable: true, providerCode: 'ServiceUnavailableException', message: 'Bedrock is unable to process your request.' });
  });

  it('reports a stream that ends before messageStop and metadata', async () => {
    const frames = eventStream('bedrock/converse-stream-text.json');
    upstream.reply(streamReply(frames.slice(0, 3), { cut: true }));
    await expect(collect(adapter.stream(simple))).rejects.toMatchObject({ name: 'ProviderError', status: 502 });

    upstream.reply(streamReply(frames.slice(0, 3)));
    await expect(collect(adapter.stream(simple))).rejects.toMatchObject({ name: 'ProviderError', status: 502 });

    // messageStop alone is not the end: usage comes in the metadata event after it.
    upstream.reply(streamReply(frames.slice(0, 5)));
    await expect(collect(adapter.stream(simple))).rejects.toMatchObject({ name: 'ProviderError', status: 502 });
  });

  it('reports replies that break the format', async () => {
    upstream.reply({ json: { output: { message: { role: 'assistant', content: 'oops' } }, stopReason: 'end_turn' } });
    await expect(adapter.generate(simple)).rejects.toMatchObject({ kind: 'invalid-response', status: 502 });

    upstream.reply({ json: { stopReason: 'end_turn' } });
    await expect(adapter.generate(simple)).rejects.toMatchObject({ kind: 'invalid-response', status: 502 });

    upstream.reply({ text: 'not json', headers: { 'content-type': 'application/json' } });
    await expect(adapter.generate(simple)).rejects.toMatchObject({ kind: 'invalid-response', status: 502 });

    upstream.reply(streamReply([frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 42 } })]));
    await expect(collect(adapter.stream(simple))).rejects.toMatchObject({ kind: 'invalid-response', status: 502 });
  });

  it('uses a given client, e.g. one with static credentials', async () => {
    const client = new BedrockRuntimeClient({
      region: 'us-east-1', endpoint: upstream.url, credentials: { accessKeyId: 'AKIDSTATIC', secretAccessKey: 'test' },
      maxAttempts: 1, requestHandler: new NodeHttpHandler(),
    });
    const withClient = createBedrockAdapter({ client, provider: 'bedrock-eu' });
    expect(withClient.provider).toBe('bedrock-eu');
    upstream.reply(jsonReply('bedrock/converse-text.json'));
    await withClient.generate(simple);
    expect(String(upstream.received.at(-1)!.headers.authorization)).toContain('Credential=AKIDSTATIC/');
  });

  it('signs requests to a plain-http fake (the simulator under npm start) without any AWS credentials around', async () => {
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY, profile: process.env.AWS_PROFILE };
    delete process.env.AWS_ACCESS_KEY_ID;
    delete process.env.AWS_SECRET_ACCESS_KEY;
    // A profile that does not exist: the SDK's chain finds nothing in the environment, files or instance metadata.
    process.env.AWS_PROFILE = 'gateway-test-no-such-profile';
    try {
      const local = createBedrockAdapter({ region: 'us-east-1', endpoint: upstream.url });
      upstream.reply(jsonReply('bedrock/converse-text.json'));
      await local.generate(simple);
      expect(String(upstream.received.at(-1)!.headers.authorization)).toContain('Credential=local/');
    } finally {
      const restore = (name: string, value: string | undefined) => {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      };
      restore('AWS_ACCESS_KEY_ID', saved.id);
      restore('AWS_SECRET_ACCESS_KEY', saved.secret);
      restore('AWS_PROFILE', saved.profile);
    }
  });

  it('reports a refused connection as a retryable network failure, and a caller abort as aborted', async () => {
    const dead = createBedrockAdapter({ region: 'us-east-1', endpoint: 'http://127.0.0.1:1' });
    await expect(dead.generate(simple)).rejects.toMatchObject({ kind: 'network', retryable: true, status: 502 });

    upstream.reply(jsonReply('bedrock/converse-text.json'));
    const controller = new AbortController();
    controller.abort();
    await expect(adapter.generate(simple, { signal: controller.signal })).rejects.toMatchObject({ kind: 'aborted', retryable: false });
  });

  it('lists the request fields it honours', () => {
    expect(supportedParameters).toEqual(expect.arrayContaining(['tools', 'tool_choice', 'max_output_tokens', 'temperature', 'top_p', 'stop', 'response_format', 'reasoning']));
    expect(supportedParameters).not.toContain('seed');
  });
});
