// Budget leases (the escrow method): a process carves an amount out of an organization's balance, a key's
// limit window and its workspace's budgets in one conditional transaction (the ledger's, exactly like a
// hold), then reserves its requests' maximum costs from it in memory, with no round trip, and gives back
// what they did not spend. For every meter at every instant, across any number of processes:
//
//   usage + outstanding leases + exact holds ≤ limit
//
// because a lease is in the meter's `held` from the moment it is taken until what it did not spend is
// given back, and what it did spend moves from `held` to usage when the aggregator applies the records.
//
// The pool keeps one active lease per key (and retiring ones until their requests end), sizes them from
// the recent demand and the headroom (large when there is plenty, shrinking as it thins: never more than
// 25 %, 10 %, 5 % of what is left as utilisation rises), takes the next one in the background before the
// active one runs out, and gives leases back when they are replaced, stale, idle, too thin for a request
// when the headroom allows no next one, or the process stops. A request that no lease covers takes an
// exact hold (the ledger's reserve), which alone decides a 402.
import type { ApiKey } from '../keys/index.js';
import type { Workspace } from '../organizations/index.js';
import type { Logger } from '../platform/logger.js';
import type { Nanos } from '../platform/money.js';

/** A lease as taken: what it carved out, under which terms, and until when requests may reserve from it. */
export interface LeaseGrant {
  id: string;
  orgId: string;
  workspaceId: string;
  keyHash: string;
  amount: Nanos;
  /** The key's settings and the workspace's budgets it was checked against: a change retires it. */
  settingsVersion: number;
  budgetVersion: number;
  /** Epoch ms after which nothing reserves from it (it is then given back, or swept after it expires). */
  useUntil: number;
}

/** What is left under a key's tightest limit (the organization's balance, its key limit, a budget). */
export interface Headroom {
  /** What the tightest meter can still take. */
  left: Nanos;
  /** That meter's whole size (its limit, or the organization's credits): utilisation is 1 − left / capacity. */
  capacity: Nanos;
}

/** The ledger's side: taking a lease (refused: undefined), giving back its unspent part, reading headroom. */
export interface LeaseLedger {
  headroom(key: ApiKey, workspace: Workspace): Promise<Headroom>;
  takeLease(key: ApiKey, workspace: Workspace, amount: Nanos, useUntil: number): Promise<LeaseGrant | undefined>;
  returnLease(grant: LeaseGrant, spent: Nanos): Promise<void>;
}

export interface LeasePolicy {
  /** How long a lease may be reserved from. */
  useMs: number;
  /** Demand to cover: a lease aims at this many seconds of the recent spend rate. */
  horizonS: number;
  /** Take the next lease when the active one has less than this share left (or is this close to its end). */
  refillBelow: number;
  refillBeforeEndMs: number;
  /** A key with no reservation for this long gives its lease back. */
  idleMs: number;
  /** A lease must cover at least this many of the requests asking for it; else requests hold exactly. */
  minRequests: number;
}

export const DEFAULT_LEASE_POLICY: LeasePolicy = {
  useMs: 60_000,
  horizonS: 5,
  refillBelow: 0.2,
  refillBeforeEndMs: 10_000,
  idleMs: 10_000,
  minRequests: 4,
};

/**
 * The lease to take, or undefined when the headroom is too thin for one (requests then hold exactly):
 * enough for `horizonS` of demand and at least `minRequests` requests, capped at 25 % of what is left while
 * under half of the limit is used, 10 % under 80 %, 5 % beyond.
 */
export function leaseSize(headroom: Headroom, ratePerS: number, request: Nanos, policy: LeasePolicy = DEFAULT_LEASE_POLICY): Nanos | undefined {
  if (headroom.left <= 0n || request <= 0n) return undefined;
  const used = headroom.capacity > 0n ? Number(headroom.capacity - headroom.left) / Number(headroom.capacity) : 1;
  const share = used < 0.5 ? 25n : used < 0.8 ? 10n : 5n;
  const cap = (headroom.left * share) / 100n;
  const demand = BigInt(Math.ceil(ratePerS * policy.horizonS));
  const minimum = request * BigInt(policy.minRequests);
  const want = demand > minimum ? demand : minimum;
  const size = want < cap ? want : cap;
  return size >= minimum ? size : undefined;
}

/**
 * Where requests reserve from in memory: the process's lease pool, or one lease taken for a whole batch run
 * at a provider's batch service (app/provider-batches.ts).
 */
export type LeaseSource = Pick<LeasePool, 'reserve' | 'settle' | 'release'> & { returnAll?(timeoutMs?: number): Promise<void>; retireKey?(hash: string): void };

/** A request's reservation from a lease. */
/** What a request that reserved `draw` and was charged `charged` claims from its lease: the charge, up to the draw. */
export function leaseSpend(draw: LeaseDraw, charged: Nanos): Nanos {
  return charged < draw.amount ? (charged < 0n ? 0n : charged) : draw.amount;
}

export interface LeaseDraw {
  readonly leaseId: string;
  readonly amount: Nanos;
}

interface HeldLease {
  grant: LeaseGrant;
  /** Not reserved by a request in flight, nor spent. */
  available: Nanos;
  /** Spent by requests whose records are stored (what the aggregator will move out of `held`). */
  spent: Nanos;
  inFlight: number;
  retired: boolean;
  /**
   * A record of it could not be stored (or so the writer believes: its first write may have landed with its
   * reply lost): what it spent is unknown here, so it is never given back by the pool, only swept after its
   * expiry, from what the aggregator applied, which is exact either way.
   */
  uncertain: boolean;
}

interface KeyLeases {
  active: HeldLease | undefined;
  retiring: Set<HeldLease>;
  taking: boolean;
  /** Reserved amounts per second, decayed (an exponentially weighted rate). */
  rate: number;
  rateAt: number;
  lastReserveAt: number;
}

export interface LeasePoolDeps {
  ledger: LeaseLedger;
  /** Who holds the pool's leases (stored on each): a restarted npm start takes back its predecessor's by it. */
  owner: string;
  /** Epoch ms. */
  now: () => number;
  log: Logger;
  policy?: Partial<LeasePolicy>;
}

const RATE_WINDOW_S = 10;

export class LeasePool {
  private readonly keys = new Map<string, KeyLeases>();
  private readonly draws = new WeakMap<LeaseDraw, HeldLease>();
  private readonly policy: LeasePolicy;
  /** Background work (takes and returns) not yet done: shutdown waits for it. */
  private readonly work = new Set<Promise<void>>();

  get owner(): string {
    return this.deps.owner;
  }

  constructor(private readonly deps: LeasePoolDeps) {
    this.policy = { ...DEFAULT_LEASE_POLICY, ...deps.policy };
    // Idle keys give their leases back; the timer never keeps a process alive (on Lambda it runs only
    // while an invocation does).
    setInterval(() => this.returnIdle(), Math.max(1000, this.policy.idleMs / 2)).unref();
  }

  /**
   * Reserves `amount` from the key's lease, in memory, or answers undefined (the request then holds
   * exactly). Either way the demand is noted, and a lease is taken in the background when one would help.
   */
  reserve(key: ApiKey, workspace: Workspace, amount: Nanos): LeaseDraw | undefined {
    const now = this.deps.now();
    const state = this.stateOf(key.hash, now);
    this.noteDemand(state, amount, now);
    const lease = state.active;
    let draw: LeaseDraw | undefined;
    if (lease) {
      const stale = lease.grant.settingsVersion !== key.settings_version || lease.grant.budgetVersion !== workspace.budget_version || key.disabled;
      if (stale || now >= lease.grant.useUntil) {
        this.retire(state, lease);
      } else if (lease.available >= amount) {
        lease.available -= amount;
        lease.inFlight += 1;
        draw = { leaseId: lease.grant.id, amount };
        this.draws.set(draw, lease);
      }
    }
    if (!key.disabled) this.maybeTake(state, key, workspace, amount, now);
    return draw;
  }

  /**
   * A request that reserved `draw` ends having spent `charged` (credits). Returns what its record claims
   * from the lease (the spend, up to what was reserved: anything beyond is charged without it), and
   * `stored`, to call once the record's page is stored or given up on: only a stored record's draw is
   * spent, since only it reaches the aggregator (`duplicate`: certainly not stored, nothing spent).
   */
  settle(draw: LeaseDraw, charged: Nanos): { spent: Nanos; stored: (ok: boolean, duplicate?: boolean) => void } {
    const lease = this.draws.get(draw);
    if (!lease) throw new Error(`lease draw of ${draw.leaseId} settled twice`);
    this.draws.delete(draw);
    const spent = leaseSpend(draw, charged);
    // The part not spent can serve other requests at once; the spent part waits for its page.
    lease.available += draw.amount - spent;
    return {
      spent,
      stored: (ok, duplicate = false) => {
        if (ok) {
          lease.spent += spent;
        } else if (duplicate) {
          // Certainly not stored (a batch item's second run): nothing was spent, the draw serves others.
          lease.available += spent;
        } else if (!lease.uncertain) {
          lease.uncertain = true;
          const state = this.keys.get(lease.grant.keyHash);
          if (state) this.retire(state, lease);
        }
        lease.inFlight -= 1;
        this.maybeReturn(lease);
      },
    };
  }

  /** A request that reserved `draw` ends without spending anything. */
  release(draw: LeaseDraw): void {
    const lease = this.draws.get(draw);
    if (!lease) return;
    this.draws.delete(draw);
    lease.available += draw.amount;
    lease.inFlight -= 1;
    this.maybeReturn(lease);
  }

  /**
   * Gives the key's lease back once its requests end: the key's requests now hold exactly (a guardrail's limit
   * came to count them), and what the lease holds would otherwise count against that limit until it went idle.
   */
  retireKey(hash: string): void {
    const state = this.keys.get(hash);
    if (state?.active) this.retire(state, state.active);
  }

  /** Gives back leases of keys idle for `idleMs` (a timer calls it; so does a request now and then). */
  returnIdle(): void {
    const now = this.deps.now();
    for (const state of this.keys.values()) {
      if (state.active && now - state.lastReserveAt >= this.policy.idleMs) this.retire(state, state.active);
    }
  }

  /**
   * Retires every lease and resolves once each is given back, or after `timeoutMs`: a lease whose requests
   * are still in flight then stays taken (its spend is not final), for the next start or the sweep to end.
   */
  async returnAll(timeoutMs = 30_000): Promise<void> {
    const deadline = this.deps.now() + timeoutMs;
    const pending = () => this.work.size > 0 || [...this.keys.values()].some((state) => state.retiring.size > 0 || state.taking);
    for (const state of this.keys.values()) if (state.active) this.retire(state, state.active);
    while (pending() && this.deps.now() < deadline) {
      if (this.work.size > 0) await Promise.race([Promise.allSettled([...this.work]), new Promise((resolve) => setTimeout(resolve, 50))]);
      else await new Promise((resolve) => setTimeout(resolve, 10));
      for (const state of this.keys.values()) if (state.active) this.retire(state, state.active);
    }
    const left = this.held().filter((lease) => lease.inFlight > 0);
    if (left.length > 0) this.deps.log.warn('leases still in use at shutdown are left to the next start or the sweep', { leases: left.map((lease) => lease.id) });
  }

  /** Leases held now (for tests and metrics): id, amount, available and spent. */
  held(): Array<{ id: string; keyHash: string; amount: Nanos; available: Nanos; spent: Nanos; inFlight: number; retired: boolean }> {
    const out = [];
    for (const state of this.keys.values()) {
      for (const lease of [state.active, ...state.retiring]) {
        if (lease) out.push({ id: lease.grant.id, keyHash: lease.grant.keyHash, amount: lease.grant.amount, available: lease.available, spent: lease.spent, inFlight: lease.inFlight, retired: lease.retired });
      }
    }
    return out;
  }

  private stateOf(hash: string, now: number): KeyLeases {
    let state = this.keys.get(hash);
    if (!state) {
      state = { active: undefined, retiring: new Set(), taking: false, rate: 0, rateAt: now, lastReserveAt: now };
      this.keys.set(hash, state);
    }
    return state;
  }

  private noteDemand(state: KeyLeases, amount: Nanos, now: number): void {
    const elapsedS = Math.max(0, (now - state.rateAt) / 1000);
    state.rate = state.rate * Math.exp(-elapsedS / RATE_WINDOW_S) + Number(amount) / RATE_WINDOW_S;
    state.rateAt = now;
    state.lastReserveAt = now;
  }

  private maybeTake(state: KeyLeases, key: ApiKey, workspace: Workspace, amount: Nanos, now: number): void {
    if (state.taking) return;
    const lease = state.active;
    const thin = lease !== undefined && (lease.available * 100n < lease.grant.amount * BigInt(Math.round(this.policy.refillBelow * 100)) || lease.available < amount);
    const ending = lease !== undefined && lease.grant.useUntil - now < this.policy.refillBeforeEndMs;
    if (lease && !thin && !ending) return;
    state.taking = true;
    this.track((async () => {
      try {
        const headroom = await this.deps.ledger.headroom(key, workspace);
        const size = leaseSize(headroom, state.rate, amount, this.policy);
        const grant = size === undefined ? undefined : await this.deps.ledger.takeLease(key, workspace, size, this.deps.now() + this.policy.useMs);
        if (!grant) {
          this.giveBackIfThin(state, amount);
          return;
        }
        const previous = state.active;
        state.active = { grant, available: grant.amount, spent: 0n, inFlight: 0, retired: false, uncertain: false };
        if (previous) this.retire(state, previous);
      } catch (err) {
        this.deps.log.warn('lease not taken; requests hold exactly meanwhile', { key_hash: key.hash, error: String(err) });
      } finally {
        state.taking = false;
      }
    })());
  }

  /**
   * No next lease (the headroom is too thin for one): an active lease that cannot cover the request is
   * given back now rather than when the key goes idle, so that what is left of it serves exact holds, of
   * this process and of the others, instead of being stranded in this process's memory.
   */
  private giveBackIfThin(state: KeyLeases, amount: Nanos): void {
    const lease = state.active;
    if (lease && lease.available < amount) this.retire(state, lease);
  }

  private retire(state: KeyLeases, lease: HeldLease): void {
    if (state.active === lease) state.active = undefined;
    lease.retired = true;
    state.retiring.add(lease);
    this.maybeReturn(lease);
  }

  /** Gives a retired lease back once no request in flight reserved from it (its spend is then final). */
  private maybeReturn(lease: HeldLease): void {
    if (!lease.retired || lease.inFlight > 0) return;
    const state = this.keys.get(lease.grant.keyHash);
    if (!state || !state.retiring.delete(lease)) return;
    if (lease.uncertain) {
      this.deps.log.warn('lease left to the sweep: a record of it may not be stored', { lease_id: lease.grant.id });
      return;
    }
    this.track(this.deps.ledger.returnLease(lease.grant, lease.spent).catch((err: unknown) => {
      this.deps.log.error('lease not given back; the sweep returns it after its expiry', { lease_id: lease.grant.id, error: String(err) });
    }));
  }

  private track(work: Promise<void>): void {
    this.work.add(work);
    void work.finally(() => this.work.delete(work));
  }
}
