// The aggregation rules: what a set of pages does to the meters, summed per item, so that a stream batch
// of many records moves each organization, key, workspace and rollup row once.
//
// Every record moves money out of what was held for it into usage:
//   organization  held −release · balance +(release − credits) · total_usage +credits
//   key, workspace meters  held −release · usage +credits · BYOK usage +byok (every window, both exposures)
//   extra meters  the same, for an end user's or member's meter the record names (spend-meters.ts); release
//                 only where its exact hold held on that meter too
//   rollup row    its counters (rollups.ts), and the record's infrastructure cost
//   hold          deleted (an exact hold: release = what it held)
//   lease         consumed +release (a lease's draw: release = what the request spent of its reservation)
// A record whose hold is already gone, or whose lease was swept (both gave back what they held), is
// applied late: release 0, so it is charged without being given back twice.
import type { Nanos } from '../platform/money.js';
import { nanosToStore } from '../platform/money.js';
import { rollupDelta, type RollupDelta } from './rollups.js';
import { entryItems, markerItem } from './page-items.js';
import type { Page } from './pages.js';
import { extraMeterId, type ExtraMeterRef } from './meter-writes.js';

export interface MeterMove {
  /** Leaves `held`: what was held for the records. */
  release: Nanos;
  /** Charged to credits, counted as usage. */
  credits: Nanos;
  /** BYOK spend, counted as BYOK usage. */
  byok: Nanos;
}

export interface PageRef {
  block: string;
  seq: number;
}

/** What a group of pages does, summed per item. */
export interface Effects {
  pages: PageRef[];
  organizations: Map<string, MeterMove>;
  keys: Map<string, MeterMove>;
  /** By `<org>/<workspace>`. */
  workspaces: Map<string, MeterMove & { orgId: string; workspaceId: string }>;
  /** By `<pk>|<sk>`. */
  rollups: Map<string, RollupDelta>;
  /** Extra meters (end users', members'), by extraMeterId. */
  extras: Map<string, MeterMove & { ref: ExtraMeterRef }>;
  /** Generation ids whose exact holds the records end. */
  holds: string[];
  /** What the records spent of each lease. */
  leases: Map<string, bigint>;
}

export interface ApplyState {
  /** Records whose hold is gone already: applied late (nothing released). */
  late: ReadonlySet<string>;
  /** Leases swept already: their records are applied late. */
  sweptLeases: ReadonlySet<string>;
  /** Keys and workspaces deleted while their requests ran: the organization is charged, their meters skipped. */
  goneKeys: ReadonlySet<string>;
  goneWorkspaces: ReadonlySet<string>;
  /** Extra meters deleted (an end user removed while its requests ran): skipped. */
  goneExtras?: ReadonlySet<string>;
}

const add = (into: Map<string, MeterMove>, id: string, move: MeterMove) => {
  const sum = into.get(id);
  if (sum) {
    sum.release += move.release;
    sum.credits += move.credits;
    sum.byok += move.byok;
  } else {
    into.set(id, { ...move });
  }
};

function addCounter(a: number | bigint, b: number | bigint): number | bigint {
  if (typeof a === 'number' && typeof b === 'number') {
    const sum = a + b;
    if (Number.isSafeInteger(sum)) return sum;
  }
  return nanosToStore(BigInt(a) + BigInt(b));
}

function mergeRollup(into: RollupDelta, delta: RollupDelta): void {
  for (const [name, value] of Object.entries(delta.counters)) {
    into.counters[name] = addCounter(into.counters[name] ?? 0, value);
  }
}

export function effectsOf(pages: readonly Page[], state: ApplyState): Effects {
  const effects: Effects = { pages: [], organizations: new Map(), keys: new Map(), workspaces: new Map(), extras: new Map(), rollups: new Map(), holds: [], leases: new Map() };
  for (const page of pages) {
    effects.pages.push({ block: page.block, seq: page.seq });
    for (const { record, claim } of page.entries) {
      const charge = record.is_byok ? { credits: 0n, byok: record.cost.total } : { credits: record.cost.total, byok: 0n };
      const late = claim.kind === 'hold' ? state.late.has(record.id) : claim.kind === 'lease' && state.sweptLeases.has(claim.leaseId);
      const move: MeterMove = { release: late ? 0n : claim.amount, ...charge };
      if (!late && claim.kind === 'hold') effects.holds.push(record.id);
      if (!late && claim.kind === 'lease') effects.leases.set(claim.leaseId, (effects.leases.get(claim.leaseId) ?? 0n) + claim.amount);
      add(effects.organizations, record.org_id, move);
      if (!state.goneKeys.has(record.key_hash)) add(effects.keys, record.key_hash, move);
      const workspace = `${record.org_id}/${record.workspace_id}`;
      if (!state.goneWorkspaces.has(workspace)) {
        add(effects.workspaces as Map<string, MeterMove>, workspace, move);
        const sum = effects.workspaces.get(workspace)!;
        sum.orgId = record.org_id;
        sum.workspaceId = record.workspace_id;
      }
      for (const charge of record.spend_meters ?? []) {
        const id = extraMeterId(charge.meter);
        if (state.goneExtras?.has(id)) continue;
        add(effects.extras as Map<string, MeterMove>, id, { ...move, release: charge.held && claim.kind === 'hold' ? move.release : 0n });
        effects.extras.get(id)!.ref = charge.meter;
      }
      const rollup = rollupDelta(record);
      const rollupId = `${rollup.key.pk}|${rollup.key.sk}`;
      const existing = effects.rollups.get(rollupId);
      if (existing) mergeRollup(existing, rollup);
      else effects.rollups.set(rollupId, { ...rollup, counters: { ...rollup.counters } });
    }
  }
  return effects;
}

/** Items a group's transaction writes: one marker per block, and the items its records touch. */
export function itemCount(effects: Effects): number {
  const blocks = new Set(effects.pages.map((page) => page.block));
  return blocks.size + effects.organizations.size + effects.keys.size + effects.workspaces.size + effects.extras.size + effects.rollups.size + effects.holds.length + effects.leases.size;
}

/**
 * Splits pages, in order, into groups whose transaction stays within `maxItems` items (DynamoDB allows 100
 * in one TransactWriteItems). A page is never split: it is applied whole, with its marker, or not at all.
 */
export function groupPages(pages: readonly Page[], maxItems: number): Page[][] {
  const groups: Page[][] = [];
  let current: Page[] = [];
  let items = new Set<string>();
  for (const page of pages) {
    const own = itemsOf(page);
    const joined = new Set([...items, ...own]);
    if (current.length > 0 && joined.size > maxItems) {
      groups.push(current);
      current = [];
      items = new Set(own);
    } else {
      items = joined;
    }
    current.push(page);
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

/** The items applying a page writes (as itemCount counts them), named so that pages sharing one count it once. */
function itemsOf(page: Page): string[] {
  return [markerItem(page.block), ...page.entries.flatMap(entryItems)];
}
