// The end users inference looks a request's `user` up in, cached like guardrail policies (a request whose
// lookup is cached reads nothing and waits for nothing; only requests that name a user look):
// - an organization with at most LIST_MAX end users is read whole, in one Query, and cached as a map;
// - a larger one is looked up per user (one Query of that user's items), each answer cached, "not
//   registered" too, so a busy user costs one read per process per cache lifetime; that it is large is
//   known for LARGE_TTL_MS before its list is tried again.
// A change made through this process applies to its next request; other processes see it within the cache
// lifetime. A change of a limit reaches them sooner: a hold checks the end user's settings version and
// rereads a stale copy (billing/ledger.ts).
import { RecordCache } from '../platform/record-cache.js';
import type { EndUserRepository } from './end-user-repository.js';
import type { EndUser } from './types.js';

/** End users an organization may have for its whole list to be cached in each process. */
export const LIST_MAX = 1000;
/** How long an organization found to have more than LIST_MAX end users is looked up per user before its list is tried again. */
export const LARGE_TTL_MS = 5 * 60_000;

export class EndUserSource {
  /** The end users of organizations with at most LIST_MAX, by user hash. */
  private readonly organizations: RecordCache<Map<string, EndUser>>;
  private readonly users: RecordCache<{ endUser: EndUser | undefined }>;
  /** An organization's end users; undefined (not cached) when it is large. */
  private readonly loadOrganization: (orgId: string) => Promise<Map<string, EndUser> | undefined>;
  /** Organizations known to be large, until when (epoch ms). */
  private readonly large = new Map<string, number>();

  constructor(private readonly repository: Pick<EndUserRepository, 'listUpTo' | 'get'>, ttlMs = 2000, private readonly now: () => number = Date.now) {
    this.organizations = new RecordCache(ttlMs, 10_000, now);
    this.users = new RecordCache(ttlMs, 10_000, now);
    this.loadOrganization = async (orgId) => {
      const all = await repository.listUpTo(orgId, LIST_MAX);
      if (all) return new Map(all.map((endUser) => [endUser.user_hash, endUser]));
      if (this.large.size >= 10_000) this.large.clear();
      this.large.set(orgId, this.now() + LARGE_TTL_MS);
      return undefined;
    };
  }

  /** The registered end user of this hash, or undefined; synchronously when cached. */
  find(orgId: string, userHash: string): EndUser | undefined | Promise<EndUser | undefined> {
    if ((this.large.get(orgId) ?? 0) > this.now()) return this.findOne(orgId, userHash);
    const all = this.organizations.fresh(orgId, this.loadOrganization);
    if (all) return all.get(userHash);
    return this.organizations.getOrLoad(orgId, this.loadOrganization).then((loaded) => (loaded ? loaded.get(userHash) : this.findOne(orgId, userHash)));
  }

  /** Read again now (a hold found the cached copy's meter gone: deleted, or registered again); the caches learn it. */
  async reload(orgId: string, userHash: string): Promise<EndUser | undefined> {
    const endUser = await this.repository.get(orgId, userHash, true);
    const all = this.organizations.get(orgId);
    if (endUser) all?.set(userHash, endUser);
    else all?.delete(userHash);
    const key = `${orgId}/${userHash}`;
    // A lookup under way may bring back an older answer: it is dropped.
    this.users.invalidate(key);
    this.users.set(key, { endUser });
    return endUser;
  }

  /** A change written through this process: its next request reads again. */
  invalidate(orgId: string): void {
    this.organizations.invalidate(orgId);
    this.large.delete(orgId);
    this.users.invalidateWhere((key) => key.startsWith(`${orgId}/`));
  }

  private findOne(orgId: string, userHash: string): EndUser | undefined | Promise<EndUser | undefined> {
    const key = `${orgId}/${userHash}`;
    const load = async () => ({ endUser: await this.repository.get(orgId, userHash, true) });
    const cached = this.users.fresh(key, load);
    if (cached) return cached.endUser;
    return this.users.getOrLoad(key, load).then((found) => found?.endUser);
  }
}
