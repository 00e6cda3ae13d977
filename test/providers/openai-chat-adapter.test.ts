// The OpenAI Chat Completions adapter against recorded wire-format fixtures served over HTTP.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createOpenAIChatAdapter } from '../../lambdas/providers/openai/openai-chat-adapter.js';
import { ProviderError } from '../../lambdas/providers/provider-error.js';
import type { StreamEvent, GenerationRequest, ProviderAdapter } from '../../lambdas/providers/types.js';
import { collect, fixtureJson, fixtureSse, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';

let upstream: FakeUpstream;
let adapter: ProviderAdapter;

const request: GenerationRequest = {
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
    { role: 'user', content: [{ type: 'text', text: 'What is in this image?' }, { type: 'image', url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' }] },
    { role: 'assistant', content: [], tool_calls: [{ id: 'call_1', name: 'look', arguments: '{"x":1}' }] },
    { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: 'a cat' }] },
  ],
  tools: [{ name: 'look', description: 'Looks', parameters: { type: 'object', properties: { x: { type: 'number' } } } }],
  tool_choice: { name: 'look' },
  max_output_tokens: 100,
  temperature: 0.5,
  stop: ['END'],
  response_format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true },
  reasoning: { effort: 'low' },
};

beforeAll(async () => {
  upstream = await startFakeUpstream();
  adapter = createOpenAIChatAdapter({ provider: 'openai', baseURL: `${upstream.url}/v1`, apiKey: 'sk-test' });
});
afterAll(() => upstream.close());

describe('OpenAI chat adapter', () => {
  it('translates the request: messages, images, tool calls and results, tools, format, limits', async () => {
    upstream.reply({ json: fixtureJson('openai/chat-completion.json') });
    await adapter.generate(request);
    const sent = upstream.received.at(-1)!;
    expect(sent.url).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer sk-test');
    expect(sent.body).toEqual({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'What is in this image?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'look', arguments: '{"x":1}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'a cat' },
      ],
      tools: [{ type: 'function', function: { name: 'look', description: 'Looks', parameters: { type: 'object', properties: { x: { type: 'number' } } } } }],
      tool_choice: { type: 'function', function: { name: 'look' } },
      max_completion_tokens: 100,
      temperature: 0.5,
      stop: ['END'],
      response_format: { type: 'json_schema', json_schema: { name: 'out', schema: { type: 'object' }, strict: true } },
      reasoning_effort: 'low',
    });
  });

  it('maps a completion: text, finish reason, usage and service tier', async () => {
    upstream.reply({ json: fixtureJson('openai/chat-completion.json') });
    expect(await adapter.generate(request)).toEqual({
      provider_id: 'chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT',
      text: 'Hello! How can I assist you today?',
      tool_calls: [],
      finish_reason: 'stop',
      native_finish_reason: 'stop',
      usage: { input_tokens: 19, output_tokens: 10, cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 },
      service_tier: 'default',
    });
  });

  it('maps tool calls with cached and reasoning token counts', async () => {
    upstream.reply({ json: fixtureJson('openai/chat-completion-tool-call.json') });
    const result = await adapter.generate(request);
    expect(result.tool_calls).toEqual([{ id: 'call_abc123', name: 'get_current_weather', arguments: '{\n"location": "Boston, MA"\n}' }]);
    expect(result.finish_reason).toBe('tool_calls');
    expect(result.usage).toEqual({ input_tokens: 82, output_tokens: 17, cached_input_tokens: 64, cache_write_tokens: 0, reasoning_tokens: 5 });
  });

  it('streams text deltas and a finish with usage, asking for usage upstream', async () => {
    upstream.reply({ chunks: fixtureSse('openai/chat-stream.sse') });
    const events = await collect(adapter.stream(request));
    expect(upstream.received.at(-1)!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(events).toEqual([
      { type: 'text-delta', delta: 'Hello' },
      { type: 'text-delta', delta: ' there' },
      { type: 'finish', finish_reason: 'stop', native_finish_reason: 'stop', provider_id: 'chatcmpl-123', usage: { input_tokens: 9, output_tokens: 2, cached_input_tokens: 4, cache_write_tokens: 0, reasoning_tokens: 0 } },
    ]);
  });

  it('streams tool-call deltas', async () => {
    upstream.reply({ chunks: fixtureSse('openai/chat-stream-tool-call.sse') });
    const events = await collect(adapter.stream(request));
    expect(events.filter((event) => event.type === 'tool-call-delta')).toEqual([
      { type: 'tool-call-delta', index: 0, id: 'call_DdmO9pD3xa9XTPNJ32zg2hcA', name: 'get_weather', arguments_delta: '' },
      { type: 'tool-call-delta', index: 0, arguments_delta: '{"' },
      { type: 'tool-call-delta', index: 0, arguments_delta: 'location' },
      { type: 'tool-call-delta', index: 0, arguments_delta: '":"Paris"}' },
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'finish', finish_reason: 'tool_calls', usage: { input_tokens: 50, output_tokens: 15 } });
  });

  it('gives a streamed tool call without an id (some OpenAI-compatible servers) a unique one of its own, on its first delta only', async () => {
    const chunk = (delta: unknown, finish: string | null = null) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const reply = () => [
      chunk({ role: 'assistant', tool_calls: [{ index: 0, type: 'function', function: { name: 'look', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{}' } }] }),
      chunk({ tool_calls: [{ index: 1, type: 'function', function: { name: 'other', arguments: '{}' } }] }),
      chunk({}, 'tool_calls'),
      'data: [DONE]\n\n',
    ];
    upstream.reply({ chunks: reply() });
    const calls = (await collect(adapter.stream(request))).filter((event): event is Extract<StreamEvent, { type: 'tool-call-delta' }> => event.type === 'tool-call-delta');
    expect(calls.map((call) => call.id)).toEqual([expect.stringMatching(/^call_[0-9a-f]{24}$/), undefined, expect.stringMatching(/^call_[0-9a-f]{24}$/)]);
    expect(calls[0]!.id).not.toBe(calls[2]!.id);
    upstream.reply({ chunks: reply() });
    const again = (await collect(adapter.stream(request))).find((event) => event.type === 'tool-call-delta') as { id?: string };
    expect(again.id).not.toBe(calls[0]!.id);
  });

  it('turns error replies into retryable or final ProviderErrors with Retry-After', async () => {
    upstream.reply({ status: 429, headers: { 'retry-after': '2' }, json: fixtureJson('openai/error-429.json') });
    const limited = await adapter.generate(request).catch((err: unknown) => err);
    expect(limited).toBeInstanceOf(ProviderError);
    expect(limited).toMatchObject({ status: 429, retryable: true, retryAfterMs: 2000, providerCode: 'rate_limit_exceeded' });
    expect((limited as Error).message).toContain('Rate limit reached');

    upstream.reply({ status: 400, json: fixtureJson('openai/error-400.json') });
    await expect(adapter.generate(request)).rejects.toMatchObject({ status: 400, retryable: false, providerCode: 'invalid_value' });

    upstream.reply({ status: 503, text: '<html>bad gateway</html>' });
    await expect(collect(adapter.stream(request))).rejects.toMatchObject({ status: 503, retryable: true });
  });

  it('reports a stream cut before its end, and replies that break the format', async () => {
    upstream.reply({ chunks: fixtureSse('openai/chat-stream.sse').slice(0, 2), cut: true });
    await expect(collect(adapter.stream(request))).rejects.toMatchObject({ name: 'ProviderError', status: 502 });

    upstream.reply({ json: { choices: [] } });
    await expect(adapter.generate(request)).rejects.toMatchObject({ kind: 'invalid-response', status: 502 });
  });

  it('works the same over the global fetch as over the default node:http client', async () => {
    const viaFetch = createOpenAIChatAdapter({ provider: 'openai', baseURL: `${upstream.url}/v1`, apiKey: 'sk-test', fetch: globalThis.fetch });
    upstream.reply({ chunks: fixtureSse('openai/chat-stream.sse') });
    const streamed = await collect(viaFetch.stream(request));
    upstream.reply({ chunks: fixtureSse('openai/chat-stream.sse') });
    expect(await collect(adapter.stream(request))).toEqual(streamed);
    upstream.reply({ status: 429, headers: { 'retry-after': '2' }, json: fixtureJson('openai/error-429.json') });
    await expect(viaFetch.generate(request)).rejects.toMatchObject({ status: 429, retryAfterMs: 2000 });
  });

  it('reports a refused connection as a retryable network failure', async () => {
    const dead = createOpenAIChatAdapter({ baseURL: 'http://127.0.0.1:1/v1' });
    await expect(dead.generate(request)).rejects.toMatchObject({ kind: 'network', retryable: true, status: 502 });
  });

  it('reports an abort by the caller as aborted, not as a retryable failure', async () => {
    upstream.reply({ chunks: fixtureSse('openai/chat-stream.sse').slice(0, 1), cut: false });
    const controller = new AbortController();
    controller.abort();
    await expect(adapter.generate(request, { signal: controller.signal })).rejects.toMatchObject({ kind: 'aborted', retryable: false });
  });
});
