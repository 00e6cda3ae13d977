// Server-sent events parsed from a byte stream (lambdas/providers/sse.ts), per the WHATWG rules, however the
// bytes are cut into chunks: every cut of each sample gives the same events.
import { describe, expect, it } from '@jest/globals';
import { parseSse, type SseEvent } from '../../lambdas/providers/sse.js';

async function parse(chunks: Array<string | Uint8Array>): Promise<SseEvent[]> {
  async function* body() {
    for (const chunk of chunks) yield typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk;
  }
  const events: SseEvent[] = [];
  for await (const event of parseSse(body())) events.push(event);
  return events;
}

/** Every way of cutting `text`'s bytes in two, and in single bytes. */
function cuts(text: string): Uint8Array[][] {
  const bytes = new TextEncoder().encode(text);
  const ways: Uint8Array[][] = [[bytes], Array.from(bytes, (byte) => Uint8Array.of(byte))];
  for (let at = 1; at < bytes.length; at += 1) ways.push([bytes.slice(0, at), bytes.slice(at)]);
  return ways;
}

const event = (data: string, extra: Partial<SseEvent> = {}): SseEvent => ({ event: undefined, data, id: undefined, ...extra });

const SAMPLES: Array<[string, string, SseEvent[]]> = [
  ['LF line ends', 'data: {"a":1}\n\ndata: two\n\n', [event('{"a":1}'), event('two')]],
  ['CRLF line ends', 'data: one\r\n\r\ndata: two\r\n\r\n', [event('one'), event('two')]],
  ['CR line ends', 'data: one\r\rdata: two\r\r', [event('one'), event('two')]],
  ['fields, comments and multi-line data', ': ping\nevent: delta\nid: 7\ndata: a\ndata:b\ndata\n\n', [event('a\nb\n', { event: 'delta', id: '7' })]],
  ['an id that carries over, an event name that does not', 'id: 1\nevent: x\ndata: a\n\ndata: b\n\n', [event('a', { event: 'x', id: '1' }), event('b', { id: '1' })]],
  ['only the first space after the colon is dropped', 'data:  two spaces\n\n', [event(' two spaces')]],
  ['blank lines without data dispatch nothing', '\n\n: comment\n\nevent: lonely\n\ndata: x\n\n', [event('x')]],
  ['a last event without its blank line, and a last line without its end', 'data: a\n\ndata: b', [event('a'), event('b')]],
  ['multi-byte characters cut anywhere', 'data: héllo 🚫 “quoted”\n\n', [event('héllo 🚫 “quoted”')]],
  ['[DONE]', 'data: {"x":1}\n\ndata: [DONE]\n\n', [event('{"x":1}'), event('[DONE]')]],
  ['names that only begin like a field are ignored, and a colon in the value stays', 'dataz: no\nidx: 1\nevents: q\nda: r\ndata: a:b\n\n', [event('a:b')]],
  ['a field without a colon has an empty value (a colon on a later line is not its)', 'event\ndata: x\n\nid\ndata\n\n', [event('x', { event: '' }), event('', { id: '' })]],
];

describe('SSE parsing', () => {
  it.each(SAMPLES)('%s, however the bytes are cut', async (_name, text, expected) => {
    for (const chunks of cuts(text)) expect(await parse(chunks)).toEqual(expected);
  });

  it('a lone CR ending one chunk and LF starting the next make one line end', async () => {
    expect(await parse(['data: a\r', '\n\r', '\ndata: b\r\n\r\n'])).toEqual([event('a'), event('b')]);
  });

  it('stops reading the body when the reader stops early, and gives nothing after', async () => {
    const read: string[] = [];
    let closed = false;
    const body = {
      [Symbol.asyncIterator]() {
        const chunks = ['data: one\n\ndata: two\n\n', 'data: three\n\n', 'data: four\n\n'];
        return {
          next: async () => {
            const chunk = chunks.shift();
            if (chunk === undefined) return { done: true as const, value: undefined };
            read.push(chunk);
            return { done: false as const, value: new TextEncoder().encode(chunk) };
          },
          return: async () => {
            closed = true;
            return { done: true as const, value: undefined };
          },
        };
      },
    };
    const events = parseSse(body);
    const seen: string[] = [];
    for await (const event of events) {
      seen.push(event.data);
      if (event.data === 'three') break;
    }
    expect(seen).toEqual(['one', 'two', 'three']);
    expect(read).toHaveLength(2);
    expect(closed).toBe(true);
    expect(await events.next()).toEqual({ done: true, value: undefined });
  });

  it('hands on a failure of the body after the events before it, then is over', async () => {
    async function* body() {
      yield new TextEncoder().encode('data: one\n\ndata: tw');
      throw new Error('connection reset');
    }
    const events = parseSse(body());
    expect((await events.next()).value).toEqual(event('one'));
    await expect(events.next()).rejects.toThrow('connection reset');
    expect(await events.next()).toEqual({ done: true, value: undefined });
  });
});
