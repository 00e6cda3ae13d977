// The Google Gemini adapter against documented wire-format fixtures served over HTTP.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createGeminiAdapter, supportedParameters } from '../../lambdas/providers/google/gemini-adapter.js';
import { ProviderError } from '../../lambdas/providers/provider-error.js';
import type { GenerationRequest, ProviderAdapter } from '../../lambdas/providers/types.js';
import { collect, fixtureJson, fixtureSse, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';

let upstream: FakeUpstream;
let adapter: ProviderAdapter;

const request: GenerationRequest = {
  model: 'gemini-2.5-flash',
  messages: [
    { role: 'system', content: [{ type: 'text', text: 'You are a weather bot.' }] },
    { role: 'system', content: [{ type: 'text', text: 'Answer briefly.' }] },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Weather where these photos were taken?' },
        { type: 'image', url: 'data:image/png;base64,iVBORw0KGgo=' },
        { type: 'image', url: 'https://example.com/photos/london.JPG?size=large' },
      ],
    },
    {
      role: 'assistant',
      content: [{ type: 'text', text: 'Let me check.' }],
      tool_calls: [
        { id: 'call_0', name: 'get_weather', arguments: '{"location":"Paris"}' },
        { id: 'call_1', name: 'get_time', arguments: '{"zone":"Europe/London"}' },
      ],
      reasoning_signature: 'c2lnbmF0dXJlLTE=',
    },
    { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: '14:00' }] },
    { role: 'tool', tool_call_id: 'call_0', content: [{ type: 'text', text: '{"temp":21}' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'Paris is 21°C at 14:00. Anything else?' }] },
    { role: 'user', content: [{ type: 'text', text: 'And Rome?' }] },
    // A later turn reuses the synthesized id call_0: the result belongs to the nearest earlier call.
    { role: 'assistant', content: [], tool_calls: [{ id: 'call_0', name: 'get_forecast', arguments: '{"location":"Rome"}' }] },
    { role: 'tool', tool_call_id: 'call_0', content: [{ type: 'text', text: 'sunny' }] },
  ],
  tools: [
    { name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'], additionalProperties: false } },
    { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string' } } } },
    { name: 'get_forecast', description: 'Forecast' },
  ],
  tool_choice: { name: 'get_weather' },
  max_output_tokens: 256,
  temperature: 0.3,
  top_p: 0.9,
  top_k: 40,
  seed: 7,
  stop: ['END'],
  response_format: { type: 'json_schema', name: 'weather', schema: { type: 'object', properties: { summary: { type: 'string' } } } },
  reasoning: { max_tokens: 1024 },
};

const simple: GenerationRequest = { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }] };

beforeAll(async () => {
  upstream = await startFakeUpstream();
  adapter = createGeminiAdapter({ baseURL: `${upstream.url}/v1beta/`, apiKey: 'gm-test' });
});
afterAll(() => upstream.close());

describe('Gemini adapter', () => {
  it('translates the request: system, turns, images, tool calls and results, tools, choice and generation config', async () => {
    upstream.reply({ json: fixtureJson('google/generate-content-text.json') });
    await adapter.generate(request);
    const sent = upstream.received.at(-1)!;
    expect(sent.url).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(sent.headers['x-goog-api-key']).toBe('gm-test');
    expect(sent.body).toEqual({
      systemInstruction: { parts: [{ text: 'You are a weather bot.' }, { text: 'Answer briefly.' }] },
      contents: [
        {
          role: 'user',
          parts: [
            { text: 'Weather where these photos were taken?' },
            { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
            { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/photos/london.JPG?size=large' } },
          ],
        },
        {
          role: 'model',
          parts: [
            { text: 'Let me check.' },
            { functionCall: { name: 'get_weather', args: { location: 'Paris' } }, thoughtSignature: 'c2lnbmF0dXJlLTE=' },
            { functionCall: { name: 'get_time', args: { zone: 'Europe/London' } } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'get_time', response: { content: '14:00' } } },
            { functionResponse: { name: 'get_weather', response: { content: '{"temp":21}' } } },
          ],
        },
        { role: 'model', parts: [{ text: 'Paris is 21°C at 14:00. Anything else?' }] },
        { role: 'user', parts: [{ text: 'And Rome?' }] },
        // No signature known for this call: Google's documented placeholder keeps Gemini 3 from rejecting it.
        { role: 'model', parts: [{ functionCall: { name: 'get_forecast', args: { location: 'Rome' } }, thoughtSignature: 'skip_thought_signature_validator' }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_forecast', response: { content: 'sunny' } } }] },
      ],
      tools: [{
        functionDeclarations: [
          { name: 'get_weather', description: 'Current weather', parametersJsonSchema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'], additionalProperties: false } },
          { name: 'get_time', parametersJsonSchema: { type: 'object', properties: { zone: { type: 'string' } } } },
          { name: 'get_forecast', description: 'Forecast' },
        ],
      }],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
      generationConfig: {
        maxOutputTokens: 256,
        temperature: 0.3,
        topP: 0.9,
        topK: 40,
        seed: 7,
        stopSequences: ['END'],
        responseMimeType: 'application/json',
        responseJsonSchema: { type: 'object', properties: { summary: { type: 'string' } } },
        thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
      },
    });
  });

  it('sends a history tool call whose arguments are not a JSON object as args holding the text', async () => {
    upstream.reply({ json: fixtureJson('google/generate-content-text.json') });
    await adapter.generate({
      ...simple,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'x' }] },
        { role: 'assistant', content: [], tool_calls: [{ id: 'call_1', name: 'f', arguments: '{"cut": "of' }] },
        { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: 'r' }] },
      ],
    });
    const body = upstream.received.at(-1)!.body as { contents: Array<{ parts: Array<Record<string, unknown>> }> };
    expect(body.contents[1]!.parts[0]).toMatchObject({ functionCall: { name: 'f', args: { raw_arguments: '{"cut": "of' } } });
  });

  it('maps tool choice modes and reasoning effort per model generation', async () => {
    const sent = async (extra: Partial<GenerationRequest>) => {
      upstream.reply({ json: fixtureJson('google/generate-content-text.json') });
      await adapter.generate({ ...simple, ...extra });
      return upstream.received.at(-1)!.body as Record<string, Record<string, unknown>>;
    };
    expect((await sent({ tool_choice: 'required' })).toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect((await sent({ tool_choice: 'none' })).toolConfig).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    expect((await sent({ tool_choice: 'auto' })).toolConfig).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect((await sent({ reasoning: { effort: 'medium' } })).generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 8192, includeThoughts: true } });
    expect((await sent({ reasoning: { effort: 'none' } })).generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 0, includeThoughts: false } });
    expect((await sent({ model: 'gemini-3-pro-preview', reasoning: { effort: 'low', exclude: true } })).generationConfig)
      .toEqual({ thinkingConfig: { thinkingLevel: 'low', includeThoughts: false } });
    expect(upstream.received.at(-1)!.url).toBe('/v1beta/models/gemini-3-pro-preview:generateContent');
    expect((await sent({ model: 'gemini-3-flash-preview', reasoning: { effort: 'none' } })).generationConfig)
      .toEqual({ thinkingConfig: { thinkingLevel: 'minimal', includeThoughts: false } });
    expect((await sent({ response_format: { type: 'json_object' } })).generationConfig).toEqual({ responseMimeType: 'application/json' });
  });

  it('refuses what Gemini cannot take before calling it', async () => {
    const before = upstream.received.length;
    const unknownType = adapter.generate({ ...simple, messages: [{ role: 'user', content: [{ type: 'image', url: 'https://example.com/render?id=42' }] }] });
    await expect(unknownType).rejects.toBeInstanceOf(ProviderError);
    await expect(unknownType).rejects.toMatchObject({ status: 400, retryable: false, message: expect.stringContaining('media type') });
    const orphan = adapter.generate({ ...simple, messages: [{ role: 'tool', tool_call_id: 'call_9', content: [{ type: 'text', text: 'x' }] }] });
    await expect(orphan).rejects.toMatchObject({ status: 400, message: expect.stringContaining('call_9') });
    expect(upstream.received.length).toBe(before);
  });

  it('maps a text reply with cached prompt tokens', async () => {
    upstream.reply({ json: fixtureJson('google/generate-content-text.json') });
    expect(await adapter.generate(simple)).toEqual({
      provider_id: 'Y2vLaKqXOsyjz7IPxLqL6Qk',
      text: 'AI works by learning patterns from data and using them to make predictions or decisions.',
      tool_calls: [],
      finish_reason: 'stop',
      native_finish_reason: 'STOP',
      usage: { input_tokens: 2114, output_tokens: 17, cached_input_tokens: 2048, cache_write_tokens: 0, reasoning_tokens: 0 },
    });
  });

  it('maps a function call reply to a tool call with a synthesized id, unique across replies', async () => {
    upstream.reply({ json: fixtureJson('google/generate-content-function-call.json') });
    const result = await adapter.generate(simple);
    expect(result.tool_calls).toEqual([
      { id: expect.stringMatching(/^call_[0-9a-f]{24}$/), name: 'schedule_meeting', arguments: '{"attendees":["Bob","Alice"],"date":"2025-03-27","time":"10:00","topic":"Q3 planning"}' },
    ]);
    upstream.reply({ json: fixtureJson('google/generate-content-function-call.json') });
    const again = await adapter.generate(simple);
    expect(again.tool_calls[0]!.id).not.toBe(result.tool_calls[0]!.id);
    expect(result).toMatchObject({ text: '', finish_reason: 'tool_calls', native_finish_reason: 'STOP' });
    expect(result.usage).toEqual({ input_tokens: 111, output_tokens: 86, cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 50 });
  });

  it('separates thought summaries from the answer and counts thinking tokens as output', async () => {
    upstream.reply({ json: fixtureJson('google/generate-content-thinking.json') });
    const result = await adapter.generate({ ...simple, reasoning: { effort: 'high' } });
    expect(result.text).toBe('The smallest palindromic prime greater than 100 is 101.');
    expect(result.reasoning).toBe('**Breaking down the problem**\n\nI need the smallest prime that is also a palindrome and greater than 100.');
    expect(result.usage).toEqual({ input_tokens: 20, output_tokens: 1038, cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 1024 });

    upstream.reply({ json: fixtureJson('google/generate-content-thinking.json') });
    expect((await adapter.generate({ ...simple, reasoning: { effort: 'high', exclude: true } })).reasoning).toBeUndefined();
  });

  it('reports a blocked prompt as content_filter with empty text', async () => {
    upstream.reply({ json: fixtureJson('google/generate-content-blocked.json') });
    expect(await adapter.generate(simple)).toMatchObject({
      text: '', tool_calls: [], finish_reason: 'content_filter', native_finish_reason: 'PROHIBITED_CONTENT', usage: { input_tokens: 8, output_tokens: 0 },
    });
  });

  it('maps other finish reasons', async () => {
    const withReason = (finishReason: string) => ({ candidates: [{ content: { parts: [{ text: 'partial' }], role: 'model' }, finishReason, index: 0 }] });
    upstream.reply({ json: withReason('MAX_TOKENS') });
    expect(await adapter.generate(simple)).toMatchObject({ text: 'partial', finish_reason: 'length', native_finish_reason: 'MAX_TOKENS' });
    upstream.reply({ json: withReason('SAFETY') });
    expect(await adapter.generate(simple)).toMatchObject({ finish_reason: 'content_filter' });
    upstream.reply({ json: withReason('RECITATION') });
    expect(await adapter.generate(simple)).toMatchObject({ finish_reason: 'content_filter' });
    upstream.reply({ json: withReason('MALFORMED_FUNCTION_CALL') });
    expect(await adapter.generate(simple)).toMatchObject({ finish_reason: 'error' });
  });

  it('streams text deltas and one finish with the last usage', async () => {
    upstream.reply({ chunks: fixtureSse('google/stream-text.sse') });
    const events = await collect(adapter.stream(simple));
    expect(upstream.received.at(-1)!.url).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    expect(events).toEqual([
      { type: 'text-delta', delta: 'The' },
      { type: 'text-delta', delta: ' sky is blue because of Rayleigh scattering.' },
      {
        type: 'finish', finish_reason: 'stop', native_finish_reason: 'STOP', provider_id: 'nX_LaJDzLNrUz7IPm4mWqAk',
        usage: { input_tokens: 9, output_tokens: 10, cached_input_tokens: 4, cache_write_tokens: 0, reasoning_tokens: 0 },
      },
    ]);
  });

  it('streams parallel function calls as whole tool-call deltas', async () => {
    upstream.reply({ chunks: fixtureSse('google/stream-function-call.sse') });
    const events = await collect(adapter.stream(simple));
    expect(events).toEqual([
      // The step's thought signature, on its first function-call part, comes first (it goes back next turn).
      { type: 'reasoning-signature', signature: 'CiIBVKhc7oDqJc3JNmOLfOPtNNVLJyJKIG9yZfXJ1c2VR1Yx' },
      { type: 'tool-call-delta', index: 0, id: expect.stringMatching(/^call_[0-9a-f]{24}$/), name: 'get_weather', arguments_delta: '{"location":"Paris"}' },
      { type: 'tool-call-delta', index: 1, id: expect.stringMatching(/^call_[0-9a-f]{24}$/), name: 'get_weather', arguments_delta: '{"location":"London"}' },
      {
        type: 'finish', finish_reason: 'tool_calls', native_finish_reason: 'STOP', provider_id: '6oHLaL2QH4uGz7IP9cW-gQ4',
        usage: { input_tokens: 50, output_tokens: 35, cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 20 },
      },
    ]);
    const ids = events.flatMap((event) => (event.type === 'tool-call-delta' ? [event.id] : []));
    expect(new Set(ids).size).toBe(2);
  });

  it('streams thought summaries as reasoning deltas', async () => {
    upstream.reply({ chunks: fixtureSse('google/stream-thinking.sse') });
    const events = await collect(adapter.stream({ ...simple, reasoning: { effort: 'high' } }));
    expect(events.slice(0, 2)).toEqual([
      { type: 'reasoning-delta', delta: '**Counting the letters**\n\nI will go through strawberry letter by letter.' },
      { type: 'text-delta', delta: 'There are **3** "r"s in strawberry.' },
    ]);
    expect(events.slice(2)).toEqual([
      expect.objectContaining({ type: 'finish', finish_reason: 'stop', usage: { input_tokens: 9, output_tokens: 268, cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 256 } }),
    ]);
  });

  it('reads CRLF-separated events as the API sends them', async () => {
    upstream.reply({ chunks: fixtureSse('google/stream-text.sse').map((chunk) => chunk.replace(/\n/g, '\r\n')) });
    const events = await collect(adapter.stream(simple));
    expect(events.map((event) => event.type)).toEqual(['text-delta', 'text-delta', 'finish']);
  });

  it('turns error replies into ProviderErrors: 429 retryable with RetryInfo, 400 final, 503 retryable', async () => {
    upstream.reply({ status: 429, json: fixtureJson('google/error-429.json') });
    const limited = await adapter.generate(simple).catch((err: unknown) => err);
    expect(limited).toBeInstanceOf(ProviderError);
    expect(limited).toMatchObject({ status: 429, retryable: true, retryAfterMs: 34_000, providerCode: 'RESOURCE_EXHAUSTED' });
    expect((limited as Error).message).toContain('You exceeded your current quota');

    upstream.reply({ status: 429, headers: { 'retry-after': '2' }, json: fixtureJson('google/error-429.json') });
    await expect(adapter.generate(simple)).rejects.toMatchObject({ retryAfterMs: 2000 });

    upstream.reply({ status: 400, json: fixtureJson('google/error-400.json') });
    await expect(adapter.generate(simple)).rejects.toMatchObject({ status: 400, retryable: false, providerCode: 'INVALID_ARGUMENT' });

    upstream.reply({ status: 503, json: fixtureJson('google/error-503.json') });
    await expect(collect(adapter.stream(simple))).rejects.toMatchObject({ status: 503, retryable: true, providerCode: 'UNAVAILABLE' });

    upstream.reply({ status: 500, json: { error: { code: 500, message: 'An internal error has occurred.', status: 'INTERNAL' } } });
    await expect(adapter.generate(simple)).rejects.toMatchObject({ status: 500, retryable: true, providerCode: 'INTERNAL' });
  });

  it('reports an error sent mid-stream', async () => {
    const [first] = fixtureSse('google/stream-text.sse');
    upstream.reply({ chunks: [first!, 'data: {"error": {"code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}}\n\n'] });
    const events: string[] = [];
    const failure = await (async () => {
      for await (const event of adapter.stream(simple)) events.push(event.type);
    })().catch((err: unknown) => err);
    expect(events).toEqual(['text-delta']);
    expect(failure).toBeInstanceOf(ProviderError);
    expect(failure).toMatchObject({ status: 503, retryable: true, providerCode: 'UNAVAILABLE', message: 'The model is overloaded. Please try again later.' });
  });

  it('reports a stream cut before its final chunk, and replies that break the format', async () => {
    upstream.reply({ chunks: fixtureSse('google/stream-text.sse').slice(0, 2), cut: true });
    await expect(collect(adapter.stream(simple))).rejects.toMatchObject({ name: 'ProviderError', status: 502 });

    upstream.reply({ chunks: fixtureSse('google/stream-text.sse').slice(0, 2) });
    await expect(collect(adapter.stream(simple))).rejects.toMatchObject({ name: 'ProviderError', status: 502 });

    upstream.reply({ json: { candidates: [] } });
    await expect(adapter.generate(simple)).rejects.toMatchObject({ kind: 'invalid-response', status: 502 });

    upstream.reply({ json: { candidates: [{ content: { parts: [{ functionCall: { args: {} } }] } }] } });
    await expect(adapter.generate(simple)).rejects.toMatchObject({ kind: 'invalid-response', status: 502 });

    upstream.reply({ chunks: ['data: {"candidates": "soon"}\n\n'] });
    await expect(collect(adapter.stream(simple))).rejects.toMatchObject({ kind: 'invalid-response', status: 502 });
  });

  it('lists the request fields it honours', () => {
    expect(supportedParameters).toEqual(expect.arrayContaining(['tools', 'tool_choice', 'max_output_tokens', 'temperature', 'top_p', 'top_k', 'stop', 'seed', 'response_format', 'reasoning']));
    expect(supportedParameters).not.toContain('logit_bias');
  });
});
