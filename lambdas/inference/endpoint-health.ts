// Health-aware exclusion: an endpoint that fails with a retryable error is cooled down for a while
// (doubling on repeated failures), and routed to only when nothing healthy is left.
export class EndpointHealth {
  private readonly state = new Map<string, { failures: number; until: number }>();

  constructor(private readonly baseCooldownMs = 30_000, private readonly maxCooldownMs = 300_000) {}

  recordFailure(key: string, now: number): void {
    const failures = (this.state.get(key)?.failures ?? 0) + 1;
    const cooldown = Math.min(this.baseCooldownMs * 2 ** (failures - 1), this.maxCooldownMs);
    this.state.set(key, { failures, until: now + cooldown });
  }

  recordSuccess(key: string): void {
    this.state.delete(key);
  }

  isCoolingDown(key: string, now: number): boolean {
    const entry = this.state.get(key);
    return entry !== undefined && entry.until > now;
  }
}

/** Sticky routing: the endpoint a session last succeeded on is tried first (bounded, expiring). */
export class StickySessions {
  private readonly entries = new Map<string, { endpoint: string; until: number }>();

  constructor(private readonly ttlMs = 3_600_000, private readonly maxEntries = 50_000) {}

  get(sessionKey: string, now: number): string | undefined {
    const entry = this.entries.get(sessionKey);
    if (!entry) return undefined;
    if (entry.until <= now) {
      this.entries.delete(sessionKey);
      return undefined;
    }
    return entry.endpoint;
  }

  set(sessionKey: string, endpoint: string, now: number): void {
    if (!this.entries.has(sessionKey) && this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(sessionKey, { endpoint, until: now + this.ttlMs });
  }
}
