// The money path in DynamoDB: holds placed before a request reaches a provider, and released when it ends
// without a record, each in one TransactWriteItems over the organization, the key, the workspace and the
// hold item. A request that ends with a record is settled by the meter aggregator (aggregator-repository.ts).
//
//   reserve   Put HOLD#<generation> (new) · org: balance ≥ amount · key: limit window has room (and its
//             guardrails' limits) · workspace: every budget has room · each extra meter (an end user's, a
//             member's: spend-meters.ts): its limits have room — all or nothing
//   release   Delete HOLD#<generation> (must exist) · org/key/workspace/extra meters: held −amount
//
// The hold item is the idempotency key: a release whose hold is gone has already happened (or the hold was
// swept, or its record applied), so retries and duplicate deliveries never give back twice.
// Methods return what happened as typed outcomes, with the refusing items decoded into domain objects (the
// key, the workspace, a meter's windows); choosing what to do about it (reload, roll a window, retry,
// refuse) is the Ledger's job.
import { BatchGetCommand, GetCommand, PutCommand, TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { nanosFromStore, nanosToStore, type Nanos } from '../platform/money.js';
import { INTERVALS, type Periods } from './periods.js';
import { zeroUsage, type Window } from './meter.js';
import { meterAttr, meterToItem } from './meter-item.js';
import { extraMeterId, meterAdds, meterKey, periodsCondition, token, writeUnits, type ExtraMeterRef, type MeterRef } from './meter-writes.js';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { queryItems } from '../platform/dynamo/query.js';
import { UpdateBuilder } from '../platform/dynamo/update-builder.js';
import { cancellationOf, unlessConditionFailsOrConflicts, type Cancellation } from '../platform/dynamo/write-failures.js';
import type { ApiKey } from '../keys/index.js';
import type { Workspace } from '../organizations/index.js';

export const HOLD_SHARDS = 16;

/** What a hold needs to know about the key and workspace it is checked against (from a cached copy). */
export interface KeyTerms {
  hash: string;
  settingsVersion: number;
  /** Limit and the window it applies to (total = lifetime), or null for no limit. */
  limit: LimitTerms | null;
  /** Its guardrails' spend limits, on the same meter. */
  guardrailLimits?: LimitTerms[];
}

export interface LimitTerms {
  amount: Nanos;
  window: Window;
  withByok: boolean;
}

/** An extra meter a hold is checked against and holds on (spend-meters.ts). */
export interface ExtraTerms {
  ref: ExtraMeterRef;
  /** The windows it is expected to count. */
  periods: Periods;
  limits: LimitTerms[];
  /** Its `settings_version` must be this (undefined: not checked). */
  version?: number;
}

export interface WorkspaceTerms {
  id: string;
  budgetVersion: number;
  budgets: Array<{ interval: Window; limit: Nanos }>;
  withByok: boolean;
}

export interface HoldRef {
  generationId: string;
  orgId: string;
  workspaceId: string;
  keyHash: string;
  amount: Nanos;
  /** Extra meters the hold holds on too (an end user's, a member's). */
  extras?: ExtraMeterRef[];
}

export interface HoldRequest extends Omit<HoldRef, 'extras'> {
  /**
   * What the claim is: an exact hold (HOLD#<generation id>) or a lease (LEASE#<lease id>, `generationId`
   * being the lease's id), which requests of its owner then reserve from in memory.
   */
  claim?: { kind: 'hold'; owner?: string } | { kind: 'lease'; owner: string; useUntil: string };
  key: KeyTerms;
  workspace: WorkspaceTerms;
  extras?: ExtraTerms[];
  /** Windows each meter is expected to be counting (the current ones, or newer ones seen in the store). */
  keyPeriods: Periods;
  workspacePeriods: Periods;
  createdAt: string;
  expiresAt: string;
  /** The reservation's own few characters in its transaction token (the same over its attempts). */
  nonce?: string;
}

/** Why the organization's item refused a reservation. */
export type OrganizationRefusal =
  | { kind: 'organization-gone' }
  /** Stored before balances existed: it needs its balance attribute (addBalance) first. */
  | { kind: 'balance-missing' }
  | { kind: 'insufficient-balance'; balance: Nanos; held: Nanos };

/** Why the key's item refused a reservation, with the key as stored. */
export type KeyRefusal =
  | { kind: 'key-gone' }
  /** Changed (its settings version differs) or disabled since the copy the hold was checked against. */
  | { kind: 'stale-key'; key: ApiKey }
  /** Same settings: its meter counts other windows than expected, or its limit has no room. */
  | { kind: 'key-meter'; key: ApiKey };

/** Why the workspace's item refused a reservation, with the workspace as stored. */
export type WorkspaceRefusal =
  | { kind: 'workspace-gone' }
  /** Its budgets changed (budget version) since the copy the hold was checked against. */
  | { kind: 'stale-workspace'; workspace: Workspace }
  /** Same budgets: its meter counts other windows than expected, or a budget has no room. */
  | { kind: 'workspace-meter'; workspace: Workspace };

/** Why an extra meter refused a reservation: gone (never made, or its owner deleted), or its item as stored. */
export type ExtraRefusal = { kind: 'meter-gone' } | { kind: 'extra-meter'; item: Record<string, unknown> };

export type ReserveOutcome =
  | { kind: 'held'; writeUnits: number }
  | { kind: 'conflict' }
  /** A hold with this generation id exists already. */
  | { kind: 'duplicate' }
  /** Every item whose condition failed says why (none: refused for a reason this cannot tell). */
  | { kind: 'refused'; organization?: OrganizationRefusal; key?: KeyRefusal; workspace?: WorkspaceRefusal; extras?: Map<string, ExtraRefusal> };

export type ReleaseOutcome =
  | { kind: 'released'; writeUnits: number }
  /** The hold is gone: released, swept, or ended by its record (the aggregator deletes it). */
  | { kind: 'already' }
  | { kind: 'conflict' }
  /** The key or workspace (or an extra meter: its id) was deleted while the request ran. */
  | { kind: 'meter-gone'; key: boolean; workspace: boolean; extras?: string[] };

export interface ReleaseRequest {
  hold: HoldRef;
  /** The key or workspace was deleted while the request ran: give the organization back without its meter. */
  skipKey?: boolean;
  skipWorkspace?: boolean;
  /** Extra meters (by id) deleted while it ran. */
  skipExtras?: ReadonlySet<string>;
  /** The release's own few characters in its transaction token. */
  nonce?: string;
}

export type LeaseReturnOutcome =
  | { kind: 'returned'; writeUnits: number }
  /** No longer active: returned or swept already (or never taken). */
  | { kind: 'already' }
  | { kind: 'conflict' }
  /** Swept only: the aggregator applied more of its records since `consumed` was read. */
  | { kind: 'moved' }
  | { kind: 'meter-gone'; key: boolean; workspace: boolean };

export interface StoredLease {
  id: string;
  orgId: string;
  workspaceId: string;
  keyHash: string;
  amount: Nanos;
  owner: string;
  state: 'active' | 'returned' | 'swept';
  /** What the aggregator has moved out of `held` for its records so far. */
  consumed: Nanos;
  /** What its owner gave back (when returned). */
  returned: Nanos;
  useUntil: string;
  expiresAt: string;
}

/** What a key's limit, its workspace's budgets and its organization's balance leave, as stored. */
export interface StoredHeadroom {
  organization: { balance: Nanos; credits: Nanos } | undefined;
  key: Record<string, unknown> | undefined;
  workspace: Record<string, unknown> | undefined;
}

export interface StoredHold extends HoldRef {
  createdAt: string;
  expiresAt: string;
}

export function shardOf(generationId: string): number {
  let hash = 0;
  for (let i = 0; i < generationId.length; i += 1) hash = (hash * 31 + generationId.charCodeAt(i)) >>> 0;
  return hash % HOLD_SHARDS;
}

/** The organization's refusal of a reservation (index 1 of its transaction). */
function organizationRefusal(cancellation: Cancellation, index: number): OrganizationRefusal | undefined {
  const failed = cancellation.stored(index);
  if (!failed) return undefined;
  if (!failed.item) return { kind: 'organization-gone' };
  if (failed.item.balance === undefined) return { kind: 'balance-missing' };
  return { kind: 'insufficient-balance', balance: nanosFromStore(failed.item.balance), held: nanosFromStore(failed.item.held) };
}

/**
 * How the ledger reads back the key and workspace items its transactions meter (a refused reservation
 * returns them as stored): their features' item codecs, wired in by the composition root, so billing calls
 * no feature code.
 */
export interface MeteredItemCodecs {
  keyFromItem: (item: Record<string, unknown>) => ApiKey;
  workspaceFromItem: (item: Record<string, unknown>) => Workspace;
}

function keyRefusal(cancellation: Cancellation, index: number, terms: KeyTerms, keyFromItem: MeteredItemCodecs['keyFromItem']): KeyRefusal | undefined {
  const failed = cancellation.stored(index);
  if (!failed) return undefined;
  if (!failed.item) return { kind: 'key-gone' };
  const key = keyFromItem(failed.item);
  return key.settings_version !== terms.settingsVersion || key.disabled ? { kind: 'stale-key', key } : { kind: 'key-meter', key };
}

function workspaceRefusal(cancellation: Cancellation, index: number, terms: WorkspaceTerms, workspaceFromItem: MeteredItemCodecs['workspaceFromItem']): WorkspaceRefusal | undefined {
  const failed = cancellation.stored(index);
  if (!failed) return undefined;
  if (!failed.item) return { kind: 'workspace-gone' };
  const workspace = workspaceFromItem(failed.item);
  return workspace.budget_version !== terms.budgetVersion ? { kind: 'stale-workspace', workspace } : { kind: 'workspace-meter', workspace };
}

export class LedgerRepository {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string, private readonly codecs: MeteredItemCodecs) {}

  async reserve(request: HoldRequest, attempt: number): Promise<ReserveOutcome> {
    const amount = request.amount;
    const claim = request.claim ?? { kind: 'hold' };
    const owned = {
      org_id: request.orgId,
      workspace_id: request.workspaceId,
      key_hash: request.keyHash,
      amount: nanosToStore(amount),
      created_at: request.createdAt,
      expires_at: request.expiresAt,
      ...(request.extras?.length ? { extras: request.extras.map((extra) => extra.ref) } : {}),
    };
    const hold = claim.kind === 'hold'
      ? {
        ...itemKeys.hold(request.generationId),
        ...itemKeys.holdListing(shardOf(request.generationId), request.expiresAt, request.generationId),
        type: 'hold',
        generation_id: request.generationId,
        ...owned,
        ...(claim.owner ? { owner: claim.owner } : {}),
      }
      : {
        ...itemKeys.lease(request.generationId),
        ...itemKeys.leaseListing(shardOf(request.generationId), request.expiresAt, request.generationId),
        type: 'lease',
        lease_id: request.generationId,
        ...owned,
        owner: claim.owner,
        use_until: claim.useUntil,
        settings_version: request.key.settingsVersion,
        budget_version: request.workspace.budgetVersion,
        state: 'active',
        consumed: 0,
      };

    const keyUpdate = new UpdateBuilder();
    const sv = keyUpdate.name('settings_version', 'sv');
    keyUpdate.value('sv', request.key.settingsVersion);
    keyUpdate
      .condition(request.key.settingsVersion === 0 ? `(attribute_not_exists(${sv}) OR ${sv} = :sv)` : `${sv} = :sv`)
      .condition(periodsCondition(keyUpdate, request.keyPeriods));
    limitConditions(keyUpdate, [...(request.key.limit ? [request.key.limit] : []), ...(request.key.guardrailLimits ?? [])], amount);
    meterAdds(keyUpdate, { held: amount, usage: 0n, byok: 0n });
    if (claim.kind === 'lease') keyUpdate.add('leases', 1);

    const wsUpdate = new UpdateBuilder();
    const bv = wsUpdate.name('budget_version', 'bv');
    wsUpdate.value('bv', request.workspace.budgetVersion);
    wsUpdate
      .condition(request.workspace.budgetVersion === 0 ? `(attribute_not_exists(${bv}) OR ${bv} = :bv)` : `${bv} = :bv`)
      .condition(periodsCondition(wsUpdate, request.workspacePeriods));
    for (const budget of request.workspace.budgets) {
      const exposure = wsUpdate.name(meterAttr.exposure(budget.interval, request.workspace.withByok), `b_${budget.interval}`);
      wsUpdate.condition(`${exposure} <= ${wsUpdate.value(`b_${budget.interval}`, nanosToStore(budget.limit - amount))}`);
    }
    meterAdds(wsUpdate, { held: amount, usage: 0n, byok: 0n });
    if (claim.kind === 'lease') wsUpdate.add('leases', 1);

    const extras = (request.extras ?? []).map((extra) => {
      const update = new UpdateBuilder();
      update.condition('attribute_exists(pk)').condition(periodsCondition(update, extra.periods));
      if (extra.version !== undefined) update.condition(`${update.name('settings_version', 'sv')} = ${update.value('sv', extra.version)}`);
      limitConditions(update, extra.limits, amount);
      meterAdds(update, { held: amount, usage: 0n, byok: 0n });
      return { Update: { TableName: this.tableName, Key: meterKey(extra.ref), ...update.build(), ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const } };
    });

    try {
      const result = await this.db.send(new TransactWriteCommand({
        // With the reservation's nonce: a batch item's generation id is the same in every run of the item, and
        // DynamoDB refuses a token reused with other parameters.
        ClientRequestToken: token('r', `${request.generationId}.${request.nonce ?? ''}`, attempt),
        ReturnConsumedCapacity: 'TOTAL',
        TransactItems: [
          { Put: { TableName: this.tableName, Item: hold, ConditionExpression: 'attribute_not_exists(pk)' } },
          {
            Update: {
              TableName: this.tableName,
              Key: itemKeys.organization(request.orgId),
              UpdateExpression: 'ADD held :amount, balance :negative',
              ConditionExpression: 'balance >= :amount',
              ExpressionAttributeValues: { ':amount': nanosToStore(amount), ':negative': nanosToStore(-amount) },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
          { Update: { TableName: this.tableName, Key: itemKeys.apiKey(request.keyHash), ...keyUpdate.build(), ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } },
          { Update: { TableName: this.tableName, Key: itemKeys.workspace(request.orgId, request.workspaceId), ...wsUpdate.build(), ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } },
          ...extras,
        ],
      }));
      return { kind: 'held', writeUnits: writeUnits(result.ConsumedCapacity) };
    } catch (err) {
      const cancellation = cancellationOf(err);
      if (!cancellation) throw err;
      if (cancellation.conflict) return { kind: 'conflict' };
      if (cancellation.failedAt(0)) return { kind: 'duplicate' };
      const organization = organizationRefusal(cancellation, 1);
      const key = keyRefusal(cancellation, 2, request.key, this.codecs.keyFromItem);
      const workspace = workspaceRefusal(cancellation, 3, request.workspace, this.codecs.workspaceFromItem);
      const refusedExtras = new Map<string, ExtraRefusal>();
      (request.extras ?? []).forEach((extra, i) => {
        const failed = cancellation.stored(4 + i);
        if (failed) refusedExtras.set(extraMeterId(extra.ref), failed.item ? { kind: 'extra-meter', item: failed.item } : { kind: 'meter-gone' });
      });
      return {
        kind: 'refused',
        ...(organization ? { organization } : {}),
        ...(key ? { key } : {}),
        ...(workspace ? { workspace } : {}),
        ...(refusedExtras.size ? { extras: refusedExtras } : {}),
      };
    }
  }

  /**
   * Gives back everything a hold took (its request ended without a record). The hold item is the
   * idempotency key: once it is gone, nothing is given back again. A release moves no usage, so it needs no
   * windows: every exposure loses what was held (a window rolled since then starts from `held`, which
   * already includes it).
   */
  async release(request: ReleaseRequest, attempt: number): Promise<ReleaseOutcome> {
    const { hold } = request;
    const meter = () => {
      const update = new UpdateBuilder();
      update.condition('attribute_exists(pk)');
      return meterAdds(update, { held: -hold.amount, usage: 0n, byok: 0n }).build();
    };
    type TransactItem = NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']>[number];
    const items: TransactItem[] = [
      { Delete: { TableName: this.tableName, Key: itemKeys.hold(hold.generationId), ConditionExpression: 'attribute_exists(pk)' } },
      {
        Update: {
          TableName: this.tableName,
          Key: itemKeys.organization(hold.orgId),
          UpdateExpression: 'ADD held :negative, balance :amount',
          ExpressionAttributeValues: { ':negative': nanosToStore(-hold.amount), ':amount': nanosToStore(hold.amount) },
        },
      },
    ];
    const keyIndex = request.skipKey ? -1 : items.length;
    if (!request.skipKey) items.push({ Update: { TableName: this.tableName, Key: itemKeys.apiKey(hold.keyHash), ...meter() } });
    const wsIndex = request.skipWorkspace ? -1 : items.length;
    if (!request.skipWorkspace) items.push({ Update: { TableName: this.tableName, Key: itemKeys.workspace(hold.orgId, hold.workspaceId), ...meter() } });
    const extraIndex = new Map<number, string>();
    for (const ref of hold.extras ?? []) {
      const id = extraMeterId(ref);
      if (request.skipExtras?.has(id)) continue;
      extraIndex.set(items.length, id);
      items.push({ Update: { TableName: this.tableName, Key: meterKey(ref), ...meter() } });
    }
    try {
      const result = await this.db.send(new TransactWriteCommand({
        ClientRequestToken: token('x', `${hold.generationId}.${request.nonce ?? ''}`, attempt),
        ReturnConsumedCapacity: 'TOTAL',
        TransactItems: items,
      }));
      return { kind: 'released', writeUnits: writeUnits(result.ConsumedCapacity) };
    } catch (err) {
      const cancellation = cancellationOf(err);
      if (!cancellation) throw err;
      if (cancellation.conflict) return { kind: 'conflict' };
      if (cancellation.failedAt(0)) return { kind: 'already' };
      const key = cancellation.failedAt(keyIndex);
      const workspace = cancellation.failedAt(wsIndex);
      const extras = [...extraIndex].filter(([index]) => cancellation.failedAt(index)).map(([, id]) => id);
      if (key || workspace || extras.length) return { kind: 'meter-gone', key, workspace, ...(extras.length ? { extras } : {}) };
      throw err;
    }
  }

  /**
   * Makes an extra meter that does not exist yet (a member's, on its first limited request), counting the
   * current windows; one made meanwhile by another process is left as it is.
   */
  async createMeter(meter: ExtraMeterRef, periods: Periods): Promise<void> {
    await unlessConditionFailsOrConflicts(this.db.send(new PutCommand({
      TableName: this.tableName,
      Item: { ...meterKey(meter), type: `${meter.of}-meter`, ...meterToItem({ usage: zeroUsage(), byok_usage: zeroUsage(), periods, held: 0n, leases: 0 }) },
      ConditionExpression: 'attribute_not_exists(pk)',
    })), undefined);
  }

  /**
   * Starts new windows on a key or workspace meter whose stored windows are older than `periods`: the
   * window's usage restarts at zero and its exposure at what is held. Concurrent rollers race harmlessly; a
   * roll that meets a transaction on the item (on AWS, the requests crossing the window) is left to the
   * caller's next attempt, which finds the windows still behind and rolls again.
   */
  async roll(meter: MeterRef, periods: Periods, stored: Partial<Periods>): Promise<void> {
    const stale = INTERVALS.filter((interval) => !stored[interval] || stored[interval]! < periods[interval]);
    if (stale.length === 0) return;
    const names: Record<string, string> = { '#held': meterAttr.held };
    const values: Record<string, unknown> = { ':zero': 0 };
    const sets: string[] = [];
    const conditions: string[] = [];
    for (const interval of stale) {
      const i = interval[0];
      names[`#u${i}`] = meterAttr.usage(interval);
      names[`#b${i}`] = meterAttr.byok(interval);
      names[`#e${i}`] = meterAttr.exposure(interval, false);
      names[`#eb${i}`] = meterAttr.exposure(interval, true);
      names[`#p${i}`] = meterAttr.period(interval);
      values[`:p${i}`] = periods[interval];
      sets.push(`#u${i} = :zero`, `#b${i} = :zero`, `#e${i} = if_not_exists(#held, :zero)`, `#eb${i} = if_not_exists(#held, :zero)`, `#p${i} = :p${i}`);
      conditions.push(`(attribute_not_exists(#p${i}) OR #p${i} < :p${i})`);
    }
    // Items from before meters existed also lack the lifetime counters: start them (at zero usage).
    names['#ut'] = meterAttr.usage('total');
    names['#bt'] = meterAttr.byok('total');
    names['#et'] = meterAttr.exposure('total', false);
    names['#ebt'] = meterAttr.exposure('total', true);
    sets.push('#ut = if_not_exists(#ut, :zero)', '#bt = if_not_exists(#bt, :zero)', '#et = if_not_exists(#et, if_not_exists(#held, :zero))', '#ebt = if_not_exists(#ebt, if_not_exists(#held, :zero))');
    await unlessConditionFailsOrConflicts(this.db.send(new UpdateCommand({
      TableName: this.tableName,
      Key: meterKey(meter),
      UpdateExpression: `SET ${sets.join(', ')}`,
      ConditionExpression: `attribute_exists(pk) AND ${conditions.join(' AND ')}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    })), undefined);
  }

  /**
   * Ends a lease, giving back `unspent`: it leaves `held` and returns to the balance on the organization, the
   * key and the workspace.
   * - `return`: by its owner, which knows what its requests spent (applied or not); the lease must be active.
   *   It stays listed until `settleBy` (past the stream's retention), when the sweep closes it.
   * - `sweep`: by the maintenance sweep, of a lease that is `from` active (expired, or its owner died) or
   *   returned (past `settleBy`: records that never reached the aggregator spent what is left), with
   *   `consumed` unchanged since it was read. The lease is marked swept, so that records applied after it
   *   are charged without releasing anything, leaves the sweep's listing, and expires later.
   * Every meter loses one outstanding lease when its owner gives it back, or when it is swept while active.
   */
  async endLease(
    lease: Pick<StoredLease, 'id' | 'orgId' | 'workspaceId' | 'keyHash'>,
    unspent: Nanos,
    how: { kind: 'return'; settleBy: string } | { kind: 'sweep'; from: 'active' | 'returned'; consumed: Nanos; expiresAtS: number },
    token: string,
    skip: { key?: boolean; workspace?: boolean } = {},
  ): Promise<LeaseReturnOutcome> {
    const leaseUpdate = new UpdateBuilder();
    const state = leaseUpdate.name('state', 'st');
    leaseUpdate.condition(`${state} = ${leaseUpdate.value('from', how.kind === 'return' ? 'active' : how.from)}`);
    leaseUpdate.setExpression(`${state} = ${leaseUpdate.value('to', how.kind === 'return' ? 'returned' : 'swept')}`);
    if (how.kind === 'return') {
      leaseUpdate.setExpression(`${leaseUpdate.name('returned', 'ret')} = ${leaseUpdate.value('ret', nanosToStore(unspent))}`);
      leaseUpdate.setExpression(`gsi1sk = ${leaseUpdate.value('listed', `${how.settleBy}#${lease.id}`)}`);
    } else {
      const consumed = leaseUpdate.name('consumed', 'cons');
      leaseUpdate.condition(`${consumed} = ${leaseUpdate.value('cons', nanosToStore(how.consumed))}`);
      leaseUpdate.setExpression(`${leaseUpdate.name('swept', 'swp')} = ${leaseUpdate.value('swp', nanosToStore(unspent))}`);
      leaseUpdate.setExpression(`${leaseUpdate.name('ttl', 'ttl')} = ${leaseUpdate.value('ttl', how.expiresAtS)}`);
      leaseUpdate.removeExpression('gsi1pk, gsi1sk');
    }
    const countsLease = how.kind === 'return' || how.from === 'active';
    const meter = () => {
      const update = new UpdateBuilder();
      update.condition('attribute_exists(pk)');
      meterAdds(update, { held: -unspent, usage: 0n, byok: 0n });
      if (countsLease) update.add('leases', -1);
      return update.build();
    };
    type TransactItem = NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']>[number];
    const items: TransactItem[] = [
      { Update: { TableName: this.tableName, Key: itemKeys.lease(lease.id), ...leaseUpdate.build(), ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } },
    ];
    let keyIndex = -1;
    let wsIndex = -1;
    // A returned lease whose records all arrived has nothing left to give back: only its state moves.
    if (unspent !== 0n || countsLease) {
      items.push({
        Update: {
          TableName: this.tableName,
          Key: itemKeys.organization(lease.orgId),
          UpdateExpression: 'ADD held :negative, balance :amount',
          ExpressionAttributeValues: { ':negative': nanosToStore(-unspent), ':amount': nanosToStore(unspent) },
        },
      });
      if (!skip.key) {
        keyIndex = items.length;
        items.push({ Update: { TableName: this.tableName, Key: itemKeys.apiKey(lease.keyHash), ...meter() } });
      }
      if (!skip.workspace) {
        wsIndex = items.length;
        items.push({ Update: { TableName: this.tableName, Key: itemKeys.workspace(lease.orgId, lease.workspaceId), ...meter() } });
      }
    }
    try {
      const result = await this.db.send(new TransactWriteCommand({ ClientRequestToken: token, ReturnConsumedCapacity: 'TOTAL', TransactItems: items }));
      return { kind: 'returned', writeUnits: writeUnits(result.ConsumedCapacity) };
    } catch (err) {
      const cancellation = cancellationOf(err);
      if (!cancellation) throw err;
      if (cancellation.conflict) return { kind: 'conflict' };
      const failed = cancellation.stored(0);
      if (failed) {
        const expected = how.kind === 'return' ? 'active' : how.from;
        return failed.item?.state === expected ? { kind: 'moved' } : { kind: 'already' };
      }
      const key = cancellation.failedAt(keyIndex);
      const workspace = cancellation.failedAt(wsIndex);
      if (key || workspace) return { kind: 'meter-gone', key, workspace };
      throw err;
    }
  }

  async getLease(id: string): Promise<StoredLease | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.lease(id), ConsistentRead: true }));
    return Item ? leaseFromItem(Item) : undefined;
  }

  /**
   * Leases the sweep has to end: active ones whose expiry has passed and returned ones past their settle-by
   * time (both listed by that time), or, with `owner`, every active lease of that owner. Ended leases leave
   * the listing, so it holds only leases that still have something to settle.
   */
  async leasesToSweep(filter: { by: string } | { owner: string }, limitPerShard = 100): Promise<StoredLease[]> {
    const activeOnly = { expression: '#state = :active', names: { '#state': 'state' }, values: { ':active': 'active' } };
    return (await this.listing((shard) => itemKeys.leasesOf(shard).gsi1pk, filter, limitPerShard, activeOnly)).map(leaseFromItem);
  }

  /**
   * Items of a listing sharded over gsi1 (holds, leases): listed before `by`, oldest first, or every one of
   * `owner` (meeting `ownerAlso` too).
   */
  private async listing(
    pkOf: (shard: number) => string,
    filter: { by: string } | { owner: string },
    limitPerShard: number,
    ownerAlso?: { expression: string; names: Record<string, string>; values: Record<string, unknown> },
  ): Promise<Array<Record<string, unknown>>> {
    const found: Array<Record<string, unknown>> = [];
    const byTime = 'by' in filter;
    for (let shard = 0; shard < HOLD_SHARDS; shard += 1) {
      for await (const item of queryItems(this.db, {
        TableName: this.tableName,
        IndexName: 'gsi1',
        KeyConditionExpression: byTime ? 'gsi1pk = :pk AND gsi1sk < :now' : 'gsi1pk = :pk',
        ...(byTime ? {} : {
          FilterExpression: ['#owner = :owner', ...(ownerAlso ? [ownerAlso.expression] : [])].join(' AND '),
          ExpressionAttributeNames: { '#owner': 'owner', ...ownerAlso?.names },
        }),
        ExpressionAttributeValues: { ':pk': pkOf(shard), ...(byTime ? { ':now': filter.by } : { ':owner': filter.owner, ...ownerAlso?.values }) },
      }, { atMost: limitPerShard })) found.push(item);
    }
    return found;
  }

  /** The organization, key and workspace items as stored now (consistent reads), for sizing a lease. */
  async headroomItems(orgId: string, keyHash: string, workspaceId: string): Promise<StoredHeadroom> {
    const keys = [itemKeys.organization(orgId), itemKeys.apiKey(keyHash), itemKeys.workspace(orgId, workspaceId)];
    const { Responses } = await this.db.send(new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: keys, ConsistentRead: true } } }));
    const items = Responses?.[this.tableName] ?? [];
    const find = (key: { pk: string; sk: string }) => items.find((item) => item.pk === key.pk && item.sk === key.sk);
    const org = find(keys[0]!);
    return {
      // An organization item from before balances: what its balance would be (addBalance stores the same).
      organization: org ? {
        balance: org.balance !== undefined ? nanosFromStore(org.balance) : nanosFromStore(org.total_credits) - nanosFromStore(org.total_usage) - nanosFromStore(org.held),
        credits: nanosFromStore(org.total_credits),
      } : undefined,
      key: find(keys[1]!),
      workspace: find(keys[2]!),
    };
  }

  /** The organization's balance (credits less usage and what is held), eventually consistent; undefined when it has none stored. */
  async balanceOf(orgId: string): Promise<Nanos | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.organization(orgId), ProjectionExpression: 'balance' }));
    return Item?.balance === undefined ? undefined : nanosFromStore(Item.balance);
  }

  /** Gives an organization item from before balances existed its balance attribute (a conflict: the caller's next attempt does). */
  async addBalance(orgId: string): Promise<void> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.organization(orgId), ConsistentRead: true }));
    if (!Item || Item.balance !== undefined) return;
    const balance = nanosFromStore(Item.total_credits) - nanosFromStore(Item.total_usage) - nanosFromStore(Item.held);
    await unlessConditionFailsOrConflicts(this.db.send(new UpdateCommand({
      TableName: this.tableName,
      Key: itemKeys.organization(orgId),
      UpdateExpression: 'SET balance = :balance',
      // Only if nothing moved since the read: the next attempt reads again.
      ConditionExpression: 'attribute_not_exists(balance) AND attribute_exists(pk)',
      ExpressionAttributeValues: { ':balance': nanosToStore(balance) },
    })), undefined);
  }

  async getHold(generationId: string): Promise<StoredHold | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.hold(generationId), ConsistentRead: true }));
    return Item ? holdFromItem(Item) : undefined;
  }

  /** Holds whose expiry has passed, oldest first, from every shard; or, with `owner`, every hold of that process. */
  async expiredHolds(filter: { by: string } | { owner: string }, limitPerShard = 100): Promise<StoredHold[]> {
    return (await this.listing((shard) => itemKeys.holdsOf(shard).gsi1pk, filter, limitPerShard)).map(holdFromItem);
  }
}

function leaseFromItem(item: Record<string, unknown>): StoredLease {
  return {
    id: item.lease_id as string,
    orgId: item.org_id as string,
    workspaceId: item.workspace_id as string,
    keyHash: item.key_hash as string,
    amount: nanosFromStore(item.amount),
    owner: item.owner as string,
    state: item.state as StoredLease['state'],
    consumed: nanosFromStore(item.consumed),
    returned: nanosFromStore(item.returned),
    useUntil: item.use_until as string,
    expiresAt: item.expires_at as string,
  };
}

/** Conditions that every limit on a meter has room for `amount` (its exposure in the limit's window). */
function limitConditions(update: UpdateBuilder, limits: readonly LimitTerms[], amount: Nanos): void {
  limits.forEach((limit, i) => {
    const exposure = update.name(meterAttr.exposure(limit.window, limit.withByok), `lx${i}`);
    update.condition(`${exposure} <= ${update.value(`lc${i}`, nanosToStore(limit.amount - amount))}`);
  });
}

function holdFromItem(item: Record<string, unknown>): StoredHold {
  return {
    generationId: item.generation_id as string,
    orgId: item.org_id as string,
    workspaceId: item.workspace_id as string,
    keyHash: item.key_hash as string,
    amount: nanosFromStore(item.amount),
    ...(Array.isArray(item.extras) && item.extras.length ? { extras: item.extras as ExtraMeterRef[] } : {}),
    createdAt: item.created_at as string,
    expiresAt: item.expires_at as string,
  };
}

