// The quick check of upstream replies (lambdas/providers/fast-check.ts) never lets through what zod would
// refuse: every value it passes, zod parses too. Checked on the schemas it compiles, with valid replies and
// thousands of damaged copies of them.
import { describe, expect, it } from '@jest/globals';
import * as z from 'zod';
import { fastCheckOf } from '../../lambdas/providers/fast-check.js';
import { openAIChatChunkSchema, openAIChatResponseSchema, openAIErrorSchema } from '../../lambdas/providers/openai/openai-chat-api-types.js';
import { converseResponseSchema, converseStreamEventSchema } from '../../lambdas/providers/bedrock/bedrock-converse-api-types.js';
import { parseUpstream } from '../../lambdas/providers/http.js';

const samples: Array<[string, z.ZodType, unknown[]]> = [
  ['OpenAI chat chunk', openAIChatChunkSchema, [
    { id: 'c1', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' }, finish_reason: null }] },
    { id: 'c1', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 't', type: 'function', function: { name: 'f', arguments: '{"a"' } }] } }] },
    { id: 'c1', choices: [], usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8, prompt_tokens_details: { cached_tokens: 1 }, completion_tokens_details: { reasoning_tokens: 2 } } },
    { error: { message: 'overloaded', code: 529 } },
  ]],
  ['OpenAI chat response', openAIChatResponseSchema, [
    { id: 'r', model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'hi', reasoning: 'r' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 2 } },
    { choices: [{ message: { content: null, tool_calls: [{ id: 'x', type: 'function', function: { name: 'f', arguments: '{}' } }] }, finish_reason: 'tool_calls' }] },
  ]],
  ['OpenAI error', openAIErrorSchema, [{ error: { message: 'no', type: 'invalid_request_error', code: null } }]],
  ['Bedrock stream event', converseStreamEventSchema, [
    { contentBlockDelta: { delta: { text: 'hi' }, contentBlockIndex: 0 } },
    { messageStop: { stopReason: 'end_turn' } },
    { metadata: { usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 } } },
  ]],
  ['Bedrock response', converseResponseSchema, [
    { output: { message: { role: 'assistant', content: [{ text: 'hi' }] } }, stopReason: 'end_turn', usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 } },
  ]],
];

/** A deterministic generator, so a failure names a reproducible case. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

const ODD_VALUES: unknown[] = [null, undefined, 0, -1, 1.5, Number.MAX_SAFE_INTEGER + 2, '', 'x', true, false, [], [1], {}, { a: 1 }];

/** A copy of `value` with one thing changed somewhere inside: a key dropped or added, or a value replaced. */
function damaged(value: unknown, next: () => number): unknown {
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  if (Array.isArray(value)) {
    if (value.length === 0 || next() < 0.2) return next() < 0.5 ? [] : [...value, pick(ODD_VALUES)];
    const copy = [...value];
    const at = Math.floor(next() * copy.length);
    copy[at] = damaged(copy[at], next);
    return copy;
  }
  if (value !== null && typeof value === 'object') {
    const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    const keys = Object.keys(copy);
    const roll = next();
    if (keys.length === 0 || roll < 0.15) copy[`extra_${Math.floor(next() * 3)}`] = pick(ODD_VALUES);
    else if (roll < 0.35) delete copy[pick(keys)];
    else {
      const key = pick(keys);
      copy[key] = damaged(copy[key], next);
    }
    return copy;
  }
  return pick(ODD_VALUES);
}

describe('quick check of upstream replies', () => {
  it.each(samples)('%s: compiles, passes valid replies as they are, and passes nothing zod refuses', (_name, schema, valid) => {
    const check = fastCheckOf(schema);
    expect(check).toBeDefined();
    for (const sample of valid) {
      expect(schema.safeParse(sample).success).toBe(true);
      expect(check!(sample)).toBe(true);
      expect(parseUpstream('p', schema, sample)).toBe(sample);
    }
    const next = random(7);
    let passed = 0;
    let refused = 0;
    for (let i = 0; i < 3000; i++) {
      let value: unknown = valid[i % valid.length];
      for (let changes = 1 + Math.floor(next() * 3); changes > 0; changes--) value = damaged(value, next);
      const zodAccepts = schema.safeParse(value).success;
      if (check!(value)) {
        passed += 1;
        if (!zodAccepts) throw new Error(`the quick check passed what zod refuses: ${JSON.stringify(value)}`);
      } else if (zodAccepts) {
        // Allowed (zod then parses it), but it should be rare: the quick check is meant to pass what zod does.
        refused += 1;
      }
    }
    expect(passed).toBeGreaterThan(100);
    expect(refused).toBe(0);
  });

  it('leaves to zod what it cannot check exactly', () => {
    expect(fastCheckOf(z.strictObject({ a: z.string() }))).toBeUndefined();
    expect(fastCheckOf(z.object({ a: z.string().regex(/x/) }))).toBeUndefined();
    expect(fastCheckOf(z.object({ a: z.string() }).refine(() => true))).toBeUndefined();
    expect(fastCheckOf(z.object({ a: z.string().default('x') }))).toBeUndefined();
    expect(fastCheckOf(z.object({ a: z.string().transform((s) => s.length) }))).toBeUndefined();
    expect(fastCheckOf(z.object({ a: z.record(z.string(), z.number()) }))).toBeUndefined();
    expect(fastCheckOf(z.union([z.string(), z.string().email()]))).toBeUndefined();
    expect(fastCheckOf(z.number().int().min(3))).toBeUndefined();
    // Schemas that are themselves checks, an exclusive union, a recursive schema.
    expect(fastCheckOf(z.object({ a: z.int() }))).toBeUndefined();
    expect(fastCheckOf(z.object({ a: z.email() }))).toBeUndefined();
    expect(fastCheckOf(z.xor([z.string(), z.string()]))).toBeUndefined();
    const node = z.object({ name: z.string(), get children() { return z.array(node).optional(); } });
    expect(fastCheckOf(node)).toBeUndefined();
  });

  it('checks each plain part as zod does', () => {
    const check = fastCheckOf(z.object({
      n: z.number(), i: z.number().int(), s: z.string().optional(), b: z.boolean().nullable(), l: z.literal('x'), e: z.enum(['p', 'q']),
      a: z.array(z.string()).min(1).max(2), u: z.union([z.string(), z.number()]).nullish(), loose: z.looseObject({ k: z.string() }), any: z.unknown(),
    }))!;
    const good = { n: 1.5, i: 2, b: null, l: 'x', e: 'q', a: ['x'], loose: { k: 'v', other: 1 }, any: [1], unknown_key: 1 };
    expect(check(good)).toBe(true);
    for (const bad of [
      { n: '1' }, { i: 1.5 }, { i: 2 ** 60 }, { s: 1 }, { b: undefined }, { l: 'y' }, { e: 'r' }, { a: [] }, { a: ['a', 'b', 'c'] }, { a: [1] },
      { u: true }, { loose: { k: 1 } }, { loose: [] }, { n: Number.POSITIVE_INFINITY },
    ]) {
      const value = { ...good, ...bad };
      expect([JSON.stringify(bad), check(value)]).toEqual([JSON.stringify(bad), false]);
    }
    expect(check([])).toBe(false);
    expect(check(null)).toBe(false);
  });
});
