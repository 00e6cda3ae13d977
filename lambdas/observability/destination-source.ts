// Each organization's destinations as the sending and delivering sides read them, cached like API keys: a
// generation of an organization whose list is cached reads nothing and waits for nothing (no promise).
import { RecordCache } from '../platform/record-cache.js';
import type { DestinationRepository } from './destination-repository.js';
import type { Destination } from './types.js';

/**
 * How long a process serves an organization's destination list from memory: a generation of an organization
 * without destinations then reads nothing for this long. A change applies at once in the process that made
 * it, elsewhere within this time; the delivering side reads again before it drops a delivery.
 */
export const DESTINATION_CACHE_TTL_MS = 10_000;

export class DestinationSource {
  private readonly cache: RecordCache<Destination[]>;
  private readonly load: (orgId: string) => Promise<Destination[]>;

  constructor(repository: Pick<DestinationRepository, 'list'>, ttlMs = DESTINATION_CACHE_TTL_MS) {
    this.cache = new RecordCache<Destination[]>(ttlMs);
    // An eventually consistent read (half the read units): changes reach other processes within the cache's lifetime anyway.
    this.load = (orgId) => repository.list(orgId, false);
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
