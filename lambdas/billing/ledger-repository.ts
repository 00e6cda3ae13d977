// The money path in DynamoDB: holds placed before a request reaches a provider and settled (or released)
// after it, each in one TransactWriteItems over the organization, the key, the workspace and the hold item.
//
//   reserve   Put HOLD#<generation> (new) · org: balance ≥ amount · key: limit window has room ·
//             workspace: every budget has room — all or nothing
//   settle    Delete HOLD#<generation> (must exist) · org/key/workspace: held −amount, usage +cost ·
//             Put the generation record (new) · ADD the hourly rollup row — all or nothing
//   release   Delete HOLD#<generation> (must exist) · org/key/workspace: held −amount
//
// The hold item is the idempotency key: a settlement or release whose hold is gone has already happened
// (or the hold was swept), so retries, re-invocations and duplicate deliveries never charge twice.
// Methods return what happened; choosing what to do about it (reload, roll a window, retry, refuse with
// 402) is the Ledger's job.
import { ConditionalCheckFailedException, TransactionCanceledException, type CancellationReason, type ConsumedCapacity } from '@aws-sdk/client-dynamodb';
import { GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { nanosFromStore, nanosToStore, type Nanos } from '../platform/money.js';
import { INTERVALS, type Periods } from './periods.js';
import { WINDOWS, meterAttr, type Window } from './meter.js';
import { itemKeys } from '../platform/dynamo/item-keys.js';

export const HOLD_SHARDS = 16;

/** What a hold needs to know about the key and workspace it is checked against (from a cached copy). */
export interface KeyTerms {
  hash: string;
  settingsVersion: number;
  /** Limit and the window it applies to (total = lifetime), or null for no limit. */
  limit: { amount: Nanos; window: Window; withByok: boolean } | null;
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
}

export interface HoldRequest extends HoldRef {
  key: KeyTerms;
  workspace: WorkspaceTerms;
  /** Windows each meter is expected to be counting (the current ones, or newer ones seen in the store). */
  keyPeriods: Periods;
  workspacePeriods: Periods;
  createdAt: string;
  expiresAt: string;
}

/** The stored state of an item whose condition failed, for the Ledger to diagnose. */
export type Failed = { item: Record<string, unknown> | undefined };

export type ReserveOutcome =
  | { kind: 'held'; writeUnits: number }
  | { kind: 'conflict' }
  | { kind: 'failed'; org?: Failed; key?: Failed; workspace?: Failed; duplicate: boolean };

export interface Charge {
  /** Charged to credits (and counted as usage). */
  credits: Nanos;
  /** BYOK spend: counted as BYOK usage, not charged to credits. */
  byok: Nanos;
}

export interface SettleRequest {
  hold: HoldRef;
  charge: Charge;
  keyPeriods: Periods;
  workspacePeriods: Periods;
  /** The generation record item (written only if no record has this id yet). */
  record?: Record<string, unknown>;
  rollup?: RollupDelta;
  /** The key or workspace was deleted while the request ran: charge the organization without its meter. */
  skipKey?: boolean;
  skipWorkspace?: boolean;
}

export interface RollupDelta {
  key: { pk: string; sk: string };
  /** Plain attributes (dimensions, ttl), SET on every update. */
  dimensions: Record<string, string | number>;
  /** Counters, ADDed. */
  counters: Record<string, number | bigint>;
}

export type SettleOutcome =
  | { kind: 'settled'; writeUnits: number }
  | { kind: 'already' }
  | { kind: 'conflict' }
  | { kind: 'stale'; key?: Failed; workspace?: Failed }
  | { kind: 'hold-missing' };

export interface StoredHold extends HoldRef {
  createdAt: string;
  expiresAt: string;
}

const TOKEN_MAX = 36;

/** DynamoDB's idempotency token for a transaction (≤ 36 characters): the SDK's own retries reuse it. */
function token(kind: string, generationId: string, attempt: number): string {
  return `${kind}${attempt}-${generationId.slice(-(TOKEN_MAX - kind.length - String(attempt).length - 1))}`;
}

function writeUnits(consumed: ConsumedCapacity[] | undefined): number {
  return (consumed ?? []).reduce((sum, entry) => sum + (entry.WriteCapacityUnits ?? entry.CapacityUnits ?? 0), 0);
}

function reasonItem(reason: CancellationReason | undefined): Failed | undefined {
  if (reason?.Code !== 'ConditionalCheckFailed') return undefined;
  return { item: reason.Item ? unmarshall(reason.Item) : undefined };
}

function isConflict(reasons: CancellationReason[] | undefined): boolean {
  return (reasons ?? []).some((reason) => reason.Code === 'TransactionConflict');
}

export function shardOf(generationId: string): number {
  let hash = 0;
  for (let i = 0; i < generationId.length; i += 1) hash = (hash * 31 + generationId.charCodeAt(i)) >>> 0;
  return hash % HOLD_SHARDS;
}

/** Condition that the meter counts the expected windows (legacy items without periods fail it and get rolled). */
function periodsCondition(periods: Periods, names: Record<string, string>, values: Record<string, unknown>): string {
  return INTERVALS.map((interval) => {
    names[`#p_${interval}`] = meterAttr.period(interval);
    values[`:p_${interval}`] = periods[interval];
    return `#p_${interval} = :p_${interval}`;
  }).join(' AND ');
}

/** ADD clauses moving a meter: held, usage and BYOK usage in every window, and both exposure sums. */
function meterAdds(delta: { held: Nanos; usage: Nanos; byok: Nanos }, names: Record<string, string>, values: Record<string, unknown>): string[] {
  const adds: string[] = [];
  const add = (attribute: string, amount: Nanos) => {
    // `held` is always written (even + 0), so the expression is never empty (a free request, a late zero charge).
    if (amount === 0n && attribute !== meterAttr.held) return;
    const placeholder = attribute.replace(/[^a-z0-9_]/g, '');
    names[`#${placeholder}`] = attribute;
    values[`:${placeholder}`] = nanosToStore(amount);
    adds.push(`#${placeholder} :${placeholder}`);
  };
  add(meterAttr.held, delta.held);
  for (const window of WINDOWS) {
    add(meterAttr.usage(window), delta.usage);
    add(meterAttr.byok(window), delta.byok);
    add(meterAttr.exposure(window, false), delta.usage + delta.held);
    add(meterAttr.exposure(window, true), delta.usage + delta.byok + delta.held);
  }
  return adds;
}

function updateExpression(adds: string[], sets: string[] = []): string {
  return [adds.length ? `ADD ${adds.join(', ')}` : '', sets.length ? `SET ${sets.join(', ')}` : ''].filter(Boolean).join(' ');
}

export class LedgerRepository {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string) {}

  async reserve(request: HoldRequest, attempt: number): Promise<ReserveOutcome> {
    const amount = request.amount;
    const hold = {
      ...itemKeys.hold(request.generationId),
      ...itemKeys.holdListing(shardOf(request.generationId), request.expiresAt, request.generationId),
      type: 'hold',
      generation_id: request.generationId,
      org_id: request.orgId,
      workspace_id: request.workspaceId,
      key_hash: request.keyHash,
      amount: nanosToStore(amount),
      created_at: request.createdAt,
      expires_at: request.expiresAt,
    };

    const keyNames: Record<string, string> = { '#sv': 'settings_version' };
    const keyValues: Record<string, unknown> = { ':sv': request.key.settingsVersion };
    const keyConditions = [
      request.key.settingsVersion === 0 ? '(attribute_not_exists(#sv) OR #sv = :sv)' : '#sv = :sv',
      periodsCondition(request.keyPeriods, keyNames, keyValues),
    ];
    if (request.key.limit) {
      keyNames['#limit_exp'] = meterAttr.exposure(request.key.limit.window, request.key.limit.withByok);
      keyValues[':ceiling'] = nanosToStore(request.key.limit.amount - amount);
      keyConditions.push('#limit_exp <= :ceiling');
    }
    const keyAdds = meterAdds({ held: amount, usage: 0n, byok: 0n }, keyNames, keyValues);

    const wsNames: Record<string, string> = { '#bv': 'budget_version' };
    const wsValues: Record<string, unknown> = { ':bv': request.workspace.budgetVersion };
    const wsConditions = [
      request.workspace.budgetVersion === 0 ? '(attribute_not_exists(#bv) OR #bv = :bv)' : '#bv = :bv',
      periodsCondition(request.workspacePeriods, wsNames, wsValues),
    ];
    for (const budget of request.workspace.budgets) {
      wsNames[`#b_${budget.interval}`] = meterAttr.exposure(budget.interval, request.workspace.withByok);
      wsValues[`:b_${budget.interval}`] = nanosToStore(budget.limit - amount);
      wsConditions.push(`#b_${budget.interval} <= :b_${budget.interval}`);
    }
    const wsAdds = meterAdds({ held: amount, usage: 0n, byok: 0n }, wsNames, wsValues);

    try {
      const result = await this.db.send(new TransactWriteCommand({
        ClientRequestToken: token('r', request.generationId, attempt),
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
          {
            Update: {
              TableName: this.tableName,
              Key: itemKeys.apiKey(request.keyHash),
              UpdateExpression: updateExpression(keyAdds),
              ConditionExpression: keyConditions.join(' AND '),
              ExpressionAttributeNames: keyNames,
              ExpressionAttributeValues: keyValues,
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
          {
            Update: {
              TableName: this.tableName,
              Key: itemKeys.workspace(request.orgId, request.workspaceId),
              UpdateExpression: updateExpression(wsAdds),
              ConditionExpression: wsConditions.join(' AND '),
              ExpressionAttributeNames: wsNames,
              ExpressionAttributeValues: wsValues,
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
        ],
      }));
      return { kind: 'held', writeUnits: writeUnits(result.ConsumedCapacity) };
    } catch (err) {
      if (!(err instanceof TransactionCanceledException)) throw err;
      const reasons = err.CancellationReasons;
      if (isConflict(reasons)) return { kind: 'conflict' };
      const org = reasonItem(reasons?.[1]);
      const key = reasonItem(reasons?.[2]);
      const workspace = reasonItem(reasons?.[3]);
      return {
        kind: 'failed',
        duplicate: reasons?.[0]?.Code === 'ConditionalCheckFailed',
        ...(org ? { org } : {}),
        ...(key ? { key } : {}),
        ...(workspace ? { workspace } : {}),
      };
    }
  }

  /**
   * Settles (record given) or releases (no record) a hold. With `late`, the hold is known to be gone (swept
   * after its expiry) and the charge is applied without it; the generation record is then the idempotency key.
   */
  async settle(request: SettleRequest, attempt: number, late = false): Promise<SettleOutcome> {
    const { hold, charge } = request;
    const heldDelta = late ? 0n : -hold.amount;
    const meter = (periods: Periods) => {
      const names: Record<string, string> = {};
      const values: Record<string, unknown> = {};
      const condition = periodsCondition(periods, names, values);
      const adds = meterAdds({ held: heldDelta, usage: charge.credits, byok: charge.byok }, names, values);
      return { names, values, condition, adds };
    };
    const keyMeter = meter(request.keyPeriods);
    const wsMeter = meter(request.workspacePeriods);
    const orgAdds: string[] = [];
    const orgValues: Record<string, unknown> = {};
    const orgAdd = (attribute: string, amount: Nanos) => {
      if (amount === 0n && attribute !== 'held') return;
      orgValues[`:${attribute}`] = nanosToStore(amount);
      orgAdds.push(`${attribute} :${attribute}`);
    };
    orgAdd('held', heldDelta);
    orgAdd('balance', -heldDelta - charge.credits);
    orgAdd('total_usage', charge.credits);

    type TransactItem = NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']>[number];
    const items: TransactItem[] = [];
    if (!late) items.push({ Delete: { TableName: this.tableName, Key: itemKeys.hold(hold.generationId), ConditionExpression: 'attribute_exists(pk)' } });
    items.push({
      Update: {
        TableName: this.tableName,
        Key: itemKeys.organization(hold.orgId),
        UpdateExpression: updateExpression(orgAdds),
        ExpressionAttributeValues: orgValues,
      },
    });
    const keyIndex = request.skipKey ? -1 : items.length;
    if (!request.skipKey) items.push({
      Update: {
        TableName: this.tableName,
        Key: itemKeys.apiKey(hold.keyHash),
        UpdateExpression: updateExpression(keyMeter.adds),
        ConditionExpression: `attribute_exists(pk) AND ${keyMeter.condition}`,
        ExpressionAttributeNames: keyMeter.names,
        ExpressionAttributeValues: keyMeter.values,
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    });
    const wsIndex = request.skipWorkspace ? -1 : items.length;
    if (!request.skipWorkspace) items.push({
      Update: {
        TableName: this.tableName,
        Key: itemKeys.workspace(hold.orgId, hold.workspaceId),
        UpdateExpression: updateExpression(wsMeter.adds),
        ConditionExpression: `attribute_exists(pk) AND ${wsMeter.condition}`,
        ExpressionAttributeNames: wsMeter.names,
        ExpressionAttributeValues: wsMeter.values,
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    });
    const recordIndex = items.length;
    if (request.record) items.push({ Put: { TableName: this.tableName, Item: request.record, ConditionExpression: 'attribute_not_exists(pk)' } });
    if (request.rollup) {
      const names: Record<string, string> = {};
      const values: Record<string, unknown> = {};
      const adds: string[] = [];
      const sets: string[] = [];
      Object.entries(request.rollup.counters).forEach(([name, value], i) => {
        if (value === 0 || value === 0n) return;
        names[`#c${i}`] = name;
        values[`:c${i}`] = value;
        adds.push(`#c${i} :c${i}`);
      });
      Object.entries(request.rollup.dimensions).forEach(([name, value], i) => {
        names[`#d${i}`] = name;
        values[`:d${i}`] = value;
        sets.push(`#d${i} = :d${i}`);
      });
      items.push({
        Update: {
          TableName: this.tableName,
          Key: request.rollup.key,
          UpdateExpression: updateExpression(adds, sets),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        },
      });
    }

    try {
      const result = await this.db.send(new TransactWriteCommand({
        ClientRequestToken: token(late ? 'l' : request.record ? 's' : 'x', hold.generationId, attempt),
        ReturnConsumedCapacity: 'TOTAL',
        TransactItems: items,
      }));
      return { kind: 'settled', writeUnits: writeUnits(result.ConsumedCapacity) };
    } catch (err) {
      if (!(err instanceof TransactionCanceledException)) throw err;
      const reasons = err.CancellationReasons ?? [];
      if (isConflict(reasons)) return { kind: 'conflict' };
      if (request.record && reasons[recordIndex]?.Code === 'ConditionalCheckFailed') return { kind: 'already' };
      if (!late && reasons[0]?.Code === 'ConditionalCheckFailed') return request.record ? { kind: 'hold-missing' } : { kind: 'already' };
      const key = reasonItem(reasons[keyIndex]);
      const workspace = reasonItem(reasons[wsIndex]);
      if (key || workspace) return { kind: 'stale', ...(key ? { key } : {}), ...(workspace ? { workspace } : {}) };
      throw err;
    }
  }

  /**
   * Starts new windows on a key or workspace meter whose stored windows are older than `periods`: the
   * window's usage restarts at zero and its exposure at what is held. Concurrent rollers race harmlessly.
   */
  async roll(key: { pk: string; sk: string }, periods: Periods, stored: Partial<Periods>): Promise<void> {
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
    try {
      await this.db.send(new UpdateCommand({
        TableName: this.tableName,
        Key: key,
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: `attribute_exists(pk) AND ${conditions.join(' AND ')}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }));
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    }
  }

  /**
   * Adds the infrastructure cost to a settled generation record and its rollup row, once: a record that
   * already has it is left alone.
   */
  async recordInfrastructure(generationId: string, rollupKey: { pk: string; sk: string }, infra: Record<string, unknown>, totalAtto: bigint, attempt: number): Promise<'recorded' | 'already' | 'conflict'> {
    try {
      await this.db.send(new TransactWriteCommand({
        ClientRequestToken: token('i', generationId, attempt),
        TransactItems: [
          {
            Update: {
              TableName: this.tableName,
              Key: itemKeys.generation(generationId),
              UpdateExpression: 'SET infra = :infra',
              ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(infra)',
              ExpressionAttributeValues: { ':infra': infra },
            },
          },
          {
            Update: {
              TableName: this.tableName,
              Key: rollupKey,
              UpdateExpression: 'ADD infra_atto :total',
              ExpressionAttributeValues: { ':total': nanosToStore(totalAtto) },
            },
          },
        ],
      }));
      return 'recorded';
    } catch (err) {
      if (!(err instanceof TransactionCanceledException)) throw err;
      if (isConflict(err.CancellationReasons)) return 'conflict';
      if (err.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed') return 'already';
      throw err;
    }
  }

  /** Gives an organization item from before balances existed its balance attribute. */
  async addBalance(orgId: string): Promise<void> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.organization(orgId), ConsistentRead: true }));
    if (!Item || Item.balance !== undefined) return;
    const balance = nanosFromStore(Item.total_credits) - nanosFromStore(Item.total_usage) - nanosFromStore(Item.held);
    try {
      await this.db.send(new UpdateCommand({
        TableName: this.tableName,
        Key: itemKeys.organization(orgId),
        UpdateExpression: 'SET balance = :balance',
        // Only if nothing moved since the read: the next attempt reads again.
        ConditionExpression: 'attribute_not_exists(balance) AND attribute_exists(pk)',
        ExpressionAttributeValues: { ':balance': nanosToStore(balance) },
      }));
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    }
  }

  async getHold(generationId: string): Promise<StoredHold | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.hold(generationId), ConsistentRead: true }));
    return Item ? holdFromItem(Item) : undefined;
  }

  /** Holds whose expiry has passed, oldest first, from every shard. */
  async expiredHolds(now: string, limitPerShard = 100): Promise<StoredHold[]> {
    const found: StoredHold[] = [];
    for (let shard = 0; shard < HOLD_SHARDS; shard += 1) {
      const page = await this.db.send(new QueryCommand({
        TableName: this.tableName,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk < :now',
        ExpressionAttributeValues: { ':pk': itemKeys.holdsOf(shard).gsi1pk, ':now': now },
        Limit: limitPerShard,
      }));
      found.push(...(page.Items ?? []).map(holdFromItem));
    }
    return found;
  }
}

function holdFromItem(item: Record<string, unknown>): StoredHold {
  return {
    generationId: item.generation_id as string,
    orgId: item.org_id as string,
    workspaceId: item.workspace_id as string,
    keyHash: item.key_hash as string,
    amount: nanosFromStore(item.amount),
    createdAt: item.created_at as string,
    expiresAt: item.expires_at as string,
  };
}

