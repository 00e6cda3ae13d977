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

  it('warm() starts one lookup that the next ask shares; nothing for a live record, and nothing at all in a cache that keeps nothing', async () => {
    let now = 0;
    let loads = 0;
    let finish!: (value: string) => void;
    const load = () => { loads += 1; return new Promise<string>((resolve) => { finish = resolve; }); };
    const cache = new RecordCache<string>(100, 10, () => now);
    cache.warm('k', load);
    cache.warm('k', load);
    expect(loads).toBe(1);
    const asked = cache.getOrLoad('k', load);
    expect(loads).toBe(1);
    finish('loaded');
    expect(await asked).toBe('loaded');
    cache.warm('k', load);
    expect(loads).toBe(1);
    now = 200;
    expect(cache.holds('k')).toBe(false);
    cache.warm('k', load);
    expect(loads).toBe(2);

    const keepsNothing = new RecordCache<string>(0);
    let counted = 0;
    keepsNothing.warm('k', async () => { counted += 1; return 'x'; });
    expect(counted).toBe(0);
  });

  it('a warm lookup that fails rejects nothing unhandled; the next ask looks up again', async () => {
    const cache = new RecordCache<string>(1000);
    let attempts = 0;
    const load = async () => {
      attempts += 1;
      if (attempts === 1) throw new Error('throttled');
      return 'second';
    };
    cache.warm('k', load);
    await new Promise((resolve) => setImmediate(resolve));
    expect(cache.holds('k')).toBe(false);
    expect(await cache.getOrLoad('k', load)).toBe('second');
    expect(attempts).toBe(2);
  });
});
