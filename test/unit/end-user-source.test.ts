// What inference reads of an organization's end users (end-users/end-user-source.ts), over a scripted
// repository: a small organization read whole once and answered from memory, a large one looked up per user
// with misses cached too, and invalidation and reload reading again.
import { describe, expect, it } from '@jest/globals';
import { EndUserSource, LIST_MAX } from '../../lambdas/end-users/end-user-source.js';
import { newMeter } from '../../lambdas/billing/meter.js';
import type { EndUser } from '../../lambdas/end-users/index.js';

const endUser = (hash: string): EndUser => ({
  org_id: 'org1', user: `user-${hash}`, user_hash: hash, epoch: 'e1', name: null, limit: null, limit_reset: null, include_byok_in_limit: false,
  disabled: false, settings_version: 1, meter: newMeter(new Date('2026-11-25T00:00:00Z')), created_at: '', updated_at: '',
});

function repository(count: number) {
  const all = Array.from({ length: count }, (_, i) => endUser(`h${i}`));
  const calls = { lists: 0, gets: [] as string[] };
  return {
    calls,
    listUpTo: async (_orgId: string, max: number) => { calls.lists += 1; return all.length > max ? undefined : all; },
    get: async (_orgId: string, hash: string) => { calls.gets.push(hash); return all.find((entry) => entry.user_hash === hash); },
  };
}

describe('EndUserSource', () => {
  it('reads a small organization whole, once, and answers from memory, synchronously once cached', async () => {
    const repo = repository(3);
    const source = new EndUserSource(repo, 60_000);
    expect((await source.find('org1', 'h1'))?.user).toBe('user-h1');
    expect(source.find('org1', 'h2')).toMatchObject({ user: 'user-h2' });
    expect(source.find('org1', 'unknown')).toBeUndefined();
    expect(repo.calls).toEqual({ lists: 1, gets: [] });
    source.invalidate('org1');
    await source.find('org1', 'h1');
    expect(repo.calls.lists).toBe(2);
  });

  it('looks a large organization\'s end users up one by one, caching misses too', async () => {
    const repo = repository(LIST_MAX + 1);
    const source = new EndUserSource(repo, 60_000);
    expect((await source.find('org1', 'h5'))?.user).toBe('user-h5');
    expect(await source.find('org1', 'nobody')).toBeUndefined();
    expect(source.find('org1', 'h5')).toMatchObject({ user: 'user-h5' });
    expect(source.find('org1', 'nobody')).toBeUndefined();
    expect(repo.calls).toEqual({ lists: 1, gets: ['h5', 'nobody'] });
    expect((await source.reload('org1', 'h5'))?.user).toBe('user-h5');
    expect(repo.calls.gets).toEqual(['h5', 'nobody', 'h5']);
  });
});
