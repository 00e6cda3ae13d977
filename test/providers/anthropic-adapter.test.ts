// The Anthropic Messages adapter against documented wire-format fixtures served over HTTP.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createAnthropicAdapter, supportedParameters } from '../../lambdas/providers/anthropic/anthropic-adapter.js';
import { ProviderError } from '../../lambdas/providers/provider-error.js';
import { convertToAnthropicMessages } from '../../lambdas/providers/anthropic/convert-to-anthropic-messages.js';
import type { GenerationRequest, ProviderAdapter, StreamEvent } from '../../lambdas/providers/types.js';
import { collect, fixtureJson, fixtureSse, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';

let upstream: FakeUpstream;
let adapter: ProviderAdapter;

const weatherTool = {
  name: 'get_weather',
  description: 'Get the current weather in a given location',
  parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
};

const request: GenerationRequest = {
  model: 'claude-sonnet-4-5',
  messages: [
    { role: 'system', content: [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: '<the entire contents of Pride and Prejudice>', cache_control: { type: 'ephemeral' } }] },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is in these images?' },
        { type: 'image', url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' },
        { type: 'image', url: 'https://upload.wikimedia.org/wikipedia/commons/a/a7/Camponotus_flavomarginatus_ant.jpg' },
        { type: 'file', filename: 'report.pdf', url: 'data:application/pdf;base64,JVBERi0xLjQ=' },
      ],
    },
    { role: 'user', content: [{ type: 'text', text: 'And what is the weather in Paris?', cache_control: { type: 'ephemeral' } }] },
    {
      role: 'assistant',
      content: [{ type: 'text', text: 'Let me check.' }],
      reasoning: 'The user wants the weather.',
      reasoning_signature: 'EqQBCgIYAhIM',
      tool_calls: [
        { id: 'toolu_1', name: 'get_weather', arguments: '{"location":"Paris"}' },
        { id: 'toolu_2', name: 'get_time', arguments: '{"timezone": "Europe/Par' },
      ],
    },
    { role: 'tool', tool_call_id: 'toolu_1', content: [{ type: 'text', text: '15 degrees' }] },
    { role: 'tool', tool_call_id: 'toolu_2', content: [{ type: 'text', text: 'Here is a map:' }, { type: 'image', url: 'https://example.com/map.png' }] },
    { role: 'user', content: [{ type: 'text', text: 'Thanks!' }] },
  ],
  tools: [weatherTool, { name: 'get_time' }],
  tool_choice: 'required',
  parallel_tool_calls: false,
  max_output_tokens: 1000,
  temperature: 0.5,
  top_p: 0.9,
  top_k: 40,
  stop: ['END'],
  user: 'a1b2c3',
};

const simple: GenerationRequest = { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }] };

async function sentBody(overrides: Partial<GenerationRequest>): Promise<Record<string, unknown>> {
  upstream.reply({ json: fixtureJson('anthropic/message.json') });
  await adapter.generate({ ...simple, ...overrides });
  return upstream.received.at(-1)!.body as Record<string, unknown>;
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
  adapter = createAnthropicAdapter({ baseURL: `${upstream.url}/v1`, apiKey: 'sk-ant-test', headers: { 'anthropic-beta': 'files-api-2025-04-14' } });
});
afterAll(() => upstream.close());

describe('Anthropic adapter: request translation', () => {
  it('translates system, images, documents, merged turns, thinking history, tool calls and results, tools and limits', async () => {
    upstream.reply({ json: fixtureJson('anthropic/message.json') });
    await adapter.generate(request);
    const sent = upstream.received.at(-1)!;
    expect(sent.url).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe('sk-ant-test');
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.headers['anthropic-beta']).toBe('files-api-2025-04-14');
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 1000,
      system: [
        { type: 'text', text: 'Be brief.' },
        { type: 'text', text: '<the entire contents of Pride and Prejudice>', cache_control: { type: 'ephemeral' } },
      ],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in these images?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://upload.wikimedia.org/wikipedia/commons/a/a7/Camponotus_flavomarginatus_ant.jpg' } },
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQ=' }, title: 'report.pdf' },
            { type: 'text', text: 'And what is the weather in Paris?', cache_control: { type: 'ephemeral' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'The user wants the weather.', signature: 'EqQBCgIYAhIM' },
            { type: 'text', text: 'Let me check.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } },
            { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: { raw_arguments: '{"timezone": "Europe/Par' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: '15 degrees' },
            {
              type: 'tool_result',
              tool_use_id: 'toolu_2',
              content: [{ type: 'text', text: 'Here is a map:' }, { type: 'image', source: { type: 'url', url: 'https://example.com/map.png' } }],
            },
            { type: 'text', text: 'Thanks!' },
          ],
        },
      ],
      tools: [
        { name: 'get_weather', description: 'Get the current weather in a given location', input_schema: weatherTool.parameters },
        { name: 'get_time', input_schema: { type: 'object', properties: {} } },
      ],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      temperature: 0.5,
      top_p: 0.9,
      top_k: 40,
      stop_sequences: ['END'],
      metadata: { user_id: 'a1b2c3' },
    });
  });

  it('defaults max_tokens, which Anthropic requires, and sends stream: true when streaming', async () => {
    expect(await sentBody({})).toEqual({ model: 'claude-sonnet-4-5', max_tokens: 4096, messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }] });
    upstream.reply({ chunks: fixtureSse('anthropic/stream-text.sse') });
    await collect(adapter.stream(simple));
    expect(upstream.received.at(-1)!.body).toMatchObject({ stream: true, max_tokens: 4096 });
  });

  it('maps tool_choice and parallel_tool_calls', async () => {
    const tools = [weatherTool];
    expect((await sentBody({ tools, tool_choice: 'auto' })).tool_choice).toEqual({ type: 'auto' });
    expect((await sentBody({ tools, tool_choice: 'none' })).tool_choice).toEqual({ type: 'none' });
    expect((await sentBody({ tools, tool_choice: { name: 'get_weather' } })).tool_choice).toEqual({ type: 'tool', name: 'get_weather' });
    expect((await sentBody({ tools, parallel_tool_calls: false })).tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    expect(await sentBody({ tools })).not.toHaveProperty('tool_choice');
    expect(await sentBody({ tool_choice: 'required' })).not.toHaveProperty('tool_choice');
  });

  it('maps reasoning to a thinking budget kept below max_tokens', async () => {
    expect(await sentBody({ reasoning: { effort: 'high' } })).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 16000 }, max_tokens: 16000 + 4096 });
    expect(await sentBody({ reasoning: { effort: 'low' } })).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 1024 }, max_tokens: 1024 + 4096 });
    expect(await sentBody({ reasoning: { effort: 'medium' }, max_output_tokens: 20000 })).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 4096 }, max_tokens: 20000 });
    expect(await sentBody({ reasoning: { effort: 'high' }, max_output_tokens: 8000 })).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 7999 }, max_tokens: 8000 });
    expect(await sentBody({ reasoning: { max_tokens: 2500 } })).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2500 } });
    expect(await sentBody({ reasoning: { max_tokens: 100 }, max_output_tokens: 500 })).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 1024 }, max_tokens: 1025 });
    expect(await sentBody({ reasoning: { effort: 'none' } })).not.toHaveProperty('thinking');
    expect(await sentBody({ reasoning: { exclude: true } })).not.toHaveProperty('thinking');
  });

  it('asks for a JSON response format through a tool the model is made to call', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const tool = { name: 'lookup', parameters: { type: 'object', properties: {} } };
    expect(await sentBody({ response_format: { type: 'json_schema', name: 'place', description: 'Where it is', schema } })).toMatchObject({
      tools: [{ name: 'json_output', description: expect.stringContaining('place object: Where it is'), input_schema: schema }],
      tool_choice: { type: 'tool', name: 'json_output' },
    });
    expect(await sentBody({ response_format: { type: 'json_object' } })).toMatchObject({
      tools: [{ name: 'json_output', input_schema: { type: 'object', additionalProperties: true } }],
      tool_choice: { type: 'tool', name: 'json_output' },
    });
    // With tools of the caller's: one of them or the JSON tool (any); a name taken by one of them is not reused.
    const withTools = await sentBody({ response_format: { type: 'json_object' }, tools: [tool, { name: 'json_output' }] });
    expect((withTools.tools as Array<{ name: string }>).map((entry) => entry.name)).toEqual(['lookup', 'json_output', 'json_output_2']);
    expect(withTools.tool_choice).toEqual({ type: 'any' });
    // A tool the caller forces is kept; tool_choice none offers the JSON tool alone, forced, once.
    expect((await sentBody({ response_format: { type: 'json_object' }, tools: [tool], tool_choice: { name: 'lookup' } })).tool_choice).toEqual({ type: 'tool', name: 'lookup' });
    const none = await sentBody({ response_format: { type: 'json_object' }, tools: [tool], tool_choice: 'none' });
    expect((none.tools as Array<{ name: string }>).map((entry) => entry.name)).toEqual(['json_output']);
    expect(none.tool_choice).toEqual({ type: 'tool', name: 'json_output', disable_parallel_tool_use: true });
    // Extended thinking allows no forced tool: the system prompt asks for it instead.
    const thinking = await sentBody({ response_format: { type: 'json_object' }, reasoning: { effort: 'low' } });
    expect(thinking).not.toHaveProperty('tool_choice');
    expect(thinking.system).toEqual([{ type: 'text', text: 'Answer by calling the json_output tool with your answer as its input.' }]);
  });

  it('gives the JSON tool\'s call back as the reply\'s text, not as a tool call', async () => {
    const message = fixtureJson('anthropic/message.json') as Record<string, unknown>;
    upstream.reply({ json: { ...message, stop_reason: 'tool_use', content: [{ type: 'tool_use', id: 'toolu_1', name: 'json_output', input: { city: 'Paris' } }] } });
    const result = await adapter.generate({ ...simple, response_format: { type: 'json_object' } });
    expect(result).toMatchObject({ text: '{"city":"Paris"}', tool_calls: [], finish_reason: 'stop', native_finish_reason: 'tool_use' });
    // Text written before the call (extended thinking asks for it instead of forcing it) is not the answer.
    upstream.reply({ json: { ...message, stop_reason: 'tool_use', content: [{ type: 'text', text: 'Here it is:' }, { type: 'tool_use', id: 'toolu_3', name: 'json_output', input: { a: 1 } }] } });
    expect((await adapter.generate({ ...simple, response_format: { type: 'json_object' }, reasoning: { effort: 'low' } })).text).toBe('{"a":1}');
    // Another tool's call is still a tool call.
    upstream.reply({ json: { ...message, stop_reason: 'tool_use', content: [{ type: 'tool_use', id: 'toolu_2', name: 'lookup', input: { q: 'x' } }] } });
    const other = await adapter.generate({ ...simple, response_format: { type: 'json_object' }, tools: [{ name: 'lookup' }] });
    expect(other).toMatchObject({ text: '', tool_calls: [{ id: 'toolu_2', name: 'lookup', arguments: '{"q":"x"}' }], finish_reason: 'tool_calls' });
  });

  it('streams the JSON tool\'s input as text deltas, and a call that streamed no input as its whole input', async () => {
    const chunks = (deltas: string[], input = '{}') => [
      'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_j","usage":{"input_tokens":5,"output_tokens":1}}}\n\n',
      `event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_j","name":"json_output","input":${input}}}\n\n`,
      ...deltas.map((partial) => `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: partial } })}\n\n`),
      'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":7}}\n\n',
      'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    ];
    const textOf = (events: StreamEvent[]) => events.filter((event) => event.type === 'text-delta').map((event) => (event as { delta: string }).delta);
    upstream.reply({ chunks: chunks(['{"city":', ' "Par', 'is"}']) });
    const events = await collect(adapter.stream({ ...simple, response_format: { type: 'json_schema', name: 'place', schema: { type: 'object' } } }));
    expect(textOf(events)).toEqual(['{"city":', ' "Par', 'is"}']);
    expect(events.some((event) => event.type === 'tool-call-delta')).toBe(false);
    expect(events.at(-1)).toMatchObject({ type: 'finish', finish_reason: 'stop', native_finish_reason: 'tool_use' });
    upstream.reply({ chunks: chunks([], '{"city":"Rome"}') });
    expect(textOf(await collect(adapter.stream({ ...simple, response_format: { type: 'json_object' } })))).toEqual(['{"city":"Rome"}']);
    // Text before the call is held back and dropped; a reply that never calls the tool gives its text at the end.
    const textFirst = chunks(['{"a":1}']);
    textFirst.splice(1, 0,
      'event: content_block_start\ndata: {"type":"content_block_start","index":5,"content_block":{"type":"text","text":""}}\n\n',
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":5,"delta":{"type":"text_delta","text":"Here it is:"}}\n\n',
      'event: content_block_stop\ndata: {"type":"content_block_stop","index":5}\n\n');
    upstream.reply({ chunks: textFirst });
    expect(textOf(await collect(adapter.stream({ ...simple, response_format: { type: 'json_object' } })))).toEqual(['{"a":1}']);
    upstream.reply({ chunks: fixtureSse('anthropic/stream-text.sse') });
    const plain = textOf(await collect(adapter.stream({ ...simple, response_format: { type: 'json_object' } })));
    expect(plain).toHaveLength(1);
    upstream.reply({ chunks: fixtureSse('anthropic/stream-text.sse') });
    expect(plain[0]).toBe(textOf(await collect(adapter.stream(simple))).join(''));
  });

  it('refuses audio with a 400 instead of dropping it, without calling upstream; Message Batches refuse JSON formats', async () => {
    const before = upstream.received.length;
    await expect(adapter.generate({ ...simple, messages: [{ role: 'user', content: [{ type: 'audio', data: 'AAAA', format: 'wav' }] }] })).rejects.toMatchObject({ status: 400 });
    expect(upstream.received.length).toBe(before);
    const err = (() => {
      try {
        return convertToAnthropicMessages({ ...simple, response_format: { type: 'json_object' } }, { stream: false, provider: 'anthropic', emulateJson: false });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ kind: 'http', status: 400, retryable: false, message: expect.stringContaining('response_format json_object') });
    expect(supportedParameters).toEqual(expect.arrayContaining(['temperature', 'top_p', 'top_k', 'stop', 'max_output_tokens', 'tools', 'tool_choice', 'reasoning', 'response_format']));
  });
});

describe('Anthropic adapter: sampling settings', () => {
  it('keeps temperature at most 1 and leaves out stop sequences of whitespace only, which Anthropic refuses', () => {
    const body = (extra: Partial<GenerationRequest>) => convertToAnthropicMessages({ ...simple, ...extra }, { stream: false, provider: 'anthropic' });
    expect(body({ temperature: 2, stop: ['\n', '', 'END', '\n\n'] })).toMatchObject({ temperature: 1, stop_sequences: ['END'] });
    expect(body({ temperature: 0.3, stop: ['\n'] })).toMatchObject({ temperature: 0.3 });
    expect(body({ stop: ['\n'] })).not.toHaveProperty('stop_sequences');
  });
});

describe('Anthropic adapter: tool calls of the history', () => {
  it.each([
    ['{"q":"cats"}', { q: 'cats' }],
    ['', {}],
    ['{bad json', { raw_arguments: '{bad json' }],
    ['[1,2]', { raw_arguments: '[1,2]' }],
    ['null', { raw_arguments: 'null' }],
  ])('sends arguments %j as the input %j (an object, keeping what the model wrote)', async (args, input) => {
    const history: GenerationRequest = {
      ...simple,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'x' }] },
        { role: 'assistant', content: [], tool_calls: [{ id: 'call_1', name: 'f', arguments: args }] },
        { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: 'r' }] },
      ],
    };
    const body = convertToAnthropicMessages(history, { stream: false, provider: 'anthropic', emulateJson: false });
    expect((body.messages as Array<{ content: unknown }>)[1]!.content).toEqual([{ type: 'tool_use', id: 'call_1', name: 'f', input }]);
  });
});

describe('Anthropic adapter: replies', () => {
  it('maps a text message', async () => {
    upstream.reply({ json: fixtureJson('anthropic/message.json') });
    expect(await adapter.generate(simple)).toEqual({
      provider_id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
      text: 'Hello!',
      tool_calls: [],
      finish_reason: 'stop',
      native_finish_reason: 'end_turn',
      usage: { input_tokens: 12, output_tokens: 6, cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 },
    });
  });

  it('maps tool_use blocks to tool calls with JSON arguments', async () => {
    upstream.reply({ json: fixtureJson('anthropic/message-tool-use.json') });
    const result = await adapter.generate(simple);
    expect(result).toMatchObject({
      provider_id: 'msg_01Aq9w938a90dw8q',
      text: "I'll check the current weather in San Francisco for you.",
      tool_calls: [{ id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', arguments: '{"location":"San Francisco, CA","unit":"celsius"}' }],
      finish_reason: 'tool_calls',
      native_finish_reason: 'tool_use',
    });
  });

  it('maps thinking blocks to reasoning', async () => {
    upstream.reply({ json: fixtureJson('anthropic/message-thinking.json') });
    const result = await adapter.generate(simple);
    expect(result.reasoning).toBe('The user wants to know the current weather in Paris. I have access to a function `get_weather`...');
    expect(result.text).toBe('I can help you get the current weather information for Paris. Let me check that for you');
    expect(result.tool_calls).toEqual([{ id: 'toolu_01CswdEQBMshySk6Y9DFKrfq', name: 'get_weather', arguments: '{"location":"Paris"}' }]);
    expect(result.finish_reason).toBe('tool_calls');
    // The thinking block's signature: required when the thinking goes back with the tool result.
    expect(result.reasoning_signature).toBe('BDaL4VrbR2Oj0hO4XpJxT28J5TILnCrrUXoKiiNBZW9P+nr8XSj1zuZzAl4egiCCpQNvfyUuFFJP5CncdYZEQPPmLxYsNrcs....');
  });

  it('counts cache reads and writes inside input tokens', async () => {
    upstream.reply({ json: fixtureJson('anthropic/message-cache-write.json') });
    expect((await adapter.generate(simple)).usage).toEqual({ input_tokens: 21 + 188086, output_tokens: 393, cached_input_tokens: 0, cache_write_tokens: 188086, reasoning_tokens: 0 });
    upstream.reply({ json: fixtureJson('anthropic/message-cache-read.json') });
    expect((await adapter.generate(simple)).usage).toEqual({ input_tokens: 21 + 188086, output_tokens: 393, cached_input_tokens: 188086, cache_write_tokens: 0, reasoning_tokens: 0 });
  });

  it('maps stop reasons', async () => {
    const message = fixtureJson('anthropic/message.json') as Record<string, unknown>;
    const cases: [string, string][] = [['stop_sequence', 'stop'], ['max_tokens', 'length'], ['refusal', 'content_filter'], ['tool_use', 'tool_calls']];
    for (const [stopReason, finish] of cases) {
      upstream.reply({ json: { ...message, stop_reason: stopReason } });
      expect(await adapter.generate(simple)).toMatchObject({ finish_reason: finish, native_finish_reason: stopReason });
    }
  });
});

describe('Anthropic adapter: streaming', () => {
  it('streams text deltas and one finish with usage', async () => {
    upstream.reply({ chunks: fixtureSse('anthropic/stream-text.sse') });
    expect(await collect(adapter.stream(simple))).toEqual([
      { type: 'text-delta', delta: 'Hello' },
      { type: 'text-delta', delta: '!' },
      {
        type: 'finish', finish_reason: 'stop', native_finish_reason: 'end_turn', provider_id: 'msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY',
        usage: { input_tokens: 25, output_tokens: 15, cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 },
      },
    ]);
  });

  it('streams a tool call from partial JSON deltas', async () => {
    upstream.reply({ chunks: fixtureSse('anthropic/stream-tool-use.sse') });
    const events = await collect(adapter.stream(simple));
    const text = events.filter((event) => event.type === 'text-delta').map((event) => (event as { delta: string }).delta).join('');
    expect(text).toBe("Okay, let's check the weather for San Francisco, CA:");
    const calls = events.filter((event): event is Extract<StreamEvent, { type: 'tool-call-delta' }> => event.type === 'tool-call-delta');
    expect(calls[0]).toEqual({ type: 'tool-call-delta', index: 0, id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather', arguments_delta: '' });
    expect(calls.slice(1).map((call) => call.arguments_delta)).toEqual(['{"location":', ' "San', ' Francisc', 'o,', ' CA"', ', ', '"unit": "fah', 'renheit"}']);
    expect(calls.every((call) => call.index === 0)).toBe(true);
    expect(JSON.parse(calls.map((call) => call.arguments_delta).join(''))).toEqual({ location: 'San Francisco, CA', unit: 'fahrenheit' });
    expect(events.at(-1)).toEqual({
      type: 'finish', finish_reason: 'tool_calls', native_finish_reason: 'tool_use', provider_id: 'msg_014p7gG3wDgGV9EUtLvnow3U',
      usage: { input_tokens: 472, output_tokens: 89, cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 },
    });
    expect(events.filter((event) => event.type === 'finish')).toHaveLength(1);
  });

  it('gives a tool call that streams no input parseable arguments', async () => {
    upstream.reply({
      chunks: [
        'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":5,"output_tokens":1}}}\n\n',
        'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_9","name":"get_location","input":{}}}\n\n',
        'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
        'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":7}}\n\n',
        'event: message_stop\ndata: {"type":"message_stop"}\n\n',
      ],
    });
    const events = await collect(adapter.stream(simple));
    expect(events.slice(0, 2)).toEqual([
      { type: 'tool-call-delta', index: 0, id: 'toolu_9', name: 'get_location', arguments_delta: '' },
      { type: 'tool-call-delta', index: 0, arguments_delta: '{}' },
    ]);
  });

  it('streams thinking as reasoning deltas before the text', async () => {
    upstream.reply({ chunks: fixtureSse('anthropic/stream-thinking.sse') });
    const events = await collect(adapter.stream({ ...simple, reasoning: { effort: 'high' } }));
    const reasoning = events.filter((event) => event.type === 'reasoning-delta').map((event) => (event as { delta: string }).delta).join('');
    expect(reasoning).toBe('Let me solve this step by step:\n\n1. First break down 27 * 453\n2. 453 = 400 + 50 + 3\n3. 27 * 400 = 10,800\n4. 27 * 50 = 1,350\n5. 27 * 3 = 81\n6. 10,800 + 1,350 + 81 = 12,231');
    expect(events.slice(-2)).toEqual([
      { type: 'text-delta', delta: '27 * 453 = 12,231' },
      { type: 'finish', finish_reason: 'stop', native_finish_reason: 'end_turn', provider_id: 'msg_01...', usage: { input_tokens: 0, output_tokens: 0, cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 } },
    ]);
    expect(events.findIndex((event) => event.type === 'text-delta')).toBeGreaterThan(events.findLastIndex((event) => event.type === 'reasoning-delta'));
    expect(events.filter((event) => event.type === 'reasoning-signature')).toEqual([{ type: 'reasoning-signature', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds...' }]);
  });

  it('turns an error event mid-stream into a ProviderError (overloaded → 529, retryable)', async () => {
    upstream.reply({ chunks: fixtureSse('anthropic/stream-error.sse') });
    const seen: StreamEvent[] = [];
    const err = await (async () => {
      for await (const event of adapter.stream(simple)) seen.push(event);
    })().catch((e: unknown) => e);
    expect(seen).toEqual([{ type: 'text-delta', delta: 'Hello' }]);
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ status: 529, retryable: true, providerCode: 'overloaded_error', message: 'Overloaded' });
  });

  it('reports a stream cut or ended before message_stop as a 502', async () => {
    upstream.reply({ chunks: fixtureSse('anthropic/stream-text.sse').slice(0, 4), cut: true });
    await expect(collect(adapter.stream(simple))).rejects.toMatchObject({ name: 'ProviderError', status: 502, retryable: true });
    upstream.reply({ chunks: fixtureSse('anthropic/stream-text.sse').slice(0, 7) });
    await expect(collect(adapter.stream(simple))).rejects.toMatchObject({ name: 'ProviderError', status: 502 });
  });
});

describe('Anthropic adapter: errors', () => {
  it('turns error replies into ProviderErrors with the provider message, type and Retry-After', async () => {
    upstream.reply({ status: 429, headers: { 'retry-after': '7' }, json: fixtureJson('anthropic/error-429.json') });
    const limited = await adapter.generate(simple).catch((err: unknown) => err);
    expect(limited).toBeInstanceOf(ProviderError);
    expect(limited).toMatchObject({ provider: 'anthropic', status: 429, retryable: true, retryAfterMs: 7000, providerCode: 'rate_limit_error' });
    expect((limited as Error).message).toBe('Number of request tokens has exceeded your per-minute rate limit');

    upstream.reply({ status: 400, json: fixtureJson('anthropic/error-400.json') });
    await expect(adapter.generate(simple)).rejects.toMatchObject({ status: 400, retryable: false, providerCode: 'invalid_request_error' });

    upstream.reply({ status: 529, json: fixtureJson('anthropic/error-529.json') });
    await expect(adapter.generate(simple)).rejects.toMatchObject({ status: 529, retryable: true, providerCode: 'overloaded_error', message: 'Overloaded' });

    upstream.reply({ status: 529, json: fixtureJson('anthropic/error-529.json') });
    await expect(collect(adapter.stream(simple))).rejects.toMatchObject({ status: 529, retryable: true });
  });

  it('rejects replies and events that break the format', async () => {
    upstream.reply({ json: { type: 'message', content: 'Hello!' } });
    await expect(adapter.generate(simple)).rejects.toMatchObject({ kind: 'invalid-response', status: 502 });
    upstream.reply({ json: { type: 'message', content: [{ type: 'tool_use', name: 'x' }] } });
    await expect(adapter.generate(simple)).rejects.toMatchObject({ kind: 'invalid-response' });
    upstream.reply({
      chunks: [
        'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1"}}\n\n',
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta"}}\n\n',
      ],
    });
    await expect(collect(adapter.stream(simple))).rejects.toMatchObject({ kind: 'invalid-response', status: 502 });
  });

  it('ignores block, delta and event types it does not know', async () => {
    upstream.reply({
      json: { id: 'msg_2', content: [{ type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} }, { type: 'text', text: 'Done.' }], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 2 } },
    });
    expect(await adapter.generate(simple)).toMatchObject({ text: 'Done.', tool_calls: [] });
  });
});
