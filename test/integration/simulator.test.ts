// The upstream simulator: the four provider wire formats (OpenAI Chat Completions, OpenAI Responses,
// Anthropic Messages, Gemini) and its scripted models, seen through `fetch` like any client would.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startSimulator, type Simulator } from '../../bin/simulator/server.js';

let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
});
afterAll(() => sim.close());

type Body = Record<string, any>;
interface SseEvent {
  event: string | undefined;
  data: string;
}
interface StreamRead {
  events: SseEvent[];
  /** Raw body text received. */
  text: string;
  /** The body reader's error, when the stream did not end cleanly. */
  error: unknown;
}

const tokens = (chars: number) => Math.max(1, Math.ceil(chars / 4));

function post(path: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
  return fetch(`${sim.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal,
  });
}

/** Read a whole body, keeping whatever arrived before an error, and split it into SSE events. */
async function readStream(res: Response): Promise<StreamRead> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let error: unknown;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    text += decoder.decode();
  } catch (err) {
    error = err;
  }
  const events: SseEvent[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    if (block.trim() === '') continue;
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length > 0) events.push({ event, data: data.join('\n') });
  }
  return { events, text, error };
}

const json = (event: SseEvent): Body => JSON.parse(event.data) as Body;

/** No streamed piece may start or end inside a surrogate pair. */
function expectWholeCodePoints(pieces: string[]): void {
  for (const piece of pieces) {
    expect(/[\uD800-\uDBFF]$/.test(piece)).toBe(false);
    expect(/^[\uDC00-\uDFFF]/.test(piece)).toBe(false);
  }
}

const TEXT = 'Hello, simulator! Please echo this sentence back exactly.';
const EMOJI = 'Héllo 👋🏽 wörld — 你好 🎉🎉🎉 👨‍👩‍👧‍👦 ok 😀';
const WEATHER_TOOL_CHAT = { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { echo: { type: 'string' } } } } };

// ---------------------------------------------------------------------------------------------

describe('OpenAI Chat Completions', () => {
  const path = '/v1/chat/completions';

  it('echoes the last user message, with usage from the character counts', async () => {
    const res = await post(path, {
      model: 'simulator/echo',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'first question' },
        { role: 'assistant', content: 'first answer' },
        { role: 'user', content: [{ type: 'text', text: 'Hello, ' }, { type: 'text', text: 'simulator!' }] },
      ],
    }, { authorization: 'Bearer sk-anything' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await res.json()) as Body;
    expect(body.id).toMatch(/^chatcmpl-/);
    expect(body.object).toBe('chat.completion');
    expect(typeof body.created).toBe('number');
    expect(body.model).toBe('simulator/echo');
    expect(typeof body.system_fingerprint).toBe('string');
    expect(body.choices).toEqual([{ index: 0, message: { role: 'assistant', content: 'Hello, simulator!', refusal: null }, finish_reason: 'stop', logprobs: null }]);
    const inputChars = 'Be brief.'.length + 'first question'.length + 'first answer'.length + 'Hello, simulator!'.length;
    expect(body.usage).toEqual({
      prompt_tokens: tokens(inputChars),
      completion_tokens: tokens('Hello, simulator!'.length),
      total_tokens: tokens(inputChars) + tokens('Hello, simulator!'.length),
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
  });

  it('streams chat.completion.chunk events, a usage chunk with include_usage, then [DONE]', async () => {
    const res = await post(path, { model: 'echo', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: TEXT }] });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const { events, error } = await readStream(res);
    expect(error).toBeUndefined();
    expect(events.at(-1)!.data).toBe('[DONE]');
    const chunks = events.slice(0, -1).map(json);
    expect(chunks.length).toBeGreaterThan(4);
    for (const chunk of chunks) {
      expect(chunk.object).toBe('chat.completion.chunk');
      expect(chunk.id).toBe(chunks[0]!.id);
    }
    expect(chunks[0]!.choices[0].delta.role).toBe('assistant');
    const usageChunk = chunks.at(-1)!;
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage).toMatchObject({ prompt_tokens: tokens(TEXT.length), completion_tokens: tokens(TEXT.length), total_tokens: 2 * tokens(TEXT.length) });
    const finish = chunks.at(-2)!;
    expect(finish.choices[0].finish_reason).toBe('stop');
    const content = chunks.slice(0, -2).map((c) => c.choices[0].delta.content ?? '');
    expect(content.join('')).toBe(TEXT);
    expect(content.filter((c) => c !== '').length).toBeGreaterThan(2);
    for (const chunk of chunks.slice(0, -1)) expect(chunk.usage).toBeNull();
  });

  it('streams without a usage chunk unless include_usage is set', async () => {
    const res = await post(path, { model: 'echo', stream: true, messages: [{ role: 'user', content: 'short' }] });
    const { events } = await readStream(res);
    expect(events.at(-1)!.data).toBe('[DONE]');
    const chunks = events.slice(0, -1).map(json);
    expect(chunks.every((c) => c.choices.length === 1 && !('usage' in c))).toBe(true);
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe('stop');
  });

  it('streams unicode and emoji without splitting surrogate pairs', async () => {
    const res = await post(path, { model: 'echo', stream: true, messages: [{ role: 'user', content: EMOJI }] });
    const { events } = await readStream(res);
    const pieces = events.slice(0, -1).map(json).map((c) => (c.choices[0]?.delta.content as string | undefined) ?? '');
    expect(pieces.join('')).toBe(EMOJI);
    expectWholeCodePoints(pieces);
  });

  it('answers tool-call with a call of the first tool, whole and streamed', async () => {
    const request = { model: 'tool-call', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [WEATHER_TOOL_CHAT, { type: 'function', function: { name: 'second' } }] };
    const body = (await (await post(path, request)).json()) as Body;
    expect(body.choices[0].finish_reason).toBe('tool_calls');
    const message = body.choices[0].message;
    expect(message.content).toBeNull();
    expect(message.tool_calls).toHaveLength(1);
    expect(message.tool_calls[0]).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
    expect(message.tool_calls[0].id).toMatch(/^call_/);
    expect(JSON.parse(message.tool_calls[0].function.arguments)).toEqual({ echo: 'Weather in Paris?' });

    const { events } = await readStream(await post(path, { ...request, stream: true }));
    expect(events.at(-1)!.data).toBe('[DONE]');
    const chunks = events.slice(0, -1).map(json);
    const first = chunks[0]!.choices[0].delta.tool_calls[0];
    expect(first).toMatchObject({ index: 0, type: 'function', function: { name: 'get_weather' } });
    expect(first.id).toMatch(/^call_/);
    const args = chunks.flatMap((c) => c.choices[0].delta.tool_calls ?? []).map((t: Body) => t.function.arguments as string).join('');
    expect(JSON.parse(args)).toEqual({ echo: 'Weather in Paris?' });
    expect(chunks.filter((c) => c.choices[0].delta.tool_calls).length).toBeGreaterThan(2);
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe('tool_calls');
  });

  it('answers tool-call like echo when no tool is declared', async () => {
    const body = (await (await post(path, { model: 'tool-call', messages: [{ role: 'user', content: 'plain' }] })).json()) as Body;
    expect(body.choices[0].message.content).toBe('plain');
    expect(body.choices[0].finish_reason).toBe('stop');
  });

  it('truncates at max_tokens / max_completion_tokens with finish_reason length', async () => {
    const body = (await (await post(path, { model: 'echo', max_tokens: 3, messages: [{ role: 'user', content: TEXT }] })).json()) as Body;
    expect(body.choices[0].message.content).toBe(TEXT.slice(0, 12));
    expect(body.choices[0].finish_reason).toBe('length');
    expect(body.usage.completion_tokens).toBe(3);

    // The cut lands inside 😀: it moves back rather than split the pair.
    const emoji = (await (await post(path, { model: 'echo', max_completion_tokens: 1, messages: [{ role: 'user', content: 'abc😀defgh' }] })).json()) as Body;
    expect(emoji.choices[0].message.content).toBe('abc');
    expect(emoji.choices[0].finish_reason).toBe('length');

    const { events } = await readStream(await post(path, { model: 'echo', stream: true, max_tokens: 2, messages: [{ role: 'user', content: TEXT }] }));
    const chunks = events.slice(0, -1).map(json);
    expect(chunks.map((c) => c.choices[0].delta.content ?? '').join('')).toBe(TEXT.slice(0, 8));
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe('length');

    const fits = (await (await post(path, { model: 'echo', max_tokens: 100, messages: [{ role: 'user', content: TEXT }] })).json()) as Body;
    expect(fits.choices[0].finish_reason).toBe('stop');
  });

  it('error-429: Retry-After and the rate-limit error body', async () => {
    const res = await post(path, { model: 'error-429', messages: [{ role: 'user', content: 'x' }] });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    const body = (await res.json()) as Body;
    expect(body.error).toMatchObject({ code: 'rate_limit_exceeded', param: null });
    expect(['rate_limit_exceeded', 'requests']).toContain(body.error.type);
    expect(typeof body.error.message).toBe('string');
  });

  it('error-500: the server error body, streaming or not', async () => {
    for (const stream of [false, true]) {
      const res = await post(path, { model: 'error-500', stream, messages: [{ role: 'user', content: 'x' }] });
      expect(res.status).toBe(500);
      const body = (await res.json()) as Body;
      expect(body.error).toMatchObject({ type: 'server_error', param: null });
    }
  });

  it('400 on malformed JSON and on missing fields; 404 for an unknown model', async () => {
    const bad = await post(path, '{"model": "echo", ');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Body).error.type).toBe('invalid_request_error');
    const missing = await post(path, { model: 'echo' });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as Body).error.message).toMatch(/messages/);
    const unknown = await post(path, { model: 'gpt-nope', messages: [{ role: 'user', content: 'x' }] });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as Body).error).toMatchObject({ code: 'model_not_found', type: 'invalid_request_error' });
  });
});

// ---------------------------------------------------------------------------------------------

describe('OpenAI Responses', () => {
  const path = '/v1/responses';

  it('echoes a string input as a completed response', async () => {
    const res = await post(path, { model: 'echo', input: TEXT });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Body;
    expect(body.id).toMatch(/^resp_/);
    expect(body).toMatchObject({ object: 'response', status: 'completed', model: 'echo', incomplete_details: null, error: null });
    expect(typeof body.created_at).toBe('number');
    expect(body.output).toHaveLength(1);
    expect(body.output[0]).toMatchObject({ type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: TEXT, annotations: [] }] });
    expect(body.output[0].id).toMatch(/^msg_/);
    expect(body.usage).toEqual({
      input_tokens: tokens(TEXT.length),
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: tokens(TEXT.length),
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 2 * tokens(TEXT.length),
    });
  });

  it('echoes the last user item of an array input (string content or input_text parts)', async () => {
    const body = (await (await post(path, {
      model: 'openai/echo',
      instructions: 'Be helpful',
      input: [
        { role: 'user', content: 'earlier' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'reply' }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Bonjour ' }, { type: 'input_image', image_url: 'https://x/y.png' }, { type: 'input_text', text: 'le monde' }] },
      ],
    })).json()) as Body;
    expect(body.output[0].content[0].text).toBe('Bonjour le monde');
    const chars = 'Be helpful'.length + 'earlier'.length + 'reply'.length + 'Bonjour le monde'.length;
    expect(body.usage.input_tokens).toBe(tokens(chars));
  });

  it('streams the typed events in order with increasing sequence numbers', async () => {
    const res = await post(path, { model: 'echo', stream: true, input: [{ role: 'user', content: [{ type: 'input_text', text: TEXT }] }] }, { authorization: 'Bearer x' });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const { events, error } = await readStream(res);
    expect(error).toBeUndefined();
    const payloads = events.map(json);
    events.forEach((e, i) => expect(payloads[i]!.type).toBe(e.event));
    const types = payloads.map((p) => p.type as string);
    const deltas = payloads.filter((p) => p.type === 'response.output_text.delta');
    expect(deltas.length).toBeGreaterThan(2);
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      ...deltas.map(() => 'response.output_text.delta'),
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    payloads.forEach((p, i) => expect(p.sequence_number).toBe(i));
    const itemId = payloads[2]!.item.id as string;
    for (const d of deltas) expect(d).toMatchObject({ item_id: itemId, output_index: 0, content_index: 0 });
    expect(deltas.map((d) => d.delta as string).join('')).toBe(TEXT);
    expect(payloads.find((p) => p.type === 'response.output_text.done')!.text).toBe(TEXT);
    const completed = payloads.at(-1)!.response;
    expect(completed.status).toBe('completed');
    expect(completed.output[0].content[0].text).toBe(TEXT);
    expect(completed.usage).toMatchObject({ input_tokens: tokens(TEXT.length), output_tokens: tokens(TEXT.length) });
    expect(payloads[0]!.response.status).toBe('in_progress');
  });

  it('streams unicode and emoji intact', async () => {
    const { events } = await readStream(await post(path, { model: 'echo', stream: true, input: EMOJI }));
    const pieces = events.map(json).filter((p) => p.type === 'response.output_text.delta').map((p) => p.delta as string);
    expect(pieces.join('')).toBe(EMOJI);
    expectWholeCodePoints(pieces);
  });

  it('answers tool-call with a function_call item, whole and streamed', async () => {
    const request = { model: 'tool-call', input: 'Weather?', tools: [{ type: 'web_search' }, { type: 'function', name: 'get_weather', parameters: {} }] };
    const body = (await (await post(path, request)).json()) as Body;
    expect(body.status).toBe('completed');
    expect(body.output).toHaveLength(1);
    expect(body.output[0]).toMatchObject({ type: 'function_call', name: 'get_weather', status: 'completed' });
    expect(body.output[0].call_id).toMatch(/^call_/);
    expect(JSON.parse(body.output[0].arguments)).toEqual({ echo: 'Weather?' });

    const { events } = await readStream(await post(path, { ...request, stream: true }));
    const payloads = events.map(json);
    const types = payloads.map((p) => p.type as string);
    expect(types.slice(0, 3)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added']);
    expect(types.slice(-3)).toEqual(['response.function_call_arguments.done', 'response.output_item.done', 'response.completed']);
    expect(payloads[2]!.item).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '' });
    const args = payloads.filter((p) => p.type === 'response.function_call_arguments.delta').map((p) => p.delta as string).join('');
    expect(JSON.parse(args)).toEqual({ echo: 'Weather?' });
    expect(payloads.at(-3)!.arguments).toBe(args);
    payloads.forEach((p, i) => expect(p.sequence_number).toBe(i));
  });

  it('max_output_tokens: an incomplete response', async () => {
    const body = (await (await post(path, { model: 'echo', input: TEXT, max_output_tokens: 2 })).json()) as Body;
    expect(body.status).toBe('incomplete');
    expect(body.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(body.output[0].content[0].text).toBe(TEXT.slice(0, 8));
    expect(body.usage.output_tokens).toBe(2);

    const { events } = await readStream(await post(path, { model: 'echo', stream: true, input: TEXT, max_output_tokens: 2 }));
    const last = json(events.at(-1)!);
    expect(last.type).toBe('response.incomplete');
    expect(last.response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
  });

  it('error bodies: 429, 500, 400, 404', async () => {
    const limited = await post(path, { model: 'error-429', input: 'x' });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(((await limited.json()) as Body).error.code).toBe('rate_limit_exceeded');
    const failed = await post(path, { model: 'error-500', input: 'x', stream: true });
    expect(failed.status).toBe(500);
    expect(((await failed.json()) as Body).error.type).toBe('server_error');
    expect((await post(path, 'not json')).status).toBe(400);
    const missing = await post(path, { model: 'echo' });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as Body).error.message).toMatch(/input/);
    const unknown = await post(path, { model: 'o9', input: 'x' });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as Body).error.code).toBe('model_not_found');
  });
});

// ---------------------------------------------------------------------------------------------

describe('Anthropic Messages', () => {
  const path = '/v1/messages';
  const headers = { 'x-api-key': 'sk-ant-anything', 'anthropic-version': '2023-06-01' };

  it('echoes the last user message; system as text blocks counts toward input', async () => {
    const res = await post(path, {
      model: 'anthropic/echo',
      max_tokens: 1024,
      system: [{ type: 'text', text: 'You are terse.' }],
      messages: [
        { role: 'user', content: 'one' },
        { role: 'assistant', content: [{ type: 'text', text: 'two' }] },
        { role: 'user', content: [{ type: 'text', text: TEXT }] },
      ],
    }, headers);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Body;
    expect(body.id).toMatch(/^msg_/);
    expect(body).toMatchObject({ type: 'message', role: 'assistant', model: 'anthropic/echo', content: [{ type: 'text', text: TEXT }], stop_reason: 'end_turn', stop_sequence: null });
    const chars = 'You are terse.'.length + 'one'.length + 'two'.length + TEXT.length;
    expect(body.usage).toEqual({ input_tokens: tokens(chars), output_tokens: tokens(TEXT.length), cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
  });

  it('streams message_start … message_stop with text deltas', async () => {
    const res = await post(path, { model: 'echo', max_tokens: 1024, stream: true, system: 'sys', messages: [{ role: 'user', content: TEXT }] }, headers);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const { events, error } = await readStream(res);
    expect(error).toBeUndefined();
    const payloads = events.map(json);
    events.forEach((e, i) => expect(payloads[i]!.type).toBe(e.event));
    const names = events.map((e) => e.event);
    const deltaCount = names.filter((n) => n === 'content_block_delta').length;
    expect(deltaCount).toBeGreaterThan(2);
    expect(names).toEqual(['message_start', 'content_block_start', 'ping', ...Array<string>(deltaCount).fill('content_block_delta'), 'content_block_stop', 'message_delta', 'message_stop']);
    expect(payloads[0]!.message).toMatchObject({ type: 'message', role: 'assistant', content: [], stop_reason: null, usage: { input_tokens: tokens(3 + TEXT.length) } });
    expect(payloads[1]).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    const text = payloads.filter((p) => p.type === 'content_block_delta').map((p) => {
      expect(p.delta.type).toBe('text_delta');
      return p.delta.text as string;
    }).join('');
    expect(text).toBe(TEXT);
    const messageDelta = payloads.at(-2)!;
    expect(messageDelta.delta).toEqual({ stop_reason: 'end_turn', stop_sequence: null });
    expect(messageDelta.usage.output_tokens).toBe(tokens(TEXT.length));
  });

  it('streams unicode and emoji intact', async () => {
    const { events } = await readStream(await post(path, { model: 'echo', max_tokens: 1024, stream: true, messages: [{ role: 'user', content: EMOJI }] }));
    const pieces = events.map(json).filter((p) => p.type === 'content_block_delta').map((p) => p.delta.text as string);
    expect(pieces.join('')).toBe(EMOJI);
    expectWholeCodePoints(pieces);
  });

  it('answers tool-call with a tool_use block, whole and streamed with input_json_delta', async () => {
    const request = { model: 'tool-call', max_tokens: 1024, messages: [{ role: 'user', content: 'Weather?' }], tools: [{ name: 'get_weather', input_schema: { type: 'object' } }] };
    const body = (await (await post(path, request, headers)).json()) as Body;
    expect(body.stop_reason).toBe('tool_use');
    expect(body.content).toHaveLength(1);
    expect(body.content[0]).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { echo: 'Weather?' } });
    expect(body.content[0].id).toMatch(/^toolu_/);

    const { events } = await readStream(await post(path, { ...request, stream: true }, headers));
    const payloads = events.map(json);
    expect(payloads[1]!.content_block).toMatchObject({ type: 'tool_use', name: 'get_weather', input: {} });
    const json_ = payloads.filter((p) => p.type === 'content_block_delta').map((p) => {
      expect(p.delta.type).toBe('input_json_delta');
      return p.delta.partial_json as string;
    }).join('');
    expect(JSON.parse(json_)).toEqual({ echo: 'Weather?' });
    expect(payloads.at(-2)!.delta.stop_reason).toBe('tool_use');
    expect(payloads.at(-1)!.type).toBe('message_stop');
  });

  it('max_tokens: truncated text and stop_reason max_tokens', async () => {
    const body = (await (await post(path, { model: 'echo', max_tokens: 3, messages: [{ role: 'user', content: TEXT }] })).json()) as Body;
    expect(body.content[0].text).toBe(TEXT.slice(0, 12));
    expect(body.stop_reason).toBe('max_tokens');
    expect(body.usage.output_tokens).toBe(3);
    const { events } = await readStream(await post(path, { model: 'echo', max_tokens: 3, stream: true, messages: [{ role: 'user', content: TEXT }] }));
    expect(json(events.at(-2)!).delta.stop_reason).toBe('max_tokens');
  });

  it('error bodies: 429, 500, 400, 404', async () => {
    const message = { max_tokens: 10, messages: [{ role: 'user', content: 'x' }] };
    const limited = await post(path, { model: 'error-429', ...message }, headers);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(await limited.json()).toEqual({ type: 'error', error: { type: 'rate_limit_error', message: expect.any(String) } });
    const failed = await post(path, { model: 'error-500', ...message });
    expect(failed.status).toBe(500);
    expect(await failed.json()).toEqual({ type: 'error', error: { type: 'api_error', message: expect.any(String) } });
    const bad = await post(path, '{{');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Body).error.type).toBe('invalid_request_error');
    const noMax = await post(path, { model: 'echo', messages: [{ role: 'user', content: 'x' }] });
    expect(noMax.status).toBe(400);
    expect(((await noMax.json()) as Body).error.message).toMatch(/max_tokens/);
    const unknown = await post(path, { model: 'claude-nope', ...message });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as Body)).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
  });
});

// ---------------------------------------------------------------------------------------------

describe('Google Gemini', () => {
  const generate = (model: string) => `/v1beta/models/${model}:generateContent`;
  const streamSse = (model: string) => `/v1beta/models/${model}:streamGenerateContent?alt=sse`;
  const headers = { 'x-goog-api-key': 'AIza-anything' };

  it('generateContent echoes the last user content', async () => {
    const res = await post(generate('echo'), {
      systemInstruction: { parts: [{ text: 'Be nice' }] },
      contents: [
        { role: 'user', parts: [{ text: 'earlier' }] },
        { role: 'model', parts: [{ text: 'ok' }] },
        { role: 'user', parts: [{ text: 'Hello ' }, { text: 'Gemini' }] },
      ],
    }, headers);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Body;
    expect(body.candidates).toEqual([{ content: { role: 'model', parts: [{ text: 'Hello Gemini' }] }, finishReason: 'STOP', index: 0 }]);
    const chars = 'Be nice'.length + 'earlier'.length + 'ok'.length + 'Hello Gemini'.length;
    expect(body.usageMetadata).toEqual({ promptTokenCount: tokens(chars), candidatesTokenCount: tokens(12), totalTokenCount: tokens(chars) + tokens(12) });
    expect(body.modelVersion).toBe('echo');
    expect(typeof body.responseId).toBe('string');
  });

  it('accepts the model with a vendor prefix in the path', async () => {
    const res = await post(generate(encodeURIComponent('simulator/echo')), { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Body).candidates[0].content.parts[0].text).toBe('hi');
  });

  it('streamGenerateContent?alt=sse streams GenerateContentResponse chunks', async () => {
    const res = await post(streamSse('echo'), { contents: [{ role: 'user', parts: [{ text: TEXT }] }] }, headers);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const { events, error } = await readStream(res);
    expect(error).toBeUndefined();
    const chunks = events.map(json);
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) expect(chunk.candidates[0].content.role).toBe('model');
    expect(chunks.map((c) => c.candidates[0].content.parts[0].text as string).join('')).toBe(TEXT);
    expect(chunks.slice(0, -1).every((c) => c.candidates[0].finishReason === undefined)).toBe(true);
    const last = chunks.at(-1)!;
    expect(last.candidates[0].finishReason).toBe('STOP');
    expect(last.usageMetadata).toEqual({ promptTokenCount: tokens(TEXT.length), candidatesTokenCount: tokens(TEXT.length), totalTokenCount: 2 * tokens(TEXT.length) });
  });

  it('streams unicode and emoji intact', async () => {
    const { events } = await readStream(await post(streamSse('echo'), { contents: [{ parts: [{ text: EMOJI }] }] }));
    const pieces = events.map(json).map((c) => c.candidates[0].content.parts[0].text as string);
    expect(pieces.join('')).toBe(EMOJI);
    expectWholeCodePoints(pieces);
  });

  it('streamGenerateContent without alt=sse streams a JSON array', async () => {
    const res = await post('/v1beta/models/echo:streamGenerateContent', { contents: [{ role: 'user', parts: [{ text: TEXT }] }] });
    const chunks = (await res.json()) as Body[];
    expect(chunks.map((c) => c.candidates[0].content.parts[0].text as string).join('')).toBe(TEXT);
    expect(chunks.at(-1)!.candidates[0].finishReason).toBe('STOP');
  });

  it('answers tool-call with a functionCall part', async () => {
    const request = { contents: [{ role: 'user', parts: [{ text: 'Weather?' }] }], tools: [{ functionDeclarations: [{ name: 'get_weather', parameters: { type: 'OBJECT' } }] }] };
    const body = (await (await post(generate('tool-call'), request)).json()) as Body;
    expect(body.candidates[0]).toMatchObject({ content: { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { echo: 'Weather?' } } }] }, finishReason: 'STOP' });
    const { events } = await readStream(await post(streamSse('tool-call'), request));
    const chunks = events.map(json);
    const calls = chunks.flatMap((c) => c.candidates[0].content.parts as Body[]).filter((p) => p.functionCall);
    expect(calls).toEqual([{ functionCall: { name: 'get_weather', args: { echo: 'Weather?' } } }]);
    expect(chunks.at(-1)!.candidates[0].finishReason).toBe('STOP');
  });

  it('maxOutputTokens: truncated with MAX_TOKENS', async () => {
    const request = { contents: [{ role: 'user', parts: [{ text: TEXT }] }], generationConfig: { maxOutputTokens: 2 } };
    const body = (await (await post(generate('echo'), request)).json()) as Body;
    expect(body.candidates[0].content.parts[0].text).toBe(TEXT.slice(0, 8));
    expect(body.candidates[0].finishReason).toBe('MAX_TOKENS');
    expect(body.usageMetadata.candidatesTokenCount).toBe(2);
    const { events } = await readStream(await post(streamSse('echo'), request));
    expect(json(events.at(-1)!).candidates[0].finishReason).toBe('MAX_TOKENS');
  });

  it('error bodies: 429, 500, 400, 404', async () => {
    const request = { contents: [{ role: 'user', parts: [{ text: 'x' }] }] };
    const limited = await post(generate('error-429'), request);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(await limited.json()).toEqual({ error: { code: 429, message: expect.any(String), status: 'RESOURCE_EXHAUSTED' } });
    const failed = await post(streamSse('error-500'), request);
    expect(failed.status).toBe(500);
    expect(await failed.json()).toEqual({ error: { code: 500, message: expect.any(String), status: 'INTERNAL' } });
    const bad = await post(generate('echo'), '[oops');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Body).error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
    const missing = await post(generate('echo'), {});
    expect(missing.status).toBe(400);
    const unknown = await post(generate('gemini-nope'), request);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as Body).error).toMatchObject({ code: 404, status: 'NOT_FOUND' });
  });
});

// ---------------------------------------------------------------------------------------------

describe('routing and credentials', () => {
  it('404 for an unknown path, 405 for a wrong method', async () => {
    const unknown = await post('/v2/whatever', { model: 'echo' });
    expect(unknown.status).toBe(404);
    await unknown.arrayBuffer();
    const get = await fetch(`${sim.url}/v1/chat/completions`);
    expect(get.status).toBe(405);
    await get.arrayBuffer();
  });

  it('accepts any credentials, or none', async () => {
    const variants: Array<Record<string, string>> = [{}, { authorization: 'Bearer whatever' }, { 'x-api-key': 'k' }, { 'x-goog-api-key': 'g' }];
    for (const headers of variants) {
      const res = await post('/v1/chat/completions', { model: 'echo', messages: [{ role: 'user', content: 'ok' }] }, headers);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
  });
});

describe('cut-stream', () => {
  const long = 'This reply is long enough to need many chunks before the connection drops on the client.';
  const cases: Array<{ name: string; path: string; body: unknown; isFinal: (e: SseEvent) => boolean }> = [
    { name: 'chat', path: '/v1/chat/completions', body: { model: 'cut-stream', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: long }] }, isFinal: (e) => e.data === '[DONE]' || json(e).choices[0]?.finish_reason != null },
    { name: 'responses', path: '/v1/responses', body: { model: 'cut-stream', stream: true, input: long }, isFinal: (e) => e.event === 'response.completed' || e.event === 'response.output_text.done' },
    { name: 'anthropic', path: '/v1/messages', body: { model: 'cut-stream', max_tokens: 1000, stream: true, messages: [{ role: 'user', content: long }] }, isFinal: (e) => e.event === 'message_stop' || e.event === 'message_delta' },
    { name: 'gemini', path: '/v1beta/models/cut-stream:streamGenerateContent?alt=sse', body: { contents: [{ role: 'user', parts: [{ text: long }] }] }, isFinal: (e) => json(e).candidates[0].finishReason !== undefined },
  ];

  for (const c of cases) {
    it(`${c.name}: content chunks, then the connection drops without the final event`, async () => {
      const res = await post(c.path, c.body);
      expect(res.status).toBe(200);
      const { events, error, text } = await readStream(res);
      expect(error).toBeDefined();
      expect(text.length).toBeGreaterThan(0);
      expect(events.some(c.isFinal)).toBe(false);
      expect(events.length).toBeGreaterThan(0);
    });
  }

  it('non-streaming: fewer bytes than the content-length, then the connection drops', async () => {
    const res = await post('/v1/chat/completions', { model: 'cut-stream', messages: [{ role: 'user', content: long }] });
    expect(res.status).toBe(200);
    expect(Number(res.headers.get('content-length'))).toBeGreaterThan(0);
    await expect(res.text()).rejects.toThrow();
  });

  it('the simulator keeps serving after a cut', async () => {
    const res = await post('/v1/chat/completions', { model: 'echo', messages: [{ role: 'user', content: 'still here' }] });
    expect(((await res.json()) as Body).choices[0].message.content).toBe('still here');
  });
});

describe('timeout', () => {
  it('never sends headers; the client aborts and the next request is served', async () => {
    const controller = new AbortController();
    let headersArrived = false;
    const pending = post('/v1/chat/completions', { model: 'timeout', messages: [{ role: 'user', content: 'x' }] }, {}, controller.signal)
      .then((res) => {
        headersArrived = true;
        return res;
      });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(headersArrived).toBe(false);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(headersArrived).toBe(false);

    const next = await post('/v1/messages', { model: 'echo', max_tokens: 10, messages: [{ role: 'user', content: 'next' }] });
    expect(((await next.json()) as Body).content[0].text).toBe('next');
  });

  it('close() ends promptly even with a request that never gets an answer', async () => {
    const other = await startSimulator({ port: 0 });
    const pending = fetch(`${other.url}/v1beta/models/timeout:generateContent`, { method: 'POST', body: JSON.stringify({ contents: [{ parts: [{ text: 'x' }] }] }) });
    pending.catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    await other.close();
    expect(Date.now() - started).toBeLessThan(1000);
    await expect(pending).rejects.toThrow();
  });
});

describe('delays', () => {
  it('chunkDelayMs spaces the streamed chunks; firstByteDelayMs delays the headers', async () => {
    const slow = await startSimulator({ port: 0, chunkDelayMs: 30, firstByteDelayMs: 100 });
    try {
      const started = Date.now();
      const res = await fetch(`${slow.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'echo', stream: true, messages: [{ role: 'user', content: '0123456789abcdefghijklmnopqrstuv' }] }) });
      const headersAt = Date.now() - started;
      expect(headersAt).toBeGreaterThanOrEqual(90);
      const reader = res.body!.getReader();
      const arrivals: number[] = [];
      let text = '';
      const decoder = new TextDecoder();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        arrivals.push(Date.now());
        text += decoder.decode(value, { stream: true });
      }
      // 1 role chunk + 4 content chunks + finish + [DONE] = 7 frames, 6 gaps of 30 ms.
      expect(arrivals.length).toBeGreaterThanOrEqual(4);
      expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThanOrEqual(150);
      expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    } finally {
      await slow.close();
    }
  });

  it('with chunkDelayMs, cut-stream still drops the connection and a client that leaves stops the stream', async () => {
    const slow = await startSimulator({ port: 0, chunkDelayMs: 10 });
    try {
      const cut = await fetch(`${slow.url}/v1/messages`, { method: 'POST', body: JSON.stringify({ model: 'cut-stream', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'a long enough message to need several chunks' }] }) });
      const read = await readStream(cut);
      expect(read.error).toBeDefined();
      expect(read.events.filter((e) => e.event === 'content_block_delta')).toHaveLength(3);
      expect(read.events.some((e) => e.event === 'message_stop')).toBe(false);

      const controller = new AbortController();
      const res = await fetch(`${slow.url}/v1/chat/completions`, { method: 'POST', signal: controller.signal, body: JSON.stringify({ model: 'echo', stream: true, messages: [{ role: 'user', content: 'x'.repeat(400) }] }) });
      const reader = res.body!.getReader();
      await reader.read();
      controller.abort();
      await expect(reader.read()).rejects.toMatchObject({ name: 'AbortError' });
      const next = await fetch(`${slow.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'echo', messages: [{ role: 'user', content: 'after' }] }) });
      expect(((await next.json()) as Body).choices[0].message.content).toBe('after');
    } finally {
      await slow.close();
    }
  });
});

describe('embeddings', () => {
  const norm = (vector: number[]) => Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));

  it('OpenAI /v1/embeddings: a unit vector per text, the same for the same text, with token usage', async () => {
    const reply = await post('/v1/embeddings', { model: 'embed', input: ['same', 'other', 'same'] });
    expect(reply.status).toBe(200);
    const body = await reply.json() as { object: string; data: Array<{ object: string; index: number; embedding: number[] }>; usage: { prompt_tokens: number } };
    expect(body.object).toBe('list');
    expect(body.data.map((item) => item.index)).toEqual([0, 1, 2]);
    expect(body.data[0]!.embedding).toHaveLength(16);
    expect(norm(body.data[0]!.embedding)).toBeCloseTo(1, 6);
    expect(body.data[2]!.embedding).toEqual(body.data[0]!.embedding);
    expect(body.data[1]!.embedding).not.toEqual(body.data[0]!.embedding);
    // About four characters a token, at least one a text: 1 + 2 + 1.
    expect(body.usage.prompt_tokens).toBe(4);
    const sized = await (await post('/v1/embeddings', { model: 'embed', input: 'x', dimensions: 40, encoding_format: 'base64' })).json() as { data: Array<{ embedding: string }> };
    expect(Buffer.from(sized.data[0]!.embedding, 'base64').length).toBe(40 * 4);
  });

  it('OpenAI /v1/embeddings: 400 for bad input, 404 for another model, 429 and 500 for the error models', async () => {
    expect((await post('/v1/embeddings', { model: 'embed', input: [] })).status).toBe(400);
    expect((await post('/v1/embeddings', { model: 'embed', input: 'x', dimensions: 0 })).status).toBe(400);
    expect((await post('/v1/embeddings', { model: 'echo', input: 'x' })).status).toBe(404);
    const limited = await post('/v1/embeddings', { model: 'error-429', input: 'x' });
    expect([limited.status, limited.headers.get('retry-after')]).toEqual([429, '1']);
    expect((await post('/v1/embeddings', { model: 'error-500', input: 'x' })).status).toBe(500);
  });

  it('Gemini batchEmbedContents and embedContent: the same vectors as OpenAI\'s for the same texts', async () => {
    const openai = await (await post('/v1/embeddings', { model: 'embed', input: ['alpha', 'beta'], dimensions: 8 })).json() as { data: Array<{ embedding: number[] }> };
    const batch = await post('/v1beta/models/embed:batchEmbedContents', { requests: ['alpha', 'beta'].map((text) => ({ model: 'models/embed', content: { parts: [{ text }] }, outputDimensionality: 8 })) });
    expect(batch.status).toBe(200);
    expect(((await batch.json()) as { embeddings: Array<{ values: number[] }> }).embeddings.map((e) => e.values)).toEqual(openai.data.map((d) => d.embedding));
    const one = await post('/v1beta/models/embed:embedContent', { content: { parts: [{ text: 'alpha' }] }, outputDimensionality: 8 });
    expect(((await one.json()) as { embedding: { values: number[] } }).embedding.values).toEqual(openai.data[0]!.embedding);
    expect((await post('/v1beta/models/embed:batchEmbedContents', { requests: [] })).status).toBe(400);
    expect((await post('/v1beta/models/error-429:batchEmbedContents', { requests: [{ content: { parts: [{ text: 'x' }] } }] })).status).toBe(429);
  });
});
