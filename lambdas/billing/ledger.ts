// Reserve before the provider call; release after it when the request ends without a record (a request
// with one is settled by the meter aggregator when it applies the record's page: aggregator.ts). The
// store does each step in one transaction (LedgerRepository); this decides what a refused transaction means: a copy of the key or
// workspace that has changed (take the stored one and retry), a reset window that has not been started yet
// (roll it and retry), a conflict with a concurrent transaction (back off and retry), or a limit that
// cannot cover the request (refused with the domain error naming which one: errors.ts).
import type { ApiKey } from '../keys/index.js';
import { randomBytes } from 'node:crypto';
import type { ExtraTerms, HoldRef, HoldRequest, KeyTerms, LedgerRepository, MeteredItemCodecs, StoredLease, WorkspaceTerms } from './ledger-repository.js';
import { isEndUserMeter, type ExtraMeter, type MeterCharge, type SpendLimit, type SpendMeters } from './spend-meters.js';
import { meterFromItem } from './meter-item.js';
import { extraMeterId } from './meter-writes.js';
import type { Headroom, LeaseDraw, LeaseGrant } from './leases.js';
import { DomainError } from '../platform/errors.js';
import { token } from './meter-writes.js';
import { isPermanentStoreFailure } from '../platform/dynamo/write-failures.js';
import { RecordCache } from '../platform/record-cache.js';
import { nanosToDecimal, type Nanos } from '../platform/money.js';
import type { Logger } from '../platform/logger.js';
import type { Workspace, WorkspaceRepository } from '../organizations/index.js';
import { budgetWindow, meterAt, spent, type Meter } from './meter.js';
import { BUDGET_INTERVALS, currentPeriods, INTERVALS, isBehind, laterPeriods, windowEnd, type Periods } from './periods.js';
import { CreditsExhausted, EndUserLimitExceeded, GuardrailLimitExceeded, HoldExistsError, KeyDisabled, KeyLimitExceeded, KeyDeleted, ReservationContended, TenantGone, WorkspaceBudgetExceeded, type RefusalReason, type ReservationRefused } from './errors.js';

/** A hold outlives any invocation that could settle it: Lambda's 15-minute maximum, plus margin. */
export const HOLD_TTL_MS = 20 * 60_000;
/**
 * A returned lease is closed this long after its return: beyond the stream's 24-hour retention, every record
 * of it that will ever reach the aggregator has (a dead-lettered page's spend is then given back).
 */
export const LEASE_SETTLE_MS = 2 * 86_400_000;
const MAX_ATTEMPTS = 16;
/**
 * How long a reservation refused only for what is held waits for some of it to come back (requests ending,
 * leases given back, the aggregator applying records: under a second), polling every IN_FLIGHT_POLL_MS.
 */
const IN_FLIGHT_WAIT_MS = 1500;
const IN_FLIGHT_POLL_MS = 100;
/** A release runs after the reply, so it may keep trying much longer (about 40 s) before giving up. */
const RELEASE_ATTEMPTS = 160;

export interface LedgerDeps {
  repository: LedgerRepository;
  /** How the store's key and workspace items read back (a lease is sized from them as stored). */
  codecs: MeteredItemCodecs;
  /** Where a workspace (its budgets) is read from when the cache has no copy. */
  workspaces: Pick<WorkspaceRepository, 'getWorkspace'>;
  workspaceCache: RecordCache<Workspace>;
  /** The process whose holds these are (stored on each, so that a restart can release a dead run's). */
  owner?: string;
  /** Told about a fresher copy of a key seen while reserving, so later requests start from it. */
  keySeen?: (key: ApiKey) => void;
  clock: () => Date;
  random: () => number;
  sleep: (ms: number) => Promise<void>;
  log: Logger;
}

export interface Hold extends HoldRef {
  /** DynamoDB write capacity the reservation consumed (ReturnConsumedCapacity). */
  writeUnits: number;
  /** Attempts the reservation took (conflicts, stale copies, window rolls). */
  attempts: number;
  /** DynamoDB read capacity spent on the workspace's budgets (0 when cached). */
  readUnits: number;
  /** Reserved from a lease in memory instead (no hold item): given back to the lease, settled by the record. */
  draw?: LeaseDraw;
  /** Nothing held, and no hold item (a request that costs no credits, BYOK only or free, that no limit counts): nothing to give back. */
  unheld?: true;
  /** Extra meters the request's record charges (an end user's, a member's), and whether this hold held on each. */
  charges?: MeterCharge[];
}

/**
 * What a reservation's amount allows for in output tokens, so that a refusal can say how many the caller
 * can afford (computed only when a reservation is refused).
 */
export interface OutputTokens {
  /** The output tokens the amount was reserved for (max_tokens, or the endpoints' maximum). */
  requested(): number;
  /** The most output tokens `remaining` pays for together with the prompt. */
  affordable(remaining: Nanos): number;
}

export interface ReleaseResult {
  outcome: 'released' | 'already' | 'failed';
  writeUnits: number;
  attempts: number;
}

const usd = (nanos: Nanos) => `$${nanosToDecimal(nanos < 0n ? 0n : nanos)}`;

function keyTerms(key: ApiKey, guardrailLimits: readonly SpendLimit[] = []): KeyTerms {
  return {
    hash: key.hash,
    settingsVersion: key.settings_version,
    limit: key.limit === null ? null : { amount: key.limit, window: key.limit_reset ?? 'total', withByok: key.include_byok_in_limit },
    ...(guardrailLimits.length ? { guardrailLimits: guardrailLimits.map(({ amount, window, withByok }) => ({ amount, window, withByok })) } : {}),
  };
}

function workspaceTerms(workspace: Workspace): WorkspaceTerms {
  return {
    id: workspace.id,
    budgetVersion: workspace.budget_version,
    budgets: BUDGET_INTERVALS.flatMap((interval) => {
      const budget = workspace.budgets[interval];
      return budget ? [{ interval: budgetWindow(interval), limit: budget.limit }] : [];
    }),
    withByok: workspace.include_byok_in_budgets,
  };
}

/** How long a process trusts that an organization is not in debt (for requests that hold nothing). */
export const BALANCE_CACHE_TTL_MS = 2000;

export class Ledger {
  /** Whether each organization's balance was at least zero when last read. */
  private readonly inCredit = new RecordCache<{ inCredit: boolean }>(BALANCE_CACHE_TTL_MS);

  constructor(private readonly deps: LedgerDeps) {}

  /**
   * Whether the organization is not in debt (its balance, less what is held, is at least zero), as read in
   * the last BALANCE_CACHE_TTL_MS: what an exact hold of nothing checks of the organization, for requests
   * that hold nothing and skip the hold. An organization without a stored balance counts as not known.
   */
  async notInDebt(orgId: string): Promise<boolean> {
    const known = await this.inCredit.getOrLoad(orgId, async () => {
      const balance = await this.deps.repository.balanceOf(orgId);
      return balance === undefined ? undefined : { inCredit: balance >= 0n };
    });
    return known?.inCredit === true;
  }

  private async backoff(attempt: number): Promise<void> {
    const cap = Math.min(250, 4 * 2 ** attempt);
    await this.deps.sleep(Math.round(cap / 2 + this.deps.random() * cap / 2));
  }

  async workspaceOf(orgId: string, workspaceId: string, readUnits?: (units: number) => void): Promise<Workspace> {
    const workspace = await this.deps.workspaceCache.getOrLoad(`${orgId}/${workspaceId}`, () => this.deps.workspaces.getWorkspace(orgId, workspaceId, readUnits));
    if (!workspace) throw new TenantGone('workspace');
    return workspace;
  }

  /**
   * Starts reading the workspace when it is not cached (RecordCache.warm); what the read consumes is added to
   * `spent.readUnits` (the request's, for its cost). Allocates nothing when the workspace is cached.
   */
  warmWorkspace(orgId: string, workspaceId: string, spent?: { readUnits?: number }): void {
    const cache = this.deps.workspaceCache;
    const id = `${orgId}/${workspaceId}`;
    if (cache.holds(id)) return;
    cache.warm(id, () => this.deps.workspaces.getWorkspace(orgId, workspaceId, spent && ((units) => { spent.readUnits = (spent.readUnits ?? 0) + units; })));
  }

  /**
   * Holds `amount` against the organization's balance, the key's limit and the workspace's budgets, or
   * throws the ReservationRefused naming the tightest that cannot cover it.
   */
  async reserve(generationId: string, startingKey: ApiKey, amount: Nanos, tokens?: OutputTokens, spend?: SpendMeters): Promise<Hold> {
    let readUnits = 0;
    const workspace = await this.workspaceOf(startingKey.org_id, startingKey.workspace_id, (units) => { readUnits += units; });
    const held = await this.claim({ kind: 'hold', ...(this.deps.owner ? { owner: this.deps.owner } : {}) }, generationId, startingKey, workspace, amount, tokens, undefined, spend);
    return { ...held, readUnits, ...(held.extras?.length ? { charges: held.extras.map((meter) => ({ meter, held: true })) } : {}) };
  }

  /**
   * Takes a lease of `amount` for the key's requests (billing/leases.ts), checked exactly as a hold is;
   * undefined when a limit cannot cover it (the requests then hold exactly) or the key cannot be used.
   */
  async takeLease(key: ApiKey, workspace: Workspace, amount: Nanos, useUntil: number, owner: string): Promise<LeaseGrant | undefined> {
    const taken = await this.leaseOrRefusal(key, workspace, amount, useUntil, owner);
    return taken instanceof DomainError ? undefined : taken;
  }

  /**
   * takeLease, with why a lease was not taken: the refusal naming the limit that cannot cover it (a
   * ReservationRefused), or the key or tenant that cannot be used.
   */
  async leaseOrRefusal(key: ApiKey, workspace: Workspace, amount: Nanos, useUntil: number, owner: string): Promise<LeaseGrant | DomainError> {
    const id = `lease-${randomBytes(12).toString('base64url')}`;
    try {
      const held = await this.claim({ kind: 'lease', owner, useUntil: new Date(useUntil).toISOString() }, id, key, workspace, amount, undefined, useUntil);
      return {
        id, orgId: held.orgId, workspaceId: held.workspaceId, keyHash: held.keyHash, amount,
        settingsVersion: held.key.settings_version, budgetVersion: held.workspace.budget_version, useUntil,
      };
    } catch (err) {
      if (err instanceof DomainError) return err;
      throw err;
    }
  }

  /**
   * Whether the organization's credits, the key's limit and the workspace's budgets, as stored now, leave
   * `amount`: undefined when they do, otherwise the refusal a reservation of it would meet, naming the
   * tightest. One consistent read, nothing reserved (what a reservation made later meets may differ).
   */
  async refusalOf(key: ApiKey, workspace: Workspace, amount: Nanos): Promise<ReservationRefused | undefined> {
    const stored = await this.deps.repository.headroomItems(key.org_id, key.hash, workspace.id);
    const now = this.deps.clock();
    const shortfalls: Shortfall[] = [];
    if (stored.organization && stored.organization.balance < amount) shortfalls.push(creditsShortfall(stored.organization.balance, 0n));
    const storedKey = stored.key ? this.deps.codecs.keyFromItem(stored.key) : key;
    shortfalls.push(...keyShortfalls({ ...storedKey, meter: meterAt(storedKey.meter, now) }, [], amount, now).filter((shortfall) => shortfall.left < amount));
    const storedWorkspace = stored.workspace ? this.deps.codecs.workspaceFromItem(stored.workspace) : workspace;
    const budget = budgetShortfall({ ...storedWorkspace, meter: meterAt(storedWorkspace.meter, now) }, amount, now);
    if (budget) shortfalls.push(budget);
    if (shortfalls.length === 0) return undefined;
    return refusal(shortfalls.reduce((tightest, next) => (next.left < tightest.left ? next : tightest)), amount, undefined);
  }

  /** What the key's tightest limit (its own, a budget, the organization's balance) leaves, read now. */
  async headroom(key: ApiKey, workspace: Workspace): Promise<Headroom> {
    const stored = await this.deps.repository.headroomItems(key.org_id, key.hash, workspace.id);
    const now = this.deps.clock();
    const meters: Headroom[] = [];
    if (stored.organization) meters.push({ left: stored.organization.balance, capacity: stored.organization.credits });
    else meters.push({ left: 0n, capacity: 0n });
    const storedKey = stored.key ? this.deps.codecs.keyFromItem(stored.key) : key;
    if (storedKey.limit !== null) {
      const meter = meterAt(storedKey.meter, now);
      const window = storedKey.limit_reset ?? 'total';
      meters.push({ left: storedKey.limit - spent(meter, window, storedKey.include_byok_in_limit) - meter.held, capacity: storedKey.limit });
    }
    const storedWorkspace = stored.workspace ? this.deps.codecs.workspaceFromItem(stored.workspace) : workspace;
    const meter = meterAt(storedWorkspace.meter, now);
    for (const interval of BUDGET_INTERVALS) {
      const budget = storedWorkspace.budgets[interval];
      if (budget) meters.push({ left: budget.limit - spent(meter, budgetWindow(interval), storedWorkspace.include_byok_in_budgets) - meter.held, capacity: budget.limit });
    }
    return meters.reduce((tightest, next) => (next.left < tightest.left ? next : tightest));
  }

  /** Ends a lease its owner no longer reserves from, giving back what its requests did not spend. */
  async returnLease(grant: LeaseGrant, spent: Nanos): Promise<void> {
    const unspent = grant.amount - spent;
    const settleBy = new Date(this.deps.clock().getTime() + LEASE_SETTLE_MS).toISOString();
    await this.endLease(grant, unspent < 0n ? 0n : unspent, () => ({ kind: 'return', settleBy }));
  }

  /**
   * Gives back what leases still hold once their owner can no longer: expired active leases (every request
   * that reserved from one has ended: a lease expires a request's lifetime after its last use) or, with
   * `owner`, every lease of a process that died (npm start takes its predecessor's back at start-up); and
   * returned leases past their settle-by time, whose records that never reached the aggregator (a page
   * dead-lettered) would otherwise keep their spend held for good. What the aggregator has not moved out of
   * `held` is given back; records applied later are charged without releasing anything. Returns how many.
   */
  async sweepLeases(owner?: string): Promise<number> {
    const now = this.deps.clock();
    const leases = await this.deps.repository.leasesToSweep(owner === undefined ? { by: now.toISOString() } : { owner });
    const expiresAtS = Math.floor((now.getTime() + LEASE_SETTLE_MS) / 1000);
    let swept = 0;
    for (const listed of leases) {
      if (listed.state === 'swept') continue;
      const from = listed.state;
      const left = (lease: StoredLease) => {
        const held = lease.amount - lease.consumed - (from === 'returned' ? lease.returned : 0n);
        return held < 0n ? 0n : held;
      };
      let current = listed;
      const outcome = await this.endLease(current, left(current), () => ({ kind: 'sweep', from, consumed: current.consumed, expiresAtS }), async () => {
        // The aggregator applied more of its records since it was read: read it again.
        const again = await this.deps.repository.getLease(current.id);
        if (!again || again.state !== from) return undefined;
        current = again;
        return left(again);
      });
      if (outcome !== 'ended') continue;
      swept += 1;
      if (from === 'active' || left(current) > 0n) {
        this.deps.log.warn('swept a lease its owner did not give back in full', { lease_id: current.id, owner: current.owner, org_id: current.orgId, state: from, unspent: nanosToDecimal(left(current)) });
      }
    }
    return swept;
  }

  /**
   * One lease ended, with retries (conflicts, deleted meters). `again` is asked for the amount to give back
   * when the lease moved since it was read (a sweep's `consumed`); undefined: it ended some other way.
   */
  private async endLease(
    lease: Pick<StoredLease, 'id' | 'orgId' | 'workspaceId' | 'keyHash'>,
    unspent: Nanos,
    how: () => Parameters<LedgerRepository['endLease']>[2],
    again?: () => Promise<Nanos | undefined>,
  ): Promise<'ended' | 'already'> {
    const skip: { key?: boolean; workspace?: boolean } = {};
    // Fresh for each attempt: DynamoDB answers a reused token from its first use, even with other items.
    const salt = randomBytes(6).toString('hex');
    let amount = unspent;
    for (let attempt = 1; attempt <= RELEASE_ATTEMPTS; attempt += 1) {
      try {
        const outcome = await this.deps.repository.endLease(lease, amount, how(), token('l', `${lease.id}${salt}`, attempt), skip);
        if (outcome.kind === 'returned') return 'ended';
        if (outcome.kind === 'already') return 'already';
        if (outcome.kind === 'moved') {
          const next = await again?.();
          if (next === undefined) return 'already';
          amount = next;
          continue;
        }
        if (outcome.kind === 'conflict') {
          await this.backoff(attempt);
          continue;
        }
        skip.key ||= outcome.key;
        skip.workspace ||= outcome.workspace;
      } catch (err) {
        this.deps.log.warn('lease return attempt failed', { lease_id: lease.id, attempt, error: String(err) });
        // The table gone, a malformed request, no permission: the same answer whatever the wait.
        if (attempt === RELEASE_ATTEMPTS || isPermanentStoreFailure(err)) break;
        await this.backoff(attempt);
      }
    }
    this.deps.log.error('lease not given back; the sweep returns it after its expiry', { lease_id: lease.id, org_id: lease.orgId, unspent: nanosToDecimal(amount) });
    return 'already';
  }

  private async claim(
    kind: NonNullable<HoldRequest['claim']>, generationId: string, startingKey: ApiKey, startingWorkspace: Workspace, amount: Nanos,
    tokens?: OutputTokens, useUntil?: number, spend?: SpendMeters,
  ): Promise<Hold & { key: ApiKey; workspace: Workspace }> {
    let key = startingKey;
    let workspace = startingWorkspace;
    const guardrailLimits = spend?.key ?? [];
    // Extra meters by id, as they now stand (a changed end user's limits replace its entry; a deleted one leaves).
    const extras = new Map<string, ExtraMeter>((spend?.extras ?? []).map((extra) => [extraMeterId(extra.ref), extra]));
    // Windows seen stored ahead of this clock, per extra meter.
    const extraAhead = new Map<string, Periods>();
    const readUnits = 0;
    const waitUntil = this.deps.clock().getTime() + IN_FLIGHT_WAIT_MS;
    // This reservation's own, the same over its attempts: a batch item's generation id repeats in every run
    // of the item, and DynamoDB refuses a transaction token reused with other parameters.
    const nonce = tokenNonce();
    // Every send its own transaction token: a wait for held credits to come back sends the same attempt
    // again, with other times in it, and DynamoDB answers a token reused with other parameters with an
    // error (IdempotentParameterMismatch), or with its first answer.
    let sends = 0;
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
      const now = this.deps.clock();
      const current = currentPeriods(now);
      const keyPeriods = laterPeriods(current, key.meter.periods);
      const workspacePeriods = laterPeriods(current, workspace.meter.periods);
      const extraTerms: ExtraTerms[] = [...extras].map(([id, extra]) => ({
        ref: extra.ref,
        periods: laterPeriods(current, extraAhead.get(id) ?? {}),
        limits: extra.limits.map(({ amount: limit, window, withByok }) => ({ amount: limit, window, withByok })),
        ...(isEndUserMeter(extra) ? { version: extra.version } : {}),
      }));
      const ref: HoldRef = {
        generationId, orgId: key.org_id, workspaceId: key.workspace_id, keyHash: key.hash, amount,
        ...(extraTerms.length ? { extras: extraTerms.map((extra) => extra.ref) } : {}),
      };
      const { extras: _refs, ...base } = ref;
      const outcome = await this.deps.repository.reserve({
        ...base,
        key: keyTerms(key, guardrailLimits),
        workspace: workspaceTerms(workspace),
        ...(extraTerms.length ? { extras: extraTerms } : {}),
        keyPeriods,
        workspacePeriods,
        createdAt: now.toISOString(),
        // A lease outlives any request that reserved from it before its end; a hold, its own request.
        expiresAt: new Date((useUntil ?? now.getTime()) + HOLD_TTL_MS).toISOString(),
        claim: kind,
        nonce,
      }, ++sends);
      if (outcome.kind === 'held') return { ...ref, writeUnits: outcome.writeUnits, attempts: attempt, readUnits, key, workspace };
      if (outcome.kind === 'conflict') {
        await this.backoff(attempt);
        continue;
      }
      if (outcome.kind === 'duplicate') throw new HoldExistsError(generationId, kind.kind);

      // Fix whatever was stale and try again; only a limit that still cannot cover the request refuses it.
      let retry = false;
      // Every meter that refused, with its headroom: the tightest one is named (the others afford more).
      const shortfalls: Shortfall[] = [];
      const { organization, key: keyRefusal, workspace: workspaceRefusal, extras: extraRefusals } = outcome;
      if (organization) {
        if (organization.kind === 'organization-gone') throw new TenantGone('organization');
        if (organization.kind === 'balance-missing') {
          await this.deps.repository.addBalance(key.org_id);
          retry = true;
        } else {
          shortfalls.push(creditsShortfall(organization.balance, organization.held));
        }
      }
      if (keyRefusal) {
        if (keyRefusal.kind === 'key-gone') throw new KeyDeleted();
        const stored = keyRefusal.key;
        const periods = stored.meter.periods;
        if (keyRefusal.kind === 'stale-key') {
          if (stored.disabled) throw new KeyDisabled();
          key = stored;
          this.deps.keySeen?.(stored);
          retry = true;
        } else if (isBehind(periods, current)) {
          await this.deps.repository.roll({ of: 'key', hash: key.hash }, current, periods);
          retry = true;
        } else if (INTERVALS.some((interval) => periods[interval] !== keyPeriods[interval])) {
          key = stored;
          retry = true;
        } else {
          shortfalls.push(...keyShortfalls(stored, guardrailLimits, amount, now));
        }
      }
      if (workspaceRefusal) {
        if (workspaceRefusal.kind === 'workspace-gone') throw new TenantGone('workspace');
        const stored = workspaceRefusal.workspace;
        const periods = stored.meter.periods;
        if (workspaceRefusal.kind === 'stale-workspace') {
          workspace = stored;
          this.deps.workspaceCache.set(`${stored.org_id}/${stored.id}`, stored);
          retry = true;
        } else if (isBehind(periods, current)) {
          await this.deps.repository.roll({ of: 'workspace', orgId: key.org_id, workspaceId: key.workspace_id }, current, periods);
          retry = true;
        } else if (INTERVALS.some((interval) => periods[interval] !== workspacePeriods[interval])) {
          workspace = stored;
          retry = true;
        } else {
          // The store refused it: a budget that the copy read here affords is still named, without its figures.
          shortfalls.push(budgetShortfall(stored, amount, now) ?? { reason: 'workspace_budget', left: 0n, held: 0n, state: `Workspace ${stored.slug}'s budget cannot cover it`, remedy: "raise the workspace's budget", metadata: { reason: 'workspace_budget', workspace_id: stored.id } });
        }
      }
      for (const [id, extraRefusal] of extraRefusals ?? []) {
        const extra = extras.get(id)!;
        if (extraRefusal.kind === 'meter-gone') {
          // A member's meter is made on its first limited request; an end user deleted (or registered again,
          // as another meter) meanwhile is read again: it limits nothing now, or its new registration does.
          if (!isEndUserMeter(extra)) await this.deps.repository.createMeter(extra.ref, current);
          else {
            extras.delete(id);
            const fresh = await extra.reload();
            if (fresh) extras.set(extraMeterId(fresh.ref), fresh);
          }
          retry = true;
          continue;
        }
        const item = extraRefusal.item;
        if (isEndUserMeter(extra) && item.settings_version !== extra.version) {
          const fresh = extra.refresh(item);
          extras.delete(id);
          if (fresh) extras.set(extraMeterId(fresh.ref), fresh);
          retry = true;
          continue;
        }
        const meter = meterFromItem(item);
        if (isBehind(meter.periods, current)) {
          await this.deps.repository.roll(extra.ref, current, meter.periods);
          retry = true;
        } else if (INTERVALS.some((interval) => meter.periods[interval] !== laterPeriods(current, extraAhead.get(id) ?? {})[interval])) {
          extraAhead.set(id, meter.periods);
          retry = true;
        } else {
          shortfalls.push(...extra.limits.flatMap((limit) => limitShortfall(limit, meter, amount, now) ?? []));
        }
      }
      if (retry) continue;
      // Refused only because of what is held (requests in flight, leases, records the aggregator has not
      // applied yet): a hold may wait a moment for some of it to come back rather than answer 402.
      if (kind.kind === 'hold' && shortfalls.length && shortfalls.every((shortfall) => shortfall.left + shortfall.held >= amount) && this.deps.clock().getTime() < waitUntil) {
        await this.deps.sleep(IN_FLIGHT_POLL_MS);
        attempt -= 1;
        continue;
      }
      if (shortfalls.length) throw refusal(shortfalls.reduce((tightest, next) => (next.left < tightest.left ? next : tightest)), amount, tokens);
      throw new Error('reservation refused without a reason');
    }
    throw new ReservationContended();
  }

  /**
   * Gives back everything a hold took (its request failed before it cost anything). Never throws: a release
   * that cannot be written is logged, and its hold is released by the sweep after its expiry.
   */
  async release(hold: HoldRef): Promise<ReleaseResult> {
    let skipKey = false;
    let skipWorkspace = false;
    const skipExtras = new Set<string>();
    const nonce = tokenNonce();
    let attempt = 1;
    for (; attempt <= RELEASE_ATTEMPTS; attempt += 1) {
      try {
        const outcome = await this.deps.repository.release({ hold, skipKey, skipWorkspace, skipExtras, nonce }, attempt);
        if (outcome.kind === 'released') return { outcome: 'released', writeUnits: outcome.writeUnits, attempts: attempt };
        if (outcome.kind === 'already') return { outcome: 'already', writeUnits: 0, attempts: attempt };
        if (outcome.kind === 'conflict') {
          await this.backoff(attempt);
          continue;
        }
        // Deleted while the request ran: the organization still gets its credits back.
        skipKey ||= outcome.key;
        skipWorkspace ||= outcome.workspace;
        for (const id of outcome.extras ?? []) skipExtras.add(id);
      } catch (err) {
        this.deps.log.warn('release attempt failed', { generation_id: hold.generationId, attempt, error: String(err) });
        // The table gone, a malformed request, no permission: the same answer whatever the wait.
        if (attempt === RELEASE_ATTEMPTS || isPermanentStoreFailure(err)) break;
        await this.backoff(attempt);
      }
    }
    this.deps.log.error('release failed; the sweep releases the hold after its expiry', {
      generation_id: hold.generationId, org_id: hold.orgId, key_hash: hold.keyHash, workspace_id: hold.workspaceId, held: nanosToDecimal(hold.amount),
    });
    return { outcome: 'failed', writeUnits: 0, attempts: Math.min(attempt, RELEASE_ATTEMPTS) };
  }

  /** True while a generation holds credits: in flight, or replied and not yet settled. */
  async isPending(generationId: string): Promise<boolean> {
    return (await this.deps.repository.getHold(generationId)) !== undefined;
  }

  /**
   * Releases holds whose invocation ended without settling them (a crash, a timeout) once they expire; with
   * `owner`, every hold of a process that died (npm start's predecessor). A record of one applied later is
   * charged without releasing anything twice.
   */
  async releaseExpired(owner?: string): Promise<number> {
    const expired = await this.deps.repository.expiredHolds(owner === undefined ? { by: this.deps.clock().toISOString() } : { owner });
    let released = 0;
    for (const hold of expired) {
      const result = await this.release(hold);
      if (result.outcome === 'released') {
        released += 1;
        this.deps.log.warn('released an expired hold', { generation_id: hold.generationId, org_id: hold.orgId, amount: nanosToDecimal(hold.amount) });
      }
    }
    return released;
  }
}

/** A limit that cannot cover a reservation: what is left of it, how to say it, and how to lift it. */
interface Shortfall {
  reason: RefusalReason;
  left: Nanos;
  /** Held on the limit's meter by requests in flight, leases and records not yet applied. */
  held: Nanos;
  /** One sentence naming the limit and what is left of it. */
  state: string;
  remedy: string;
  metadata: Record<string, unknown>;
}

const REFUSAL_OF: Record<RefusalReason, new (...args: ConstructorParameters<typeof KeyLimitExceeded>) => ReservationRefused> = {
  insufficient_credits: CreditsExhausted,
  key_limit: KeyLimitExceeded,
  workspace_budget: WorkspaceBudgetExceeded,
  end_user_limit: EndUserLimitExceeded,
  guardrail_limit: GuardrailLimitExceeded,
};

/**
 * The refusal, as OpenRouter words it: how many output tokens the request asked for and how many the limit
 * affords, which limit refused it, and what to do (lower max_tokens, or raise the limit / add credits).
 */
function refusal(shortfall: Shortfall, amount: Nanos, tokens: OutputTokens | undefined): ReservationRefused {
  const remaining = shortfall.left < 0n ? 0n : shortfall.left;
  const requested = tokens?.requested();
  const affordable = tokens ? Math.max(0, Math.min(tokens.affordable(remaining), requested!)) : undefined;
  let message: string;
  if (tokens && affordable! > 0 && affordable! < requested!) {
    message = `This request requires more credits, or fewer max_tokens. You requested up to ${requested} tokens, but can only afford ${affordable}. ${shortfall.state}. Lower max_tokens, or ${shortfall.remedy}.`;
  } else if (tokens) {
    // Fewer output tokens would not help: the prompt (with one output token) already costs more than is left.
    message = `This request requires more credits: it can cost up to ${usd(amount)}, and the ${usd(remaining)} left does not cover its prompt and one output token. ${shortfall.state}. Shorten the prompt, or ${shortfall.remedy}.`;
  } else {
    message = `This request requires more credits: it can cost up to ${usd(amount)}. ${shortfall.state}. To continue, ${shortfall.remedy}.`;
  }
  return new REFUSAL_OF[shortfall.reason](message, { reason: shortfall.reason, remaining, required: amount, state: shortfall.state, remedy: shortfall.remedy }, {
    metadata: {
      ...shortfall.metadata,
      required: nanosToDecimal(amount),
      remaining: nanosToDecimal(remaining),
      ...(tokens ? { requested_tokens: requested, affordable_tokens: affordable } : {}),
    },
  });
}

function creditsShortfall(balance: Nanos, held: Nanos): Shortfall {
  return {
    reason: 'insufficient_credits',
    left: balance,
    held,
    state: `The account has ${usd(balance)} of credits available`,
    remedy: 'add credits',
    metadata: { reason: 'insufficient_credits', available: nanosToDecimal(balance < 0n ? 0n : balance) },
  };
}

/** The key's limit and its guardrails' limits (on the key's meter) that cannot cover `amount`. */
function keyShortfalls(key: ApiKey, guardrailLimits: readonly SpendLimit[], amount: Nanos, now: Date): Shortfall[] {
  const found = guardrailLimits.flatMap((limit) => limitShortfall(limit, key.meter, amount, now) ?? []);
  if (key.limit !== null) {
    const own = shortfallOf({
      window: key.limit_reset ?? 'total', amount: key.limit, withByok: key.include_byok_in_limit, reason: 'key_limit',
      owner: "The key's", totalName: 'total', remedy: "raise the key's limit", metadata: {},
    }, key.meter, now);
    if (own.left < amount || found.length === 0) found.push(own);
  }
  return found;
}

/** A limit (an end user's, a guardrail's) on `meter` that cannot cover `amount`; undefined when it can. */
function limitShortfall(limit: SpendLimit, meter: Meter, amount: Nanos, now: Date): Shortfall | undefined {
  const shortfall = shortfallOf(limit, meter, now);
  return shortfall.left >= amount ? undefined : shortfall;
}

/** What is left of a limit on `meter`, as a refusal would state it. */
function shortfallOf(limit: SpendLimit, meter: Meter, now: Date): Shortfall {
  const left = limit.amount - spent(meter, limit.window, limit.withByok) - meter.held;
  const resets = limit.window === 'total' ? '' : `; it resets at ${windowEnd(limit.window, now)}`;
  const held = meter.held > 0n ? ` (${usd(meter.held)} is held by requests in flight)` : '';
  return {
    reason: limit.reason,
    left,
    held: meter.held,
    state: `${limit.owner} ${limit.window === 'total' ? limit.totalName ?? 'lifetime' : limit.window} limit of ${usd(limit.amount)} has ${usd(left)} left${held}${resets}`,
    remedy: limit.remedy,
    metadata: { reason: limit.reason, ...limit.metadata, limit: nanosToDecimal(limit.amount), limit_reset: limit.window === 'total' ? null : limit.window },
  };
}

/** The workspace's tightest budget that cannot cover `amount`; undefined when each of them can. */
function budgetShortfall(workspace: Workspace, amount: Nanos, now: Date): Shortfall | undefined {
  const meter = workspace.meter;
  let tightest: Shortfall | undefined;
  for (const interval of BUDGET_INTERVALS) {
    const budget = workspace.budgets[interval];
    if (!budget) continue;
    const left = budget.limit - spent(meter, budgetWindow(interval), workspace.include_byok_in_budgets) - meter.held;
    if (left >= amount || (tightest && tightest.left <= left)) continue;
    const resets = interval === 'lifetime' ? '' : `; it resets at ${windowEnd(interval, now)}`;
    tightest = {
      reason: 'workspace_budget',
      left,
      held: meter.held,
      state: `Workspace ${workspace.slug}'s ${interval} budget of ${usd(budget.limit)} has ${usd(left)} left${resets}`,
      remedy: "raise the workspace's budget",
      metadata: { reason: 'workspace_budget', workspace_id: workspace.id, interval, limit: nanosToDecimal(budget.limit) },
    };
  }
  return tightest;
}

/**
 * Two random characters for a transaction token (meter-writes.ts token), one per reservation or release: a
 * generation id (29 characters) with them fits the token's 36 with the attempt (up to 99) before it.
 */
function tokenNonce(): string {
  return randomBytes(2).toString('base64url').slice(0, 2);
}
