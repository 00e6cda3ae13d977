// The aggregator's side of DynamoDB: a group of pages applied in one TransactWriteItems, exactly once.
//
//   marker     GENS#<block> APPLIED: ADD the pages' seqs — only if none of them is there yet
//   org        held −release · balance +(release − credits) · total_usage +credits
//   key, ws    the meter moved (aggregation.ts), only if it counts the expected windows
//   extra      an end user's or member's meter, the same way
//   rollup     ADD the counters, SET the dimensions
//   hold       Delete HOLD#<generation> — only if it is still there
//   lease      ADD consumed — only if it was not swept
//
// The marker is the idempotency key: a redelivered stream batch (a retry, a bisected half) finds its pages'
// seqs there and is refused whole, then applied without them. Outcomes are typed, with what refused them
// decoded; choosing what to do (drop applied pages, apply late, roll a window, retry) is the aggregator's job.
import { randomBytes } from 'node:crypto';
import { TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { UpdateBuilder } from '../platform/dynamo/update-builder.js';
import { cancellationOf } from '../platform/dynamo/write-failures.js';
import { nanosToStore } from '../platform/money.js';
import { currentPeriods, type Periods } from './periods.js';
import { periodsFromItem } from './meter-item.js';
import { meterAdds, meterKey, periodsCondition, token, writeUnits } from './meter-writes.js';
import type { Effects, MeterMove } from './aggregation.js';

/** Markers outlive the stream's retention (24 hours), after which no batch can be redelivered. */
export const MARKER_TTL_S = 3 * 86_400;

export interface ApplyRequest {
  effects: Effects;
  /** The windows each meter is expected to count, by key hash and by `<org>/<workspace>`. */
  keyPeriods: ReadonlyMap<string, Periods>;
  workspacePeriods: ReadonlyMap<string, Periods>;
  /** By extraMeterId. */
  extraPeriods?: ReadonlyMap<string, Periods>;
  nowS: number;
}

export type ApplyOutcome =
  | { kind: 'applied'; writeUnits: number }
  | { kind: 'conflict' }
  /** Pages already applied (their seqs are in their blocks' markers), by block. */
  | { kind: 'already'; applied: Map<string, Set<number>> }
  | {
    kind: 'refused';
    /** Holds already gone (swept): their records are applied late. */
    holdsGone: string[];
    /** Leases swept already (or gone): their records are applied late. */
    leasesSwept: string[];
    /** Meters that were deleted, or count other windows (as stored). */
    keys: Map<string, Partial<Periods> | 'gone'>;
    workspaces: Map<string, Partial<Periods> | 'gone'>;
    extras?: Map<string, Partial<Periods> | 'gone'>;
  };

type TransactItem = NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']>[number];

function meterUpdate(move: MeterMove, periods: Periods): ReturnType<UpdateBuilder['build']> {
  const update = new UpdateBuilder();
  update.condition(`attribute_exists(pk) AND ${periodsCondition(update, periods)}`);
  return meterAdds(update, { held: -move.release, usage: move.credits, byok: move.byok }).build();
}

export class AggregatorRepository {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string) {}

  async apply(request: ApplyRequest, attempt: number): Promise<ApplyOutcome> {
    const { effects } = request;
    const table = this.tableName;
    const items: TransactItem[] = [];
    const seqsByBlock = new Map<string, number[]>();
    for (const page of effects.pages) seqsByBlock.set(page.block, [...(seqsByBlock.get(page.block) ?? []), page.seq]);
    const markerIndex = new Map<number, string>();
    for (const [block, seqs] of seqsByBlock) {
      markerIndex.set(items.length, block);
      const values: Record<string, unknown> = { ':seqs': new Set(seqs), ':ttl': request.nowS + MARKER_TTL_S };
      seqs.forEach((seq, i) => { values[`:s${i}`] = seq; });
      items.push({
        Update: {
          TableName: table,
          Key: itemKeys.appliedMarker(block),
          UpdateExpression: 'ADD seqs :seqs SET #ttl = :ttl',
          ConditionExpression: `attribute_not_exists(seqs) OR (${seqs.map((_, i) => `NOT contains(seqs, :s${i})`).join(' AND ')})`,
          ExpressionAttributeNames: { '#ttl': 'ttl' },
          ExpressionAttributeValues: values,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      });
    }
    for (const [orgId, move] of effects.organizations) {
      const update = new UpdateBuilder();
      update.add('held', nanosToStore(-move.release));
      if (move.release !== move.credits) update.add('balance', nanosToStore(move.release - move.credits));
      if (move.credits !== 0n) update.add('total_usage', nanosToStore(move.credits));
      items.push({ Update: { TableName: table, Key: itemKeys.organization(orgId), ...update.build() } });
    }
    const keyIndex = new Map<number, string>();
    for (const [hash, move] of effects.keys) {
      keyIndex.set(items.length, hash);
      items.push({ Update: { TableName: table, Key: itemKeys.apiKey(hash), ...meterUpdate(move, request.keyPeriods.get(hash)!), ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } });
    }
    const workspaceIndex = new Map<number, string>();
    for (const [id, move] of effects.workspaces) {
      workspaceIndex.set(items.length, id);
      items.push({
        Update: { TableName: table, Key: itemKeys.workspace(move.orgId, move.workspaceId), ...meterUpdate(move, request.workspacePeriods.get(id)!), ReturnValuesOnConditionCheckFailure: 'ALL_OLD' },
      });
    }
    const extraIndex = new Map<number, string>();
    for (const [id, move] of effects.extras) {
      extraIndex.set(items.length, id);
      items.push({ Update: { TableName: table, Key: meterKey(move.ref), ...meterUpdate(move, request.extraPeriods?.get(id) ?? currentPeriods(new Date(request.nowS * 1000))), ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } });
    }
    for (const rollup of effects.rollups.values()) {
      const update = new UpdateBuilder();
      Object.entries(rollup.counters).forEach(([name, value], i) => {
        if (value !== 0 && value !== 0n) update.add(name, value, `c${i}`);
      });
      Object.entries(rollup.dimensions).forEach(([name, value], i) => {
        update.setExpression(`${update.name(name, `d${i}`)} = ${update.value(`d${i}`, value)}`);
      });
      items.push({ Update: { TableName: table, Key: rollup.key, ...update.build() } });
    }
    const holdIndex = new Map<number, string>();
    for (const generationId of effects.holds) {
      holdIndex.set(items.length, generationId);
      items.push({ Delete: { TableName: table, Key: itemKeys.hold(generationId), ConditionExpression: 'attribute_exists(pk)' } });
    }

    const leaseIndex = new Map<number, string>();
    for (const [leaseId, spent] of effects.leases) {
      leaseIndex.set(items.length, leaseId);
      items.push({
        Update: {
          TableName: table,
          Key: itemKeys.lease(leaseId),
          UpdateExpression: 'ADD #consumed :spent',
          ConditionExpression: 'attribute_exists(pk) AND #state <> :swept',
          ExpressionAttributeNames: { '#state': 'state', '#consumed': 'consumed' },
          ExpressionAttributeValues: { ':spent': nanosToStore(spent), ':swept': 'swept' },
        },
      });
    }

    try {
      const result = await this.db.send(new TransactWriteCommand({
        // Fresh for every attempt: the SDK's own retries of this one reuse it (DynamoDB then answers from the
        // first), while a redelivered batch, which may carry other items, never collides with an earlier token.
        ClientRequestToken: token('a', randomBytes(16).toString('hex'), attempt),
        ReturnConsumedCapacity: 'TOTAL',
        TransactItems: items,
      }));
      return { kind: 'applied', writeUnits: writeUnits(result.ConsumedCapacity) };
    } catch (err) {
      const cancellation = cancellationOf(err);
      if (!cancellation) throw err;
      if (cancellation.conflict) return { kind: 'conflict' };
      const applied = new Map<string, Set<number>>();
      for (const [index, block] of markerIndex) {
        const failed = cancellation.stored(index);
        if (!failed) continue;
        const seqs = failed.item?.seqs;
        applied.set(block, new Set(seqs instanceof Set ? [...seqs as Set<number>].map(Number) : []));
      }
      if (applied.size > 0) return { kind: 'already', applied };
      const holdsGone = [...holdIndex].filter(([index]) => cancellation.failedAt(index)).map(([, id]) => id);
      const leasesSwept = [...leaseIndex].filter(([index]) => cancellation.failedAt(index)).map(([, id]) => id);
      const meters = (indexes: Map<number, string>) => {
        const found = new Map<string, Partial<Periods> | 'gone'>();
        for (const [index, id] of indexes) {
          const failed = cancellation.stored(index);
          if (failed) found.set(id, failed.item ? periodsFromItem(failed.item) : 'gone');
        }
        return found;
      };
      const keys = meters(keyIndex);
      const workspaces = meters(workspaceIndex);
      const extras = meters(extraIndex);
      if (holdsGone.length === 0 && leasesSwept.length === 0 && keys.size === 0 && workspaces.size === 0 && extras.size === 0) throw err;
      return { kind: 'refused', holdsGone, leasesSwept, keys, workspaces, ...(extras.size ? { extras } : {}) };
    }
  }
}
