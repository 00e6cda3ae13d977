// Reading a provider's JSON Lines results file as it arrives (providers/json-lines.ts).
import { describe, expect, it } from '@jest/globals';
import { bodyLines } from '../../lambdas/providers/json-lines.js';

async function linesOf(chunks: Array<string | Uint8Array>): Promise<string[]> {
  const body = (async function* () {
    for (const chunk of chunks) yield typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk;
  })();
  const out: string[] = [];
  for await (const line of bodyLines(body)) out.push(line);
  return out;
}

describe('bodyLines', () => {
  it('splits lines across chunk boundaries, skips blank lines, and keeps a last line without a newline', async () => {
    expect(await linesOf(['{"a":1}\n{"b"', ':2}\n\n  \n{"c":3}'])).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
    expect(await linesOf(['one\r\n', 'two\n'])).toEqual(['one\r', 'two']);
  });

  it('decodes a character split between two chunks', async () => {
    const bytes = new TextEncoder().encode('{"t":"é€"}\n');
    expect(await linesOf([bytes.subarray(0, 7), bytes.subarray(7, 9), bytes.subarray(9)])).toEqual(['{"t":"é€"}']);
  });

  it('reads a WHATWG stream, and nothing from no body', async () => {
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('x\ny'));
        controller.close();
      },
    });
    const out: string[] = [];
    for await (const line of bodyLines(stream)) out.push(line);
    expect(out).toEqual(['x', 'y']);
    const none: string[] = [];
    for await (const line of bodyLines(null)) none.push(line);
    expect(none).toEqual([]);
  });
});
