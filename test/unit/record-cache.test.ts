// RecordCache: an invalidation also drops a lookup under way, so a change is never overwritten by what a
// read started before it brings back; fresh() serves a live record without a promise.
import { describe, expect, it } from '@jest/globals';
import { RecordCache } from '../../lambdas/platform/record-cache.js';

describe('RecordCache', () => {
  it('does not store what a lookup started before an invalidation brings back', async () => {
    const cache = new RecordCache<string>(10_000);
    let finishOld!: (value: string) => void;
    const old = cache.getOrLoad('k', () => new Promise((resolve) => { finishOld = resolve; }));
    cache.invalidate('k');
    const fresh = cache.getOrLoad('k', async () => 'new');
    finishOld('old');
    expect(await old).toBe('old');
    expect(await fresh).toBe('new');
    expect(cache.get('k')).toBe('new');
  });

  it('serves a live record synchronously with fresh(), and nothing for a missing or expired one', async () => {
    let now = 0;
    const cache = new RecordCache<string>(100, 10, () => now);
    const load = async () => 'loaded';
    expect(cache.fresh('k', load)).toBeUndefined();
    await cache.getOrLoad('k', load);
    expect(cache.fresh('k', load)).toBe('loaded');
    now = 200;
    expect(cache.fresh('k', load)).toBeUndefined();
  });
});
