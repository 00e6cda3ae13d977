// A short-lived in-memory cache of key records, so a warm function does not read the same key on
// every request. Writes through this process invalidate at once; other instances see changes within the TTL.
import type { ApiKey } from './types.js';

export class KeyCache {
  private readonly entries = new Map<string, { key: ApiKey; expiresAt: number }>();

  constructor(private readonly ttlMs = 2000, private readonly maxEntries = 10_000, private readonly now: () => number = Date.now) {}

  get(hash: string): ApiKey | undefined {
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(hash);
      return undefined;
    }
    return entry.key;
  }

  set(hash: string, key: ApiKey): void {
    if (this.ttlMs <= 0) return;
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(hash, { key, expiresAt: this.now() + this.ttlMs });
  }

  invalidate(hash: string): void {
    this.entries.delete(hash);
  }
}
