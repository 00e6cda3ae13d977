import { describe, expect, it } from '@jest/globals';
import { BatchItemChecker, checkInlineRequests, jsonLines, MAX_BATCH_INPUT_BYTES, type InputLine } from '../../lambdas/batches/input.js';
import { TooLargeError, InvalidInputError } from '../../lambdas/platform/errors.js';
import { httpErrorOf } from '../../lambdas/platform/http/errors.js';

const chat = (content = 'hi') => ({ model: 'simulator/echo', messages: [{ role: 'user', content }] });

async function collect(source: AsyncIterable<Uint8Array | string>, limits?: Parameters<typeof jsonLines>[1]): Promise<InputLine[]> {
  const lines: InputLine[] = [];
  for await (const line of jsonLines(source, limits)) lines.push(line);
  return lines;
}

async function* chunks(text: string, size: number): AsyncGenerator<Buffer> {
  const bytes = Buffer.from(text);
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

describe('jsonLines', () => {
  const file = [
    JSON.stringify({ custom_id: 'a', body: chat('é — ✓') }),
    '',
    JSON.stringify({ custom_id: 'b', body: chat() }) + '\r',
    '   ',
    JSON.stringify({ custom_id: 'c', body: chat() }),
  ].join('\n');

  it('splits lines the same way whatever the chunk boundaries (multi-byte characters cut in two included)', async () => {
    const whole = await collect(chunks(file, file.length + 10));
    expect(whole.map((line) => [line.number, JSON.parse(line.text!).custom_id])).toEqual([[1, 'a'], [3, 'b'], [5, 'c']]);
    expect(JSON.parse(whole[0]!.text!).body.messages[0].content).toBe('é — ✓');
    for (const size of [1, 2, 3, 7, 64]) expect(await collect(chunks(file, size))).toEqual(whole);
  });

  it('gives a line over the item limit as its length only, and goes on with the next', async () => {
    const long = JSON.stringify({ custom_id: 'long', body: chat('x'.repeat(500)) });
    const lines = await collect(chunks(`${long}\n${JSON.stringify({ custom_id: 'ok', body: chat() })}\n`, 16), { maxLineBytes: 200 });
    expect(lines[0]).toEqual({ number: 1, text: null, bytes: Buffer.byteLength(long), offset: 0 });
    expect(JSON.parse(lines[1]!.text!).custom_id).toBe('ok');
  });

  it('does not count a CRLF line\'s CR against the item limit, and drops a leading byte-order mark', async () => {
    const lines = await collect(chunks('\uFEFF12345\r\n123456\r\n1234\r', 3), { maxLineBytes: 5 });
    expect(lines.map((line) => line.text)).toEqual(['12345', null, '1234']);
  });

  it('throws a 413 as soon as the input passes the limit, without reading further', async () => {
    let pulled = 0;
    async function* source() {
      for (;;) { pulled += 1; yield Buffer.from('{"custom_id":"x"}\n'); }
    }
    let caught: unknown;
    try { await collect(source(), { maxBytes: 100 }); } catch (err) { caught = err; }
    expect(caught).toBeInstanceOf(TooLargeError);
    expect(httpErrorOf(caught as TooLargeError).status).toBe(413);
    expect(pulled).toBe(Math.floor(100 / 18) + 1);
  });

  it('reads exactly 200 MB and refuses one byte more, holding only a line at a time', async () => {
    const line = Buffer.from(`${JSON.stringify({ custom_id: 'x', body: chat('y'.repeat(900)) })}\n`);
    const block = Buffer.concat(Array.from({ length: Math.floor((1 << 20) / line.length) }, () => line));
    async function* source(total: number) {
      let sent = 0;
      while (sent < total) {
        const piece = block.subarray(0, Math.min(block.length, total - sent));
        sent += piece.length;
        yield piece;
      }
    }
    const held = () => { const usage = process.memoryUsage(); return usage.heapUsed + usage.arrayBuffers; };
    const heldBefore = held();
    let count = 0;
    let peak = 0;
    for await (const parsed of jsonLines(source(MAX_BATCH_INPUT_BYTES))) {
      count += 1;
      if (count % 20_000 === 0) peak = Math.max(peak, held() - heldBefore);
      void parsed;
    }
    expect(count).toBeGreaterThan(200_000);
    // A 200 MB input is never held: heap and buffers together grow far less than the input's size.
    expect(peak).toBeLessThan(64 * 1024 * 1024);
    await expect(collect(source(MAX_BATCH_INPUT_BYTES + 1))).rejects.toBeInstanceOf(TooLargeError);
  });
});

describe('BatchItemChecker', () => {
  const check = (value: unknown, checker = new BatchItemChecker('/v1/chat/completions')) => checker.check(value, 1);

  it('accepts SPEC items and OpenAI batch-file lines', () => {
    expect(check({ custom_id: 'a', body: chat() })).toMatchObject({ kind: 'item', customId: 'a', body: chat() });
    expect(check({ custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: chat() })).toMatchObject({ kind: 'item', customId: 'a' });
    const responses = new BatchItemChecker('/v1/responses');
    expect(responses.check({ custom_id: 'r', body: { model: 'simulator/echo', input: 'hi' } }, 1)).toMatchObject({ kind: 'item', customId: 'r' });
  });

  it('takes a top-level field that is null as left out, as the inference routes do', () => {
    const checked = check({ custom_id: 'a', body: { ...chat(), temperature: null, tools: null, user: null, preset: null, stream: null } });
    expect(checked).toMatchObject({ kind: 'item', customId: 'a', body: chat() });
    expect((checked as { body: Record<string, unknown> }).body).not.toHaveProperty('tools');
    // So is an item's method or url sent as null.
    expect(check({ custom_id: 'm', method: null, url: null, body: chat() })).toMatchObject({ kind: 'item', customId: 'm' });
    // A batch with a model of its own fills in a model left out as null.
    const modelled = new BatchItemChecker('/v1/chat/completions', { model: 'simulator/echo' }).check({ custom_id: 'b', body: { model: null, messages: chat().messages } }, 1);
    expect(modelled).toMatchObject({ kind: 'item', body: chat() });
    // Null inside the request is the schema's to judge.
    expect(check({ custom_id: 'c', body: { ...chat(), messages: [{ role: 'user', content: 'hi', name: null }] } })).toMatchObject({ kind: 'error', error: { error_type: 'invalid_body' } });
  });

  it('names what is wrong with each bad item', () => {
    expect(check({ body: chat() })).toMatchObject({ kind: 'error', customId: null, error: { error_type: 'missing_custom_id', param: 'custom_id', type: 'invalid_request_error' } });
    expect(check({ custom_id: '', body: chat() })).toMatchObject({ kind: 'error', error: { error_type: 'invalid_custom_id' } });
    expect(check({ custom_id: 7, body: chat() })).toMatchObject({ kind: 'error', error: { error_type: 'invalid_custom_id' } });
    expect(check({ custom_id: 'x'.repeat(257), body: chat() })).toMatchObject({ kind: 'error', error: { error_type: 'invalid_custom_id' } });
    expect(check({ custom_id: 'a', url: '/v1/responses', body: chat() })).toMatchObject({ kind: 'error', customId: 'a', error: { error_type: 'wrong_endpoint', param: 'url' } });
    expect(check({ custom_id: 'a', method: 'GET', body: chat() })).toMatchObject({ kind: 'error', error: { error_type: 'wrong_endpoint', param: 'method' } });
    expect(check({ custom_id: 'a', body: 'text' })).toMatchObject({ kind: 'error', error: { error_type: 'invalid_body', param: 'body' } });
    expect(check({ custom_id: 'a', body: { ...chat(), stream: true } })).toMatchObject({ kind: 'error', error: { param: 'body.stream', message: expect.stringMatching(/do not stream/) } });
    // A preset could change between validation (which sizes the batch's lease) and the item's run.
    expect(check({ custom_id: 'a', body: { ...chat(), model: '@preset/p' } })).toMatchObject({ kind: 'error', error: { error_type: 'invalid_body', param: 'body.model', message: expect.stringMatching(/presets cannot be used in batch items/) } });
    expect(check({ custom_id: 'a', body: { ...chat(), preset: 'p' } })).toMatchObject({ kind: 'error', error: { param: 'body.preset' } });
    expect(check({ custom_id: 'a', body: { model: 'simulator/echo', messages: [{ role: 'robot', content: 'x' }] } }))
      .toMatchObject({ kind: 'error', error: { error_type: 'invalid_body', param: 'body.messages.0.role', message: expect.stringMatching(/^Item 1: Invalid body\.messages\.0\.role/) } });
    expect(check([1])).toMatchObject({ kind: 'error', error: { error_type: 'invalid_body' } });
  });

  it('refuses a custom_id used twice, keeping the first', () => {
    const checker = new BatchItemChecker('/v1/chat/completions');
    expect(checker.check({ custom_id: 'a', body: chat() }, 1).kind).toBe('item');
    expect(checker.check({ custom_id: 'a', body: chat() }, 2)).toMatchObject({ kind: 'error', line: 2, customId: 'a', error: { error_type: 'duplicate_custom_id' } });
    // A first item that failed its body still takes its id.
    expect(checker.check({ custom_id: 'b', body: {} }, 3).kind).toBe('error');
    expect(checker.check({ custom_id: 'b', body: chat() }, 4)).toMatchObject({ error: { error_type: 'duplicate_custom_id' } });
  });

  it('refuses, as that line\'s error, a line that is not UTF-8, or holds a "__proto__" key or half of a surrogate pair (a live body\'s 400s)', async () => {
    const good = Buffer.from(`${JSON.stringify({ custom_id: 'ok', body: chat('café') })}\n`);
    const latin1 = Buffer.concat([Buffer.from('{"custom_id":"l1","body":{"model":"simulator/echo","messages":[{"role":"user","content":"caf'), Buffer.from([0xe9]), Buffer.from(' au lait"}]}}\n')]);
    const lines = await collect((async function* () { yield Buffer.concat([good, latin1]); })());
    const checker = new BatchItemChecker('/v1/chat/completions');
    expect(checker.checkLine(lines[0]!)).toMatchObject({ kind: 'item', customId: 'ok' });
    expect(checker.checkLine(lines[1]!)).toMatchObject({ kind: 'error', line: 2, error: { error_type: 'invalid_json', message: 'Line 2 is not valid UTF-8' } });
    const surrogate = '{"custom_id":"s","body":{"model":"simulator/echo","messages":[{"role":"user","content":"\\ud800"}]}}';
    expect(checker.checkLine({ number: 3, text: surrogate, bytes: surrogate.length, offset: 0 })).toMatchObject({ kind: 'error', error: { message: expect.stringContaining('unpaired UTF-16 surrogate') } });
    const proto = '{"custom_id":"p","body":{"model":"simulator/echo","messages":[{"role":"user","content":"x"}],"metadata":{"__proto__":{"a":1}}}}';
    expect(checker.checkLine({ number: 4, text: proto, bytes: proto.length, offset: 0 })).toMatchObject({ kind: 'error', error: { message: expect.stringContaining('"__proto__"') } });
    // The replacement character itself, sent as UTF-8, is text like any other.
    const replacement = JSON.stringify({ custom_id: 'r', body: chat('\uFFFD') });
    expect(checker.checkLine((await collect((async function* () { yield Buffer.from(replacement); })()))[0]!)).toMatchObject({ kind: 'item', customId: 'r' });
  });

  it('reports an unparsable or oversized line as that line\'s error', () => {
    const checker = new BatchItemChecker('/v1/chat/completions');
    expect(checker.checkLine({ number: 4, text: '{"custom_id": ', bytes: 14, offset: 0 })).toMatchObject({ kind: 'error', line: 4, error: { error_type: 'invalid_json', message: expect.stringMatching(/^Line 4 is not valid JSON/) } });
    const deep = `{"custom_id":"d","body":{"model":"m","messages":[{"role":"user","content":"x"}],"metadata":${'['.repeat(200)}${']'.repeat(200)}}}`;
    expect(checker.checkLine({ number: 5, text: deep, bytes: deep.length, offset: 0 })).toMatchObject({ kind: 'error', line: 5, error: { error_type: 'invalid_json', message: 'Line 5 nests objects and arrays more than 128 levels deep' } });
    expect(checker.checkLine({ number: 5, text: null, bytes: 7_000_000, offset: 0 })).toMatchObject({ kind: 'error', line: 5, error: { error_type: 'line_too_large' } });
  });

  it('checks /v1/embeddings items against the embeddings request', () => {
    const checker = new BatchItemChecker('/v1/embeddings', { model: 'simulator/embed' });
    expect(checker.check({ custom_id: 'e1', body: { input: ['a', 'b'] } }, 1)).toMatchObject({ kind: 'item', body: { model: 'simulator/embed', input: ['a', 'b'] } });
    expect(checker.check({ custom_id: 'e2', body: { input: [1, 2, 3] } }, 2)).toMatchObject({ kind: 'error', error: { error_type: 'invalid_body', message: expect.stringMatching(/token arrays are not accepted/) } });
    expect(checker.check({ custom_id: 'e3', body: { input: '' } }, 3)).toMatchObject({ kind: 'error', error: { error_type: 'invalid_body' } });
  });

  it('checks /v1/messages items against the Anthropic Messages request', () => {
    const checker = new BatchItemChecker('/v1/messages', { model: null });
    const good = { model: 'simulator/echo', max_tokens: 16, system: 'Be brief.', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] };
    expect(checker.check({ custom_id: 'm1', body: good }, 1)).toMatchObject({ kind: 'item', customId: 'm1' });
    // A chat-style message is not a Messages request: a system role does not exist there.
    expect(checker.check({ custom_id: 'm2', body: { model: 'simulator/echo', messages: [{ role: 'system', content: 'x' }] } }, 2))
      .toMatchObject({ kind: 'error', error: { error_type: 'invalid_body', param: 'body.messages.0.role' } });
  });
});

describe('checkInlineRequests', () => {
  it('is a 400 naming the item for a missing or repeated custom_id, and an item error for a bad body', () => {
    expect(() => checkInlineRequests([{ custom_id: 'a', body: chat() }, { body: chat() }], '/v1/chat/completions'))
      .toThrow(/^Invalid body\.requests\.1: Item 2 has no custom_id/);
    expect(() => checkInlineRequests([{ custom_id: 'a', body: chat() }, { custom_id: 'a', body: chat() }], '/v1/chat/completions')).toThrow(InvalidInputError);
    expect(() => checkInlineRequests(['text'], '/v1/chat/completions')).toThrow(/^Invalid body\.requests\.0: Item 1 must be an object/);
    const checked = checkInlineRequests([{ custom_id: 'a', body: chat() }, { custom_id: 'b', body: { model: 'm' } }], '/v1/chat/completions');
    expect(checked.map((item) => item.kind)).toEqual(['item', 'error']);
  });
});
