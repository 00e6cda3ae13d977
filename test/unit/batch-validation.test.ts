import { describe, expect, it } from '@jest/globals';
import { jsonLines, type CheckedItem } from '../../lambdas/batches/input.js';
import { validateBatchInput } from '../../lambdas/batches/validation.js';

const chat = (model: string, content = 'hi') => ({ model, messages: [{ role: 'user', content }] });

async function* chunks(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

describe('validateBatchInput', () => {
  // 23 lines: a BOM, CRLF endings, a blank line, two bad items, multi-byte text.
  const lines = Array.from({ length: 23 }, (_, i) => {
    if (i === 4) return '';
    if (i === 7) return '{"custom_id": "broken"';
    if (i === 11) return JSON.stringify({ custom_id: 'c3', body: chat('simulator/echo') });
    return JSON.stringify({ custom_id: `c${i}`, body: chat('simulator/echo', `ü ${i} ✓`) });
  });
  const input = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(lines.join('\r\n') + '\r\n')]);

  it('counts and reports every item, and plans shards as byte ranges that hold exactly the runnable items', async () => {
    const errors: CheckedItem[] = [];
    const result = await validateBatchInput(chunks(input, 7), '/v1/chat/completions', { shardItems: 5, onError: (item) => { errors.push(item); } });
    expect(result).toMatchObject({ total: 22, runnable: 20, failed: 2, model: 'simulator/echo' });
    expect(errors.map((e) => [e.line, e.kind === 'error' && e.error.error_type])).toEqual([[8, 'invalid_json'], [12, 'duplicate_custom_id']]);
    // Ranges of at most 5 items, each ended early by a bad line: none holds one.
    expect(result.shards.map((s) => s.items)).toEqual([5, 1, 3, 5, 5, 1]);
    expect(result.shards.map((s) => s.firstLine)).toEqual([1, 7, 9, 13, 18, 23]);
    // Reading each range back (as a worker's ranged GET would) gives exactly its runnable items, in order.
    const seen: string[] = [];
    for (const shard of result.shards) {
      const numbers: number[] = [];
      for await (const line of jsonLines([input.subarray(shard.start, shard.end)])) {
        numbers.push(shard.firstLine + line.number - 1);
        seen.push(JSON.parse(line.text!).custom_id);
      }
      expect(numbers.length).toBe(shard.items);
    }
    expect(seen).toEqual(Array.from({ length: 23 }, (_, i) => i).filter((i) => ![4, 7, 11].includes(i)).map((i) => `c${i}`));
  });

  it('names the model only when every runnable item names the same one', async () => {
    const mixed = Buffer.from([JSON.stringify({ custom_id: 'a', body: chat('simulator/echo') }), JSON.stringify({ custom_id: 'b', body: chat('openai/gpt-4o') })].join('\n'));
    expect((await validateBatchInput([mixed], '/v1/chat/completions', { onError: () => undefined })).model).toBeNull();
  });

  it('plans nothing when no item can run', async () => {
    const result = await validateBatchInput(['{"x": 1}\n', 'nope\n'], '/v1/chat/completions', { onError: () => undefined });
    expect(result).toMatchObject({ total: 2, runnable: 0, failed: 2, shards: [], model: null });
  });
});
