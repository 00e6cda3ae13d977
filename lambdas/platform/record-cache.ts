// A short-lived in-memory cache of records (API keys, workspaces), so a warm function does not read the
// same item on every request. Concurrent misses for one key share one lookup, and an entry used in the last part of its
// life is refreshed in the background, so a busy key never makes its requests wait on the store.
// Writes through this process invalidate at once; other instances see changes within about one TTL.
interface Entry<T> {
  key: T | undefined;
  expiresAt: number;
  refreshing: boolean;
}

export class RecordCache<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private readonly inflight = new Map<string, Promise<T | undefined>>();

  constructor(private readonly ttlMs = 2000, private readonly maxEntries = 10_000, private readonly now: () => number = Date.now) {}

  get(hash: string): T | undefined {
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(hash);
      return undefined;
    }
    return entry.key;
  }

  set(hash: string, key: T): void {
    this.store(hash, key);
  }

  /**
   * The cached record, or one lookup shared by every concurrent caller. Unknown keys are not cached.
   * In the last quarter of an entry's life the entry is still served while one background lookup renews it.
   */
  async getOrLoad(hash: string, load: (hash: string) => Promise<T | undefined>): Promise<T | undefined> {
    const entry = this.entries.get(hash);
    const now = this.now();
    if (entry && entry.expiresAt > now) {
      if (!entry.refreshing && entry.expiresAt - now < this.ttlMs / 4) {
        entry.refreshing = true;
        this.loadShared(hash, load).catch(() => { entry.refreshing = false; });
      }
      return entry.key;
    }
    return this.loadShared(hash, load);
  }

  /**
   * The cached record when there is a live one, without a promise (for hot paths that go on synchronously);
   * in the last quarter of its life one background lookup renews it, as getOrLoad does. Undefined: load it.
   */
  fresh(hash: string, load: (hash: string) => Promise<T | undefined>): T | undefined {
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    const now = this.now();
    if (entry.expiresAt <= now) return undefined;
    if (!entry.refreshing && entry.expiresAt - now < this.ttlMs / 4) {
      entry.refreshing = true;
      this.loadShared(hash, load).catch(() => { entry.refreshing = false; });
    }
    return entry.key;
  }

  /**
   * Starts the lookup of a record that is neither cached nor being looked up, without waiting for it: one a
   * request will ask for in a moment, read beside the others it needs rather than after them. Its failure is
   * seen by whoever asks next (and that asks again). A cache that keeps nothing (a lifetime of 0) has nothing
   * to warm: the lookup would only be made twice.
   */
  warm(hash: string, load: (hash: string) => Promise<T | undefined>): void {
    if (this.ttlMs <= 0 || this.holds(hash)) return;
    this.loadShared(hash, load).catch(() => undefined);
  }

  /** Whether the record is cached and live, or being looked up. */
  holds(hash: string): boolean {
    if (this.inflight.has(hash)) return true;
    const entry = this.entries.get(hash);
    return entry !== undefined && entry.expiresAt > this.now();
  }

  /** Drops the record, and any lookup under way: what it brings back may be older than the change that invalidated it. */
  invalidate(hash: string): void {
    this.entries.delete(hash);
    this.inflight.delete(hash);
  }

  /** Drops every record (and lookup under way) whose key `matches`. */
  invalidateWhere(matches: (hash: string) => boolean): void {
    for (const hash of [...this.entries.keys(), ...this.inflight.keys()]) if (matches(hash)) this.invalidate(hash);
  }

  private loadShared(hash: string, load: (hash: string) => Promise<T | undefined>): Promise<T | undefined> {
    let pending = this.inflight.get(hash);
    if (!pending) {
      const started: Promise<T | undefined> = load(hash).then((key) => {
        // Only the lookup still current may store (an invalidation since then dropped this one).
        if (this.inflight.get(hash) === started) {
          if (key) this.store(hash, key);
          else this.entries.delete(hash);
        }
        return key;
      }).finally(() => {
        if (this.inflight.get(hash) === started) this.inflight.delete(hash);
      });
      pending = started;
      this.inflight.set(hash, pending);
    }
    return pending;
  }

  private store(hash: string, key: T): void {
    if (this.ttlMs <= 0) return;
    if (!this.entries.has(hash) && this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(hash, { key, expiresAt: this.now() + this.ttlMs, refreshing: false });
  }
}
