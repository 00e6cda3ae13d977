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
});
