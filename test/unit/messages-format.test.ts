import { describe, expect, it } from '@jest/globals';
import { fromMessages } from '../../lambdas/inference/formats/from-messages.js';
import { describeIssues } from '../../lambdas/platform/http/validation.js';
import { messagesRequestSchema, type MessagesRequest } from '../../lambdas/inference/formats/messages-schema.js';
import { messagesResult, messagesUsage, MessagesStreamWriter } from '../../lambdas/inference/formats/to-messages.js';
import type { CostBreakdown } from '../../lambdas/billing/cost.js';
import { InvalidInputError } from '../../lambdas/platform/errors.js';

const parse = (body: unknown): MessagesRequest => messagesRequestSchema.parse(body);
const identity = { id: 'gen-1-abc', model: 'simulator/echo', provider: 'Simulator', created: 1, serviceTier: null };
const cost: CostBreakdown = { prompt: 3_000n, completion: 5_000n, cache_read: 1_000n, cache_write: 0n, reasoning: 0n, request: 0n, total: 9_000n };

/** The events of an SSE text: [event name, parsed data]. */
function events(text: string): Array<[string, Record<string, any>]> {
  return text.split('\n\n').filter(Boolean).map((frame) => {
    const name = /^event: (.*)$/m.exec(frame)![1]!;
    const data = JSON.parse(/^data: (.*)$/m.exec(frame)![1]!);
    return [name, data];
  });
}

describe('fromMessages', () => {
  it('turns an Anthropic conversation into internal messages: system first, tool results as tool messages before the rest of the turn', () => {
    const request = fromMessages(parse({
      model: 'simulator/echo',
      max_tokens: 64,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'user', content: [
          { type: 'text', text: 'What is in these?' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0K' } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/a.jpg' } },
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0' }, title: 'spec.pdf' },
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain notes' } },
        ] },
        { role: 'assistant', content: [
          { type: 'thinking', thinking: 'Look it up.', signature: 'sig-1' },
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'a' } },
        ] },
        { role: 'user', content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'found a' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: 'boom' }], is_error: true },
          { type: 'text', text: 'And now?' },
        ] },
      ],
    }));
    expect(request.format).toBe('messages');
    expect(request.models).toEqual(['simulator/echo']);
    expect(request.params.max_output_tokens).toBe(64);
    expect(request.params.messages).toEqual([
      { role: 'system', content: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }] },
      { role: 'user', content: [
        { type: 'text', text: 'What is in these?' },
        { type: 'image', url: 'data:image/png;base64,iVBORw0K' },
        { type: 'image', url: 'https://example.com/a.jpg' },
        { type: 'file', url: 'data:application/pdf;base64,JVBERi0', filename: 'spec.pdf' },
        { type: 'text', text: 'plain notes' },
      ] },
      { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }], tool_calls: [{ id: 'toolu_1', name: 'lookup', arguments: '{"q":"a"}' }], reasoning: 'Look it up.', reasoning_signature: 'sig-1' },
      { role: 'tool', tool_call_id: 'toolu_1', content: [{ type: 'text', text: 'found a' }] },
      { role: 'tool', tool_call_id: 'toolu_2', content: [{ type: 'text', text: 'Error: ' }, { type: 'text', text: 'boom' }] },
      { role: 'user', content: [{ type: 'text', text: 'And now?' }] },
    ]);
  });

  it('maps tools, tool_choice, thinking, stop sequences, the end user and the service tier', () => {
    const request = fromMessages(parse({
      model: 'a/b', models: ['c/d'], max_tokens: 10, temperature: 0.5, top_p: 0.9, top_k: 40, stop_sequences: ['END'],
      tools: [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      thinking: { type: 'enabled', budget_tokens: 2048 },
      metadata: { user_id: 'user-42' },
      service_tier: 'standard_only',
      messages: [{ role: 'user', content: 'hi' }],
    }));
    expect(request.models).toEqual(['a/b', 'c/d']);
    expect(request.params).toMatchObject({
      tools: [{ name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }],
      tool_choice: 'required', parallel_tool_calls: false, temperature: 0.5, top_p: 0.9, top_k: 40, stop: ['END'],
      reasoning: { max_tokens: 2048 },
    });
    expect(request.user).toBe('user-42');
    expect(request.serviceTier).toBe('default');
    expect(fromMessages(parse({ model: 'a/b', tools: [{ name: 'x' }], tool_choice: { type: 'tool', name: 'x' }, thinking: { type: 'disabled' }, messages: [{ role: 'user', content: 'hi' }] })).params)
      .toMatchObject({ tool_choice: { name: 'x' }, reasoning: { effort: 'none' } });
  });

  it('keeps the first thinking block whole with its own signature, and puts a tool result\'s cache breakpoint on its last text', () => {
    const request = fromMessages(parse({
      model: 'a/b',
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [
          { type: 'thinking', thinking: 'First.', signature: 'sig-A' },
          { type: 'tool_use', id: 't1', name: 'n', input: {} },
          { type: 'thinking', thinking: 'Second.', signature: 'sig-B' },
        ] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }], cache_control: { type: 'ephemeral' } }] },
      ],
    }));
    expect(request.params.messages[1]).toMatchObject({ role: 'assistant', reasoning: 'First.', reasoning_signature: 'sig-A' });
    expect(request.params.messages[2]).toEqual({ role: 'tool', tool_call_id: 't1', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b', cache_control: { type: 'ephemeral' } }] });
  });

  it('refuses what it cannot pass on, naming where', () => {
    expect(() => fromMessages(parse({ model: 'a/b', tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages: [{ role: 'user', content: 'hi' }] })))
      .toThrow(/body\.tools: server tools \(web_search_20250305\)/);
    expect(() => fromMessages(parse({ model: 'a/b', messages: [{ role: 'user', content: [{ type: 'tool_use', id: 't', name: 'n', input: {} }] }] })))
      .toThrow(InvalidInputError);
    expect(() => fromMessages(parse({ model: 'a/b', messages: [{ role: 'assistant', content: [{ type: 'tool_result', tool_use_id: 't' }] }] })))
      .toThrow(/body\.messages\.0\.content\.0: an assistant message cannot hold a tool_result block/);
    // Tools no provider can serve as asked: a tool_choice naming no defined tool, "any" without tools, two tools of one name.
    const hi = [{ role: 'user', content: 'hi' }];
    expect(() => fromMessages(parse({ model: 'a/b', tools: [{ name: 'f' }], tool_choice: { type: 'tool', name: 'nope' }, messages: hi })))
      .toThrow('Invalid body.tool_choice: it names the tool "nope", which body.tools does not define');
    expect(() => fromMessages(parse({ model: 'a/b', tool_choice: { type: 'any' }, messages: hi })))
      .toThrow('Invalid body.tool_choice: {"type": "any"} needs tools, and body.tools defines none');
    expect(() => fromMessages(parse({ model: 'a/b', tools: [{ name: 'f' }, { name: 'g' }, { name: 'f' }], messages: hi })))
      .toThrow('Invalid body.tools: more than one tool is named "f"; tool names must be unique');
    expect(fromMessages(parse({ model: 'a/b', tool_choice: { type: 'auto' }, messages: hi })).params.tool_choice).toBe('auto');
    expect(fromMessages(parse({ model: 'a/b', tool_choice: { type: 'none' }, messages: hi })).params.tool_choice).toBe('none');
    expect(messagesRequestSchema.safeParse({ messages: [{ role: 'user', content: 'hi' }] }).success).toBe(false);
    expect(messagesRequestSchema.safeParse({ model: 'a/b', messages: [] }).success).toBe(false);
  });

  it('checks what Anthropic\'s API checks: tool names, image types, and content in every message but a final assistant one', () => {
    const issue = (body: unknown) => {
      const error = messagesRequestSchema.safeParse(body).error;
      return error && describeIssues(error.issues, 'body').issues.map((found) => `${found.path}: ${found.message}`);
    };
    const hi = [{ role: 'user', content: 'hi' }];
    expect(issue({ model: 'a/b', tools: [{ name: 'bad name!' }], messages: hi })).toEqual(['body.tools.0.name: tool names use letters, digits, underscores and dashes']);
    expect(issue({ model: 'a/b', messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'text/html', data: 'AAAA' } }] }] })?.[0])
      .toMatch(/^body\.messages\.0\.content\.0\.source\.media_type: .*image\/jpeg/);
    expect(issue({ model: 'a/b', messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/webp', data: 'AAAA' } }] }] })).toBeUndefined();
    expect(issue({ model: 'a/b', messages: [{ role: 'user', content: [] }] })).toEqual(['body.messages.0.content: a message needs at least one content block (only a final assistant message may be empty)']);
    expect(issue({ model: 'a/b', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: [] }, { role: 'user', content: 'more' }] }))
      .toEqual(['body.messages.1.content: a message needs at least one content block (only a final assistant message may be empty)']);
    expect(issue({ model: 'a/b', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: [] }] })).toBeUndefined();
  });
});

describe('messagesResult', () => {
  it('is an Anthropic message: thinking, text and tool_use blocks, the stop reason, usage apart from the cache, and the cost', () => {
    const usage = messagesUsage({ input_tokens: 100, output_tokens: 20, cached_input_tokens: 30, cache_write_tokens: 10, reasoning_tokens: 5 }, cost, false);
    expect(usage).toMatchObject({ input_tokens: 60, output_tokens: 20, cache_read_input_tokens: 30, cache_creation_input_tokens: 10, cost: 0.000009, is_byok: false });
    const message = messagesResult(identity, {
      text: 'Calling.', reasoning: 'Think.', reasoning_signature: 'sig', finish_reason: 'tool_calls',
      tool_calls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":"a"}' }, { id: 'call_2', name: 'raw', arguments: 'not json' }],
      usage: { input_tokens: 100, output_tokens: 20, cached_input_tokens: 30, cache_write_tokens: 10, reasoning_tokens: 5 },
    }, usage);
    expect(message).toMatchObject({
      id: 'gen-1-abc', type: 'message', role: 'assistant', model: 'simulator/echo', stop_reason: 'tool_use', stop_sequence: null,
      content: [
        { type: 'thinking', thinking: 'Think.', signature: 'sig' },
        { type: 'text', text: 'Calling.' },
        { type: 'tool_use', id: 'call_1', name: 'lookup', input: { q: 'a' } },
        { type: 'tool_use', id: 'call_2', name: 'raw', input: { raw_arguments: 'not json' } },
      ],
    });
    // A provider that ended its tool calls with "stop": Anthropic clients run tools only on tool_use.
    const stopped = messagesResult(identity, { text: '', finish_reason: 'stop', tool_calls: [{ id: 'c', name: 'n', arguments: '{}' }], usage: { input_tokens: 1, output_tokens: 1, cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 } }, usage);
    expect(stopped.stop_reason).toBe('tool_use');
    const plain = messagesResult(identity, { text: '', finish_reason: 'length', tool_calls: [], usage: { input_tokens: 1, output_tokens: 1, cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 } }, usage);
    expect(plain.content).toEqual([{ type: 'text', text: '' }]);
    expect(plain.stop_reason).toBe('max_tokens');
  });
});

describe('MessagesStreamWriter', () => {
  it('writes Anthropic events: one content block at a time, deltas by index, the stop reason and usage at the end', () => {
    const writer = new MessagesStreamWriter(identity);
    let text = writer.start();
    text += writer.event({ type: 'reasoning-delta', delta: 'Hmm.' });
    text += writer.event({ type: 'reasoning-signature', signature: 'sig' });
    text += writer.event({ type: 'text-delta', delta: 'Hel' });
    text += writer.event({ type: 'text-delta', delta: 'lo' });
    text += writer.event({ type: 'tool-call-delta', index: 0, id: 'call_1', name: 'lookup', arguments_delta: '{"q":' });
    text += writer.event({ type: 'tool-call-delta', index: 0, arguments_delta: '"a"}' });
    text += writer.event({ type: 'tool-call-delta', index: 1, id: 'call_2', name: 'other', arguments_delta: '{}' });
    text += writer.event({ type: 'finish', finish_reason: 'tool_calls', usage: { input_tokens: 5, output_tokens: 7, cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 } });
    text += writer.end(messagesUsage({ input_tokens: 5, output_tokens: 7, cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 }, cost, false));
    const seen = events(text);
    expect(seen.map(([name, data]) => `${name}${data.index === undefined ? '' : `:${data.index}`}${data.delta?.type ? `:${data.delta.type}` : ''}`)).toEqual([
      'message_start',
      'content_block_start:0', 'content_block_delta:0:thinking_delta', 'content_block_delta:0:signature_delta', 'content_block_stop:0',
      'content_block_start:1', 'content_block_delta:1:text_delta', 'content_block_delta:1:text_delta', 'content_block_stop:1',
      'content_block_start:2', 'content_block_delta:2:input_json_delta', 'content_block_delta:2:input_json_delta', 'content_block_stop:2',
      'content_block_start:3', 'content_block_delta:3:input_json_delta', 'content_block_stop:3',
      'message_delta', 'message_stop',
    ]);
    for (const [name, data] of seen) expect(data.type).toBe(name);
    expect(seen[0]![1].message).toMatchObject({ id: 'gen-1-abc', type: 'message', role: 'assistant', content: [] });
    expect(seen[9]![1].content_block).toEqual({ type: 'tool_use', id: 'call_1', name: 'lookup', input: {} });
    expect(seen[16]![1]).toMatchObject({ delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { input_tokens: 5, output_tokens: 7, cost: 0.000009 } });
  });

  it('says tool_use when the stream called tools, even if the provider finished with "stop"', () => {
    const writer = new MessagesStreamWriter(identity);
    const usage = messagesUsage({ input_tokens: 1, output_tokens: 1, cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 }, cost, false);
    const text = writer.start() + writer.event({ type: 'tool-call-delta', index: 0, id: 'c', name: 'n', arguments_delta: '{}' })
      + writer.event({ type: 'finish', finish_reason: 'stop', usage: { input_tokens: 1, output_tokens: 1, cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 } }) + writer.end(usage);
    expect(events(text).find(([name]) => name === 'message_delta')![1].delta.stop_reason).toBe('tool_use');
  });

  it('ends a failed stream with an error event of Anthropic\'s type for the status', () => {
    const writer = new MessagesStreamWriter(identity);
    const text = writer.start() + writer.event({ type: 'text-delta', delta: 'x' }) + writer.error(429, 'Slow down');
    const seen = events(text);
    expect(seen.at(-2)![0]).toBe('content_block_stop');
    expect(seen.at(-1)).toEqual(['error', { type: 'error', error: { type: 'rate_limit_error', message: 'Slow down', code: 429 } }]);
  });
});
