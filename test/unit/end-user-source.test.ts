// What inference reads of an organization's end users (end-users/end-user-source.ts), over a scripted
// repository: a small organization read whole once and answered from memory, a large one looked up per user
// with misses cached too, and invalidation and reload reading again; and the repository's registration
// transactions meeting concurrent ones.
import { beforeEach, describe, expect, it } from '@jest/globals';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { EndUserRepository } from '../../lambdas/end-users/end-user-repository.js';
import { UnavailableError } from '../../lambdas/platform/errors.js';
import { EndUserSource, LARGE_TTL_MS, LIST_MAX } from '../../lambdas/end-users/end-user-source.js';
import { newMeter } from '../../lambdas/billing/meter.js';
import type { EndUser } from '../../lambdas/end-users/index.js';

const endUser = (hash: string): EndUser => ({
  org_id: 'org1', user: `user-${hash}`, user_hash: hash, epoch: 'e1', name: null, limit: null, limit_reset: null, include_byok_in_limit: false,
  disabled: false, settings_version: 1, meter: newMeter(new Date('2026-11-25T00:00:00Z')), created_at: '', updated_at: '',
});

function repository(count: number) {
  let all = Array.from({ length: count }, (_, i) => endUser(`h${i}`));
  const calls = { lists: 0, gets: [] as string[] };
  return {
    calls,
    remove: (hash: string) => { all = all.filter((entry) => entry.user_hash !== hash); },
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

  it('knows an organization is large for minutes: past the short cache it goes on looking up per user, not listing', async () => {
    const repo = repository(LIST_MAX + 1);
    let now = 0;
    const source = new EndUserSource(repo, 2000, () => now);
    await source.find('org1', 'h1');
    now = LARGE_TTL_MS - 1;
    await source.find('org1', 'h2');
    expect(repo.calls.lists).toBe(1);
    now = LARGE_TTL_MS + 1;
    await source.find('org1', 'h3');
    expect(repo.calls.lists).toBe(2);
  });

  it('learns a reload: a deleted end user leaves the cached list, without reading the list again', async () => {
    const repo = repository(2);
    const source = new EndUserSource(repo, 60_000);
    expect(await source.find('org1', 'h1')).toBeDefined();
    repo.remove('h1');
    expect(await source.reload('org1', 'h1')).toBeUndefined();
    expect(source.find('org1', 'h1')).toBeUndefined();
    expect(repo.calls.lists).toBe(1);
  });
});

describe('EndUserRepository: a registration\'s transactions meeting others (aws-sdk-client-mock)', () => {
  const db = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'local', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }));
  const mock = mockClient(db);
  const repository = new EndUserRepository(db, 'table', async () => undefined);
  const cancel = (...codes: string[]) => new TransactionCanceledException({ message: 'cancelled', $metadata: {}, CancellationReasons: codes.map((Code) => ({ Code })) });
  const fields = { org_id: 'org1', user: 'u', user_hash: 'h', name: null, limit: null, limit_reset: null, include_byok_in_limit: false, disabled: false, created_at: '', updated_at: '' };
  beforeEach(() => { mock.reset(); });

  it('tries again after a conflict, tells a taken id (409 upstream) from a conflict, and answers a 503 after its attempts, never a 500', async () => {
    mock.on(TransactWriteCommand).rejectsOnce(cancel('None', 'TransactionConflict')).resolves({});
    expect(await repository.create(fields, new Date())).toMatchObject({ user: 'u', settings_version: 1 });
    mock.reset();
    mock.on(TransactWriteCommand).rejects(cancel('ConditionalCheckFailed', 'None'));
    expect(await repository.create(fields, new Date())).toBeUndefined();
    expect(await repository.delete({ org_id: 'org1', user_hash: 'h', epoch: 'e' })).toBe(false);
    mock.reset();
    mock.on(TransactWriteCommand).rejects(cancel('None', 'TransactionConflict'));
    await expect(repository.delete({ org_id: 'org1', user_hash: 'h', epoch: 'e' })).rejects.toBeInstanceOf(UnavailableError);
    expect(mock.commandCalls(TransactWriteCommand)).toHaveLength(8);
  });
});
