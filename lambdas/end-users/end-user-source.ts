// The end users inference looks a request's `user` up in, cached like guardrail policies (a request whose
// lookup is cached reads nothing and waits for nothing; only requests that name a user look):
// - an organization with at most LIST_MAX end users is read whole, in one Query, and cached as a map;
// - a larger one is looked up per user (one Query of that user's items), each answer cached, "not
//   registered" too, so a busy user costs one read per process per cache lifetime.
// A change made through this process applies to its next request; other processes see it within the cache
// lifetime. A change of a limit reaches them sooner: a hold checks the end user's settings version and
// rereads a stale copy (billing/ledger.ts).
import { RecordCache } from '../platform/record-cache.js';
import type { EndUserRepository } from './end-user-repository.js';
import type { EndUser } from './types.js';

/** End users an organization may have for its whole list to be cached in each process. */
export const LIST_MAX = 1000;

type Known = { all: Map<string, EndUser> } | { large: true };

export class EndUserSource {
  private readonly organizations: RecordCache<Known>;
  private readonly users: RecordCache<{ endUser: EndUser | undefined }>;
  private readonly loadOrganization: (orgId: string) => Promise<Known>;

  constructor(private readonly repository: Pick<EndUserRepository, 'listUpTo' | 'get'>, ttlMs = 2000) {
    this.organizations = new RecordCache(ttlMs);
    this.users = new RecordCache(ttlMs);
    this.loadOrganization = async (orgId) => {
      const all = await repository.listUpTo(orgId, LIST_MAX);
      return all ? { all: new Map(all.map((endUser) => [endUser.user_hash, endUser])) } : { large: true };
    };
  }

  /** The registered end user of this hash, or undefined; synchronously when cached. */
  find(orgId: string, userHash: string): EndUser | undefined | Promise<EndUser | undefined> {
    const known = this.organizations.fresh(orgId, this.loadOrganization);
    if (known) return 'all' in known ? known.all.get(userHash) : this.findOne(orgId, userHash);
    return this.organizations.getOrLoad(orgId, this.loadOrganization).then((loaded) => (loaded && 'all' in loaded ? loaded.all.get(userHash) : this.findOne(orgId, userHash)));
  }

  /** Read again now (a hold found the cached copy's meter gone: deleted, or registered again). */
  async reload(orgId: string, userHash: string): Promise<EndUser | undefined> {
    const endUser = await this.repository.get(orgId, userHash, true);
    this.organizations.invalidate(orgId);
    this.users.set(`${orgId}/${userHash}`, { endUser });
    return endUser;
  }

  /** A change written through this process: its next request reads again. */
  invalidate(orgId: string): void {
    this.organizations.invalidate(orgId);
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
