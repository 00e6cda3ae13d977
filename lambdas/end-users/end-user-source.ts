// The end users inference looks a request's `user` up in: each organization's, read in one Query and cached
// like guardrail policies (a request of an organization whose list is cached reads nothing and waits for
// nothing). Only requests that name a user look; a change here applies to this process's next request,
// and to other instances within the cache lifetime; a change of a limit is exact sooner, at the hold,
// which checks the end user's settings version and rereads a stale copy.
import { RecordCache } from '../platform/record-cache.js';
import type { EndUserRepository } from './end-user-repository.js';
import type { EndUser } from './types.js';

export class EndUserSource {
  private readonly cache: RecordCache<Map<string, EndUser>>;
  private readonly load: (orgId: string) => Promise<Map<string, EndUser>>;

  constructor(repository: Pick<EndUserRepository, 'list'>, ttlMs = 2000) {
    this.cache = new RecordCache(ttlMs);
    this.load = async (orgId) => new Map((await repository.list(orgId, true)).map((endUser) => [endUser.user_hash, endUser]));
  }

  /** The organization's end users by hash, synchronously when cached. */
  endUsersOf(orgId: string): Map<string, EndUser> | Promise<Map<string, EndUser>> {
    return this.cache.fresh(orgId, this.load) ?? this.cache.getOrLoad(orgId, this.load).then((found) => found ?? new Map());
  }

  /** A change written through this process: its next request reads the list again. */
  invalidate(orgId: string): void {
    this.cache.invalidate(orgId);
  }
}
