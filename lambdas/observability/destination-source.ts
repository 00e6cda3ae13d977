// Each organization's destinations as the sending and delivering sides read them, cached like API keys: a
// generation of an organization whose list is cached reads nothing and waits for nothing (no promise).
import { RecordCache } from '../platform/record-cache.js';
import type { DestinationRepository } from './destination-repository.js';
import type { Destination } from './types.js';

export class DestinationSource {
  private readonly cache: RecordCache<Destination[]>;
  private readonly load: (orgId: string) => Promise<Destination[]>;

  constructor(repository: Pick<DestinationRepository, 'list'>, ttlMs = 2000) {
    this.cache = new RecordCache<Destination[]>(ttlMs);
    // Read consistently: a destination saved a moment ago is the one loaded.
    this.load = (orgId) => repository.list(orgId, true);
  }

  /** The organization's destinations, synchronously when cached. */
  destinationsFor(orgId: string): Destination[] | Promise<Destination[]> {
    return this.cache.fresh(orgId, this.load) ?? this.cache.getOrLoad(orgId, this.load).then((list) => list ?? []);
  }

  /** A change written through this process applies to its next generation (other instances within the cache lifetime). */
  invalidate(orgId: string): void {
    this.cache.invalidate(orgId);
  }
}
