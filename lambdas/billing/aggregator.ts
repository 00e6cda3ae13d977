// The meter aggregator: applies pages of generation records (pages.ts) to the meters, exactly once, in as
// few transactions as the items allow. Deployed behind the table's stream (handlers/aggregator.ts); under
// `npm start` and in the tests the local stream feeder calls the same handler.
//
// Each group of pages is one transaction (aggregator-repository.ts). What a refusal means is decided here:
// pages whose seqs are in their markers were applied already (dropped, the rest retried); a hold that is gone
// or a lease that was swept gave back what it held already (its records are applied late); a meter counting older windows is rolled, one
// counting newer windows (another clock ahead) is followed; a deleted key or workspace is skipped (the
// organization is still charged); a conflict with another transaction backs off and retries.
import type { Logger } from '../platform/logger.js';
import type { AggregatorRepository } from './aggregator-repository.js';
import { effectsOf, groupPages, type ApplyState, type Effects } from './aggregation.js';
import type { MeterRef } from './meter-writes.js';
import { MAX_TRANSACTION_ITEMS } from './page-items.js';
import type { Page } from './pages.js';
import { currentPeriods, isBehind, laterPeriods, type Periods } from './periods.js';

const MAX_ATTEMPTS = 24;

export interface AggregatorDeps {
  repository: Pick<AggregatorRepository, 'apply'>;
  /** Starts new windows on a meter counting older ones (the ledger's roll). */
  roll: (meter: MeterRef, periods: Periods, stored: Partial<Periods>) => Promise<void>;
  clock: () => Date;
  random: () => number;
  sleep: (ms: number) => Promise<void>;
  log: Logger;
}

export interface AggregateResult {
  /** Pages applied now (not counting ones a marker showed were applied before). */
  applied: number;
  /** Of those, records applied late (their hold was gone). */
  late: number;
  transactions: number;
  writeUnits: number;
  /** Per page applied: ms from its write to its application (the meters' lag behind the replies). */
  lagsMs: number[];
}

export class MeterAggregator {
  constructor(private readonly deps: AggregatorDeps) {}

  /**
   * Applies `pages` (in stream order), group by group. Throws when a group cannot be applied (after its
   * retries): the pages before it are applied, and the caller reports the failed group's first page.
   */
  async apply(pages: readonly Page[], onGroupApplied?: (group: readonly Page[]) => void): Promise<AggregateResult> {
    const result: AggregateResult = { applied: 0, late: 0, transactions: 0, writeUnits: 0, lagsMs: [] };
    for (const group of groupPages(pages, MAX_TRANSACTION_ITEMS)) {
      await this.applyGroup(group, result);
      onGroupApplied?.(group);
    }
    return result;
  }

  private async applyGroup(group: readonly Page[], result: AggregateResult): Promise<void> {
    let pages = [...group];
    const late = new Set<string>();
    const sweptLeases = new Set<string>();
    const goneKeys = new Set<string>();
    const goneWorkspaces = new Set<string>();
    const goneExtras = new Set<string>();
    // Windows seen stored ahead of this clock, per meter.
    const keyAhead = new Map<string, Partial<Periods>>();
    const workspaceAhead = new Map<string, Partial<Periods>>();
    const extraAhead = new Map<string, Partial<Periods>>();
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
      const now = this.deps.clock();
      const current = currentPeriods(now);
      const state: ApplyState = { late, sweptLeases, goneKeys, goneWorkspaces, goneExtras };
      const effects: Effects = effectsOf(pages, state);
      const keyPeriods = new Map([...effects.keys.keys()].map((hash) => [hash, laterPeriods(current, keyAhead.get(hash) ?? {})]));
      const workspacePeriods = new Map([...effects.workspaces.keys()].map((id) => [id, laterPeriods(current, workspaceAhead.get(id) ?? {})]));
      const extraPeriods = new Map([...effects.extras.keys()].map((id) => [id, laterPeriods(current, extraAhead.get(id) ?? {})]));
      const outcome = await this.deps.repository.apply({ effects, keyPeriods, workspacePeriods, extraPeriods, nowS: Math.floor(now.getTime() / 1000) }, attempt);
      if (outcome.kind === 'applied') {
        const appliedAt = this.deps.clock().getTime();
        for (const page of pages) if (page.writtenAt !== undefined) result.lagsMs.push(appliedAt - page.writtenAt);
        result.applied += pages.length;
        result.late += late.size;
        result.transactions += 1;
        result.writeUnits += outcome.writeUnits;
        return;
      }
      if (outcome.kind === 'conflict') {
        await this.backoff(attempt);
        continue;
      }
      if (outcome.kind === 'already') {
        pages = pages.filter((page) => !outcome.applied.get(page.block)?.has(page.seq));
        if (pages.length === 0) return;
        continue;
      }
      for (const id of outcome.leasesSwept) {
        sweptLeases.add(id);
        this.deps.log.warn('lease swept before its records were applied; charging them without it', { lease_id: id });
      }
      for (const id of outcome.holdsGone) {
        late.add(id);
        this.deps.log.warn('hold expired before its record was applied; charging without it', { generation_id: id });
      }
      for (const [hash, stored] of outcome.keys) {
        if (stored === 'gone') goneKeys.add(hash);
        else if (isBehind(stored, current)) await this.deps.roll({ of: 'key', hash }, current, stored);
        else keyAhead.set(hash, stored);
      }
      for (const [id, stored] of outcome.workspaces) {
        const move = effects.workspaces.get(id)!;
        if (stored === 'gone') goneWorkspaces.add(id);
        else if (isBehind(stored, current)) await this.deps.roll({ of: 'workspace', orgId: move.orgId, workspaceId: move.workspaceId }, current, stored);
        else workspaceAhead.set(id, stored);
      }
      for (const [id, stored] of outcome.extras ?? []) {
        const move = effects.extras.get(id)!;
        if (stored === 'gone') goneExtras.add(id);
        else if (isBehind(stored, current)) await this.deps.roll(move.ref, current, stored);
        else extraAhead.set(id, stored);
      }
    }
    throw new Error(`pages not applied after ${MAX_ATTEMPTS} attempts: ${group.map((page) => `${page.block}/${page.seq}`).join(', ')}`);
  }

  private async backoff(attempt: number): Promise<void> {
    const cap = Math.min(250, 4 * 2 ** attempt);
    await this.deps.sleep(Math.round(cap / 2 + this.deps.random() * cap / 2));
  }
}
