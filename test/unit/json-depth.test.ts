// The nesting check that keeps recursive code from running out of stack on a request body.
import { describe, expect, it } from '@jest/globals';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../lambdas/platform/json-depth.js';

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('nestsDeeperThan', () => {
  it('counts objects and arrays inside one another, up to the limit and one past it', () => {
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(nestsDeeperThan(`{"a":${nested(3)},"b":{"c":{}}}`, 4)).toBe(false);
    expect(nestsDeeperThan(`{"a":${nested(3)},"b":{"c":{}}}`, 3)).toBe(true);
    // Braces and brackets both count: two of each, nested, are four levels.
    expect(nestsDeeperThan('{"a":[{"b":[]}]}', 4)).toBe(false);
    expect(nestsDeeperThan('{"a":[{"b":[]}]}', 3)).toBe(true);
    expect(nestsDeeperThan(Buffer.from('{"a":[{"b":[]}]}'), 3)).toBe(true);
    // Siblings do not add up.
    expect(nestsDeeperThan(JSON.stringify(Array.from({ length: 1000 }, () => [[1]])), 3)).toBe(false);
  });

  it('skips strings, escaped quotes included, in text and in UTF-8 bytes', () => {
    const text = JSON.stringify({ a: `"${'['.repeat(500)}\\"{{{`, b: 'é✨{' });
    expect(nestsDeeperThan(text, 2)).toBe(false);
    expect(nestsDeeperThan(Buffer.from(text), 2)).toBe(false);
    expect(nestsDeeperThan(Buffer.from(`{"é✨":${nested(5)}}`), 5)).toBe(true);
  });
});
