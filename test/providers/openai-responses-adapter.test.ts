// The OpenAI Responses adapter against documented wire-format fixtures served over HTTP.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createOpenAIResponsesAdapter, supportedParameters } from '../../lambdas/providers/openai/openai-responses-adapter.js';
import { ProviderError } from '../../lambdas/providers/provider-error.js';
import type { GenerationRequest, ProviderAdapter, StreamEvent } from '../../lambdas/providers/types.js';
import { collect, fixtureJson, fixtureSse, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';

let upstream: FakeUpstream;
let adapter: ProviderAdapter;

const weatherParameters = {
  type: 'object',
  properties: { location: { type: 'string', description: 'City and country e.g. Bogotá, Colombia' } },
  required: ['location'],
  additionalProperties: false,
};

const request: GenerationRequest = {
  model: 'gpt-5',
  messages: [
    { role: 'system', content: [{ type: 'text', text: 'You are a helpful assistant.' }] },
    { role: 'system', content: [{ type: 'text', text: 'Answer in English.' }] },
    {
      role: 'user',
      content: [
        { type: 'text', text: "Describe what's in this image" },
        { type: 'image', url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' },
        { type: 'image', url: 'https://upload.wikimedia.org/wikipedia/commons/thumb/d/dd/Gfp-wisconsin-madison-the-nature-boardwalk.jpg/2560px-Gfp-wisconsin-madison-the-nature-boardwalk.jpg' },
        { type: 'file', filename: 'report.pdf', url: 'data:application/pdf;base64,JVBERi0xLjQ=' },
        { type: 'file', url: 'https://example.com/letter.pdf' },
      ],
    },
    {
      role: 'assistant',
      content: [{ type: 'text', text: 'A wooden boardwalk. ' }, { type: 'text', text: 'Let me check the weather.' }],
      reasoning: 'The user wants the weather.',
      tool_calls: [{ id: 'call_1', name: 'get_weather', arguments: '{"location":"Paris, France"}' }],
    },
    { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: '15 degrees' }] },
    { role: 'assistant', content: [], tool_calls: [{ id: 'call_2', name: 'get_map', arguments: '{}' }] },
    { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'image', url: 'https://example.com/map.png' }] },
    { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
    { role: 'user', content: [{ type: 'text', text: 'Thanks!' }] },
  ],
  tools: [{ name: 'get_weather', description: 'Get current temperature for a given location.', parameters: weatherParameters, strict: true }, { name: 'get_map' }],
  tool_choice: { name: 'get_weather' },
  parallel_tool_calls: false,
  max_output_tokens: 500,
  temperature: 0.7,
  top_p: 0.9,
  top_logprobs: 2,
  user: 'a1b2c3',
  service_tier: 'flex',
  response_format: { type: 'json_schema', name: 'weather', schema: { type: 'object' }, strict: true, description: 'A weather report' },
  reasoning: { effort: 'low', summary: 'auto' },
  stop: ['END'],
  seed: 7,
};

const simple: GenerationRequest = { model: 'gpt-5', messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello!' }] }] };

async function sentBody(overrides: Partial<GenerationRequest>): Promise<Record<string, unknown>> {
  upstream.reply({ json: fixtureJson('openai/responses-text.json') });
  await adapter.generate({ ...simple, ...overrides });
  return upstream.received.at(-1)!.body as Record<string, unknown>;
}

const usageOf = (input: number, output: number, cached = 0, reasoning = 0) => ({
  input_tokens: input, output_tokens: output, cached_input_tokens: cached, cache_write_tokens: 0, reasoning_tokens: reasoning,
});

beforeAll(async () => {
  upstream = await startFakeUpstream();
  adapter = createOpenAIResponsesAdapter({ baseURL: `${upstream.url}/v1`, apiKey: 'sk-test' });
});
afterAll(() => upstream.close());

describe('OpenAI Responses adapter: request translation', () => {
  it('translates instructions, input items, images, files, tool calls and outputs, tools, format, reasoning and limits', async () => {
    upstream.reply({ json: fixtureJson('openai/responses-text.json') });
    await adapter.generate(request);
    const sent = upstream.received.at(-1)!;
    expect(sent.url).toBe('/v1/responses');
    expect(sent.headers.authorization).toBe('Bearer sk-test');
    expect(sent.body).toEqual({
      model: 'gpt-5',
      instructions: 'You are a helpful assistant.\n\nAnswer in English.',
      input: [
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: "Describe what's in this image" },
            { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' },
            { type: 'input_image', image_url: 'https://upload.wikimedia.org/wikipedia/commons/thumb/d/dd/Gfp-wisconsin-madison-the-nature-boardwalk.jpg/2560px-Gfp-wisconsin-madison-the-nature-boardwalk.jpg', detail: 'auto' },
            { type: 'input_file', filename: 'report.pdf', file_data: 'data:application/pdf;base64,JVBERi0xLjQ=' },
            { type: 'input_file', file_url: 'https://example.com/letter.pdf' },
          ],
        },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'A wooden boardwalk. Let me check the weather.' }] },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"location":"Paris, France"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '15 degrees' },
        { type: 'function_call', call_id: 'call_2', name: 'get_map', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_2', output: [{ type: 'input_image', image_url: 'https://example.com/map.png', detail: 'auto' }] },
        { type: 'message', role: 'system', content: [{ type: 'input_text', text: 'Be brief.' }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Thanks!' }] },
      ],
      store: false,
      tools: [
        { type: 'function', name: 'get_weather', description: 'Get current temperature for a given location.', parameters: weatherParameters, strict: true },
        { type: 'function', name: 'get_map', parameters: { type: 'object', properties: {} }, strict: false },
      ],
      tool_choice: { type: 'function', name: 'get_weather' },
      parallel_tool_calls: false,
      max_output_tokens: 500,
      temperature: 0.7,
      top_p: 0.9,
      top_logprobs: 2,
      user: 'a1b2c3',
      service_tier: 'flex',
      text: { format: { type: 'json_schema', name: 'weather', schema: { type: 'object' }, strict: true, description: 'A weather report' } },
      reasoning: { effort: 'low', summary: 'auto' },
    });
  });

  it('maps tool_choice, text formats and reasoning options, and streams with stream: true', async () => {
    const tools = [{ name: 'get_weather' }];
    expect((await sentBody({ tools, tool_choice: 'required' })).tool_choice).toBe('required');
    expect((await sentBody({ tools, tool_choice: 'none' })).tool_choice).toBe('none');
    expect((await sentBody({ response_format: { type: 'json_object' } })).text).toEqual({ format: { type: 'json_object' } });
    expect((await sentBody({ reasoning: { effort: 'max' } })).reasoning).toEqual({ effort: 'xhigh' });
    expect((await sentBody({ reasoning: { summary: 'detailed' } })).reasoning).toEqual({ summary: 'detailed' });
    expect(await sentBody({ reasoning: { exclude: true, max_tokens: 1000 } })).not.toHaveProperty('reasoning');
    expect(await sentBody({})).toEqual({ model: 'gpt-5', input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hello!' }] }], store: false });

    upstream.reply({ chunks: fixtureSse('openai/responses-stream-text.sse') });
    await collect(adapter.stream(simple));
    expect(upstream.received.at(-1)!.body).toMatchObject({ stream: true, store: false });
  });

  it('refuses audio input with a 400 without calling upstream, and lists what it supports', async () => {
    const before = upstream.received.length;
    await expect(adapter.generate({ ...simple, messages: [{ role: 'user', content: [{ type: 'audio', data: 'AAAA', format: 'wav' }] }] })).rejects.toMatchObject({ kind: 'http', status: 400, retryable: false });
    expect(upstream.received.length).toBe(before);
    expect(supportedParameters).toEqual(expect.arrayContaining(['temperature', 'top_p', 'max_output_tokens', 'tools', 'tool_choice', 'parallel_tool_calls', 'reasoning', 'response_format', 'user', 'service_tier', 'top_logprobs']));
    expect(supportedParameters).not.toContain('stop');
  });
});

describe('OpenAI Responses adapter: replies', () => {
  it('maps a text response', async () => {
    upstream.reply({ json: fixtureJson('openai/responses-text.json') });
    const result = await adapter.generate(simple);
    expect(result).toEqual({
      provider_id: 'resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b',
      text: expect.stringMatching(/^In a peaceful grove beneath a silver moon, .* her hoofprints sparkled like stardust\.$/),
      tool_calls: [],
      finish_reason: 'stop',
      native_finish_reason: 'completed',
      usage: usageOf(36, 87),
    });
  });

  it('maps function_call items to tool calls', async () => {
    upstream.reply({ json: fixtureJson('openai/responses-function-call.json') });
    expect(await adapter.generate(simple)).toEqual({
      provider_id: 'resp_67ca09c5efe0819096d0511c92b8c890096610f474011cc0',
      text: '',
      tool_calls: [{ id: 'call_unLAR8MvFNptuiZK6K6HCy5k', name: 'get_current_weather', arguments: '{"location":"Boston, MA","unit":"celsius"}' }],
      finish_reason: 'tool_calls',
      native_finish_reason: 'completed',
      usage: usageOf(291, 23),
    });
  });

  it('maps reasoning summaries and reasoning tokens', async () => {
    upstream.reply({ json: fixtureJson('openai/responses-reasoning.json') });
    const result = await adapter.generate(simple);
    expect(result.text).toBe('The capital of France is Paris.');
    expect(result.reasoning).toMatch(/^\*\*Answering a simple question\*\*\n\nI’m looking at a straightforward question/);
    expect(result.usage).toEqual(usageOf(75, 1186, 0, 1024));
  });

  it('maps cached input tokens', async () => {
    const body = fixtureJson('openai/responses-text.json') as Record<string, unknown>;
    upstream.reply({ json: { ...body, usage: { input_tokens: 2006, input_tokens_details: { cached_tokens: 1920 }, output_tokens: 300, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 2306 } } });
    expect((await adapter.generate(simple)).usage).toEqual(usageOf(2006, 300, 1920));
  });

  it('maps an incomplete response to length, and a content filter to content_filter', async () => {
    upstream.reply({ json: fixtureJson('openai/responses-incomplete.json') });
    expect(await adapter.generate(simple)).toEqual({
      provider_id: 'resp_123', text: '', tool_calls: [], finish_reason: 'length', native_finish_reason: 'max_output_tokens', usage: usageOf(0, 0),
    });
    const body = fixtureJson('openai/responses-incomplete.json') as Record<string, unknown>;
    upstream.reply({ json: { ...body, incomplete_details: { reason: 'content_filter' } } });
    expect(await adapter.generate(simple)).toMatchObject({ finish_reason: 'content_filter', native_finish_reason: 'content_filter' });
  });

  it('turns a failed response into a ProviderError', async () => {
    const body = fixtureJson('openai/responses-incomplete.json') as Record<string, unknown>;
    upstream.reply({ json: { ...body, status: 'failed', incomplete_details: null, error: { code: 'server_error', message: 'The model failed to generate a response.' } } });
    await expect(adapter.generate(simple)).rejects.toMatchObject({ name: 'ProviderError', status: 500, retryable: true, providerCode: 'server_error', message: 'The model failed to generate a response.' });
  });
});

describe('OpenAI Responses adapter: streaming', () => {
  it('streams text deltas and one finish with usage', async () => {
    upstream.reply({ chunks: fixtureSse('openai/responses-stream-text.sse') });
    const events = await collect(adapter.stream(simple));
    expect(events.filter((event) => event.type === 'text-delta').map((event) => (event as { delta: string }).delta)).toEqual(['Hi', ' there', '!', ' How', ' can', ' I', ' assist', ' you', ' today', '?']);
    expect(events.at(-1)).toEqual({
      type: 'finish', finish_reason: 'stop', native_finish_reason: 'completed', provider_id: 'resp_67c9fdcecf488190bdd9a0409de3a1ec07b8b0ad4e5eb654', usage: usageOf(37, 11),
    });
    expect(events.filter((event) => event.type === 'finish')).toHaveLength(1);
  });

  it('streams a function call: id and name first, then argument fragments', async () => {
    upstream.reply({ chunks: fixtureSse('openai/responses-stream-function-call.sse') });
    const events = await collect(adapter.stream(simple));
    expect(events).toEqual([
      { type: 'tool-call-delta', index: 0, id: 'call_1234xyz', name: 'get_weather', arguments_delta: '' },
      { type: 'tool-call-delta', index: 0, arguments_delta: '{"' },
      { type: 'tool-call-delta', index: 0, arguments_delta: 'location' },
      { type: 'tool-call-delta', index: 0, arguments_delta: '":"' },
      { type: 'tool-call-delta', index: 0, arguments_delta: 'Paris' },
      { type: 'tool-call-delta', index: 0, arguments_delta: ',' },
      { type: 'tool-call-delta', index: 0, arguments_delta: ' France' },
      { type: 'tool-call-delta', index: 0, arguments_delta: '"}' },
      { type: 'finish', finish_reason: 'tool_calls', native_finish_reason: 'completed', provider_id: 'resp_1234xyz', usage: usageOf(291, 23) },
    ]);
  });

  it('sends a function call announced only when done', async () => {
    upstream.reply({
      chunks: [
        'event: response.output_item.done\ndata: {"type":"response.output_item.done","output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_9","name":"get_time","arguments":"{\\"tz\\":\\"UTC\\"}"}}\n\n',
        'event: response.completed\ndata: {"type":"response.completed","response":{"id":"resp_9","status":"completed","output":[],"usage":null}}\n\n',
      ],
    });
    expect(await collect(adapter.stream(simple))).toEqual([
      { type: 'tool-call-delta', index: 0, id: 'call_9', name: 'get_time', arguments_delta: '{"tz":"UTC"}' },
      { type: 'finish', finish_reason: 'tool_calls', native_finish_reason: 'completed', provider_id: 'resp_9', usage: usageOf(0, 0) },
    ]);
  });

  it('streams reasoning summaries as reasoning deltas', async () => {
    upstream.reply({ chunks: fixtureSse('openai/responses-stream-reasoning.sse') });
    const events = await collect(adapter.stream({ ...simple, reasoning: { effort: 'medium', summary: 'auto' } }));
    expect(events.map((event) => event.type)).toEqual(['reasoning-delta', 'text-delta', 'finish']);
    expect(events[0]).toMatchObject({ delta: expect.stringMatching(/^\*\*Responding to a greeting\*\*/) });
    expect(events[1]).toEqual({ type: 'text-delta', delta: 'Hello! How can I assist you today?' });
    expect(events[2]).toMatchObject({ finish_reason: 'stop', usage: usageOf(75, 1186, 0, 1024) });
  });

  it('streams raw reasoning text and separates summary parts', async () => {
    upstream.reply({
      chunks: [
        'event: response.reasoning_text.delta\ndata: {"type":"response.reasoning_text.delta","item_id":"rs_123","output_index":0,"content_index":0,"delta":"The","sequence_number":1}\n\n',
        'event: response.reasoning_summary_part.added\ndata: {"type":"response.reasoning_summary_part.added","item_id":"rs_1","output_index":0,"summary_index":1,"part":{"type":"summary_text","text":""}}\n\n',
        'event: response.reasoning_summary_text.delta\ndata: {"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":0,"summary_index":1,"delta":"Next"}\n\n',
        'event: response.completed\ndata: {"type":"response.completed","response":{"id":"resp_1","status":"completed"}}\n\n',
      ],
    });
    const events = await collect(adapter.stream(simple));
    expect(events.filter((event) => event.type === 'reasoning-delta').map((event) => (event as { delta: string }).delta)).toEqual(['The', '\n\n', 'Next']);
  });

  it('finishes an incomplete stream with length', async () => {
    upstream.reply({ chunks: fixtureSse('openai/responses-stream-incomplete.sse') });
    expect(await collect(adapter.stream(simple))).toEqual([
      { type: 'text-delta', delta: 'In' },
      { type: 'finish', finish_reason: 'length', native_finish_reason: 'max_tokens', provider_id: 'resp_123', usage: usageOf(0, 0) },
    ]);
  });

  it('turns response.failed and error events into ProviderErrors', async () => {
    upstream.reply({ chunks: fixtureSse('openai/responses-stream-failed.sse') });
    const failed = await collect(adapter.stream(simple)).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(ProviderError);
    expect(failed).toMatchObject({ status: 500, retryable: true, providerCode: 'server_error', message: 'The model failed to generate a response.' });

    upstream.reply({ chunks: fixtureSse('openai/responses-stream-error.sse') });
    await expect(collect(adapter.stream(simple))).rejects.toMatchObject({ name: 'ProviderError', status: 502, providerCode: 'ERR_SOMETHING', message: 'Something went wrong' });

    upstream.reply({ chunks: ['event: error\ndata: {"type":"error","code":"rate_limit_exceeded","message":"Rate limit reached","param":null}\n\n'] });
    await expect(collect(adapter.stream(simple))).rejects.toMatchObject({ status: 429, retryable: true, providerCode: 'rate_limit_exceeded' });
  });

  it('reports a stream cut or ended before its final event as a 502', async () => {
    upstream.reply({ chunks: fixtureSse('openai/responses-stream-text.sse').slice(0, 6), cut: true });
    await expect(collect(adapter.stream(simple))).rejects.toMatchObject({ name: 'ProviderError', status: 502, retryable: true });
    upstream.reply({ chunks: fixtureSse('openai/responses-stream-text.sse').slice(0, -1) });
    await expect(collect(adapter.stream(simple))).rejects.toMatchObject({ name: 'ProviderError', status: 502 });
  });
});

describe('OpenAI Responses adapter: errors', () => {
  it('turns error replies into ProviderErrors with the provider message, code and Retry-After', async () => {
    upstream.reply({ status: 429, headers: { 'retry-after': '2' }, json: fixtureJson('openai/error-429.json') });
    const limited = await adapter.generate(simple).catch((err: unknown) => err);
    expect(limited).toBeInstanceOf(ProviderError);
    expect(limited).toMatchObject({ provider: 'openai', status: 429, retryable: true, retryAfterMs: 2000, providerCode: 'rate_limit_exceeded' });
    expect((limited as Error).message).toContain('Rate limit reached');

    upstream.reply({ status: 400, json: fixtureJson('openai/error-400.json') });
    await expect(adapter.generate(simple)).rejects.toMatchObject({ status: 400, retryable: false, providerCode: 'invalid_value' });

    upstream.reply({ status: 503, text: '<html>unavailable</html>' });
    await expect(collect(adapter.stream(simple))).rejects.toMatchObject({ status: 503, retryable: true });
  });

  it('rejects replies and events that break the format, and ignores unknown item and event types', async () => {
    upstream.reply({ json: { id: 'resp_1', status: 'completed', output: 'Hello' } });
    await expect(adapter.generate(simple)).rejects.toMatchObject({ kind: 'invalid-response', status: 502 });
    upstream.reply({ json: { id: 'resp_1', status: 'completed', output: [{ type: 'function_call', name: 'x', arguments: '{}' }] } });
    await expect(adapter.generate(simple)).rejects.toMatchObject({ kind: 'invalid-response' });
    upstream.reply({ chunks: ['event: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_id":"msg_1","output_index":0}\n\n'] });
    await expect(collect(adapter.stream(simple))).rejects.toMatchObject({ kind: 'invalid-response', status: 502 });

    upstream.reply({ json: { id: 'resp_2', status: 'completed', output: [{ type: 'web_search_call', id: 'ws_1', status: 'completed' }, { type: 'message', content: [{ type: 'output_text', text: 'Found it.' }] }] } });
    expect(await adapter.generate(simple)).toMatchObject({ text: 'Found it.', tool_calls: [], finish_reason: 'stop' });
    upstream.reply({
      chunks: [
        'event: response.web_search_call.searching\ndata: {"type":"response.web_search_call.searching","output_index":0,"item_id":"ws_123","sequence_number":0}\n\n',
        'event: response.completed\ndata: {"type":"response.completed","response":{"id":"resp_3","status":"completed","output":[]}}\n\n',
      ],
    });
    const events: StreamEvent[] = await collect(adapter.stream(simple));
    expect(events).toEqual([{ type: 'finish', finish_reason: 'stop', native_finish_reason: 'completed', provider_id: 'resp_3', usage: usageOf(0, 0) }]);
  });
});
