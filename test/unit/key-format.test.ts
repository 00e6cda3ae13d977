import { describe, expect, it } from '@jest/globals';
import { generateKeyText, hashKey, hashesEqual, isWellFormedKey, KEY_PREFIX, labelFor } from '../../lambdas/keys/key-format.js';

describe('key format', () => {
  it('generates distinct well-formed keys with the prefix', () => {
    const keys = new Set(Array.from({ length: 50 }, generateKeyText));
    expect(keys.size).toBe(50);
    for (const key of keys) {
      expect(key.startsWith(KEY_PREFIX)).toBe(true);
      expect(isWellFormedKey(key)).toBe(true);
    }
  });

  it('rejects any single-character change through the checksum', () => {
    const key = generateKeyText();
    for (const position of [KEY_PREFIX.length, KEY_PREFIX.length + 20, key.length - 1]) {
      const flipped = key.slice(0, position) + (key[position] === 'a' ? 'b' : 'a') + key.slice(position + 1);
      expect(isWellFormedKey(flipped)).toBe(false);
    }
  });

  it('rejects other shapes', () => {
    const key = generateKeyText();
    for (const text of ['', KEY_PREFIX, key.toUpperCase(), key.slice(0, -1), `${key}0`, key.replace(KEY_PREFIX, 'sk-or-v1-'), ` ${key}`]) {
      expect(isWellFormedKey(text)).toBe(false);
    }
  });

  it('hashes with SHA-256 and compares hashes exactly', () => {
    expect(hashKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashesEqual(hashKey('a'), hashKey('a'))).toBe(true);
    expect(hashesEqual(hashKey('a'), hashKey('b'))).toBe(false);
    expect(hashesEqual('ab', 'abc')).toBe(false);
  });

  it('masks keys in labels', () => {
    const key = generateKeyText();
    const label = labelFor(key);
    expect(label).toBe(`${KEY_PREFIX}${key.slice(9, 12)}...${key.slice(-3)}`);
    expect(label.length).toBeLessThan(25);
    expect(labelFor('short')).toBe('...');
  });
});
