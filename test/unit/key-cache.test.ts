import { describe, expect, it } from '@jest/globals';
import { KeyCache } from '../../lambdas/keys/key-cache.js';
import { newApiKey } from '../../lambdas/keys/new-key.js';

const key = newApiKey({ orgId: 'o', orgKind: 'organization', workspaceId: 'w', kind: 'standard', name: 'k', now: new Date() }).key;

describe('key cache', () => {
  it('serves entries until their TTL passes', () => {
    let now = 1000;
    const cache = new KeyCache(2000, 10, () => now);
    cache.set(key.hash, key);
    now = 2999;
    expect(cache.get(key.hash)).toBe(key);
    now = 3000;
    expect(cache.get(key.hash)).toBeUndefined();
  });

  it('forgets invalidated entries at once and evicts the oldest beyond its size', () => {
    const cache = new KeyCache(10_000, 2);
    cache.set('a', key);
    cache.set('b', key);
    cache.set('c', key);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('c')).toBe(key);
    cache.invalidate('c');
    expect(cache.get('c')).toBeUndefined();
  });

  it('caches nothing with a zero TTL', () => {
    const cache = new KeyCache(0);
    cache.set('a', key);
    expect(cache.get('a')).toBeUndefined();
  });

  it('shares one lookup among concurrent misses of a key', async () => {
    const cache = new KeyCache(2000);
    let lookups = 0;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    const load = async () => { lookups += 1; await gate; return key; };
    const all = Promise.all(Array.from({ length: 50 }, () => cache.getOrLoad(key.hash, load)));
    release();
    expect(new Set(await all)).toEqual(new Set([key]));
    expect(lookups).toBe(1);
  });

  it('serves a key near its expiry while one background lookup renews it', async () => {
    let now = 0;
    const cache = new KeyCache(2000, 10, () => now);
    let lookups = 0;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    const renamed = { ...key, name: 'renamed' };
    const load = async () => {
      lookups += 1;
      if (lookups === 1) return key;
      await gate;
      return renamed;
    };
    expect(await cache.getOrLoad(key.hash, load)).toBe(key);
    now = 1000;
    expect(await cache.getOrLoad(key.hash, load)).toBe(key);
    expect(lookups).toBe(1);
    now = 1700;
    // In the last quarter of its life: served from the cache, with exactly one renewal under way.
    expect(await cache.getOrLoad(key.hash, load)).toBe(key);
    expect(await cache.getOrLoad(key.hash, load)).toBe(key);
    expect(lookups).toBe(2);
    release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(await cache.getOrLoad(key.hash, load)).toBe(renamed);
    expect(lookups).toBe(2);
  });

  it('does not cache unknown keys', async () => {
    const cache = new KeyCache(2000);
    let lookups = 0;
    const load = async () => { lookups += 1; return undefined; };
    expect(await cache.getOrLoad('nope', load)).toBeUndefined();
    expect(await cache.getOrLoad('nope', load)).toBeUndefined();
    expect(lookups).toBe(2);
  });
});
