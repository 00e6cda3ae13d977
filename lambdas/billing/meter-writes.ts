// The pieces of a meter write that the ledger's transactions (ledger-repository.ts) and the aggregator's
// (aggregator-repository.ts) share: conditions on a meter's windows, the ADDs that move it, transaction
// tokens and the capacity a write reports.
import type { ConsumedCapacity } from '@aws-sdk/client-dynamodb';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import type { UpdateBuilder } from '../platform/dynamo/update-builder.js';
import { nanosToStore, type Nanos } from '../platform/money.js';
import { meterAttr } from './meter-item.js';
import { WINDOWS } from './meter.js';
import { INTERVALS, type Periods } from './periods.js';

/** The meter of a key or of a workspace, or one a request's spend also counts on (spend-meters.ts). */
export type MeterRef = { of: 'key'; hash: string } | { of: 'workspace'; orgId: string; workspaceId: string } | ExtraMeterRef;

/**
 * A meter beyond the key's and the workspace's: an end user's (on its record, one per registration: the
 * same id registered again after a delete is another meter, which holds and records of the first never
 * touch), or a member's (a guardrail's limit).
 */
export type ExtraMeterRef = { of: 'end-user'; orgId: string; userHash: string; epoch: string } | { of: 'member'; orgId: string; userId: string };

const TOKEN_MAX = 36;

/** DynamoDB's idempotency token for a transaction (≤ 36 characters): the SDK's own retries reuse it. */
export function token(kind: string, id: string, attempt: number): string {
  return `${kind}${attempt}-${id.slice(-(TOKEN_MAX - kind.length - String(attempt).length - 1))}`;
}

export function writeUnits(consumed: ConsumedCapacity[] | undefined): number {
  return (consumed ?? []).reduce((sum, entry) => sum + (entry.WriteCapacityUnits ?? entry.CapacityUnits ?? 0), 0);
}

/** Condition that the meter counts the expected windows (legacy items without periods fail it and get rolled). */
export function periodsCondition(update: UpdateBuilder, periods: Periods): string {
  return INTERVALS.map((interval) => `${update.name(meterAttr.period(interval), `p_${interval}`)} = ${update.value(`p_${interval}`, periods[interval])}`).join(' AND ');
}

/** ADDs moving a meter: held, usage and BYOK usage in every window, and both exposure sums. */
export function meterAdds(update: UpdateBuilder, delta: { held: Nanos; usage: Nanos; byok: Nanos }): UpdateBuilder {
  const add = (attribute: string, amount: Nanos) => {
    // `held` is always written (even + 0), so the expression is never empty (a free request, a late zero charge).
    if (amount === 0n && attribute !== meterAttr.held) return;
    update.add(attribute, nanosToStore(amount));
  };
  add(meterAttr.held, delta.held);
  for (const window of WINDOWS) {
    add(meterAttr.usage(window), delta.usage);
    add(meterAttr.byok(window), delta.byok);
    add(meterAttr.exposure(window, false), delta.usage + delta.held);
    add(meterAttr.exposure(window, true), delta.usage + delta.byok + delta.held);
  }
  return update;
}

export function meterKey(meter: MeterRef): { pk: string; sk: string } {
  switch (meter.of) {
    case 'key': return itemKeys.apiKey(meter.hash);
    case 'workspace': return itemKeys.workspace(meter.orgId, meter.workspaceId);
    case 'end-user': return itemKeys.endUserRecord(meter.orgId, meter.userHash, meter.epoch);
    case 'member': return itemKeys.memberMeter(meter.orgId, meter.userId);
  }
}

/** One string per extra meter (a map key, a transaction item's name). */
export function extraMeterId(meter: ExtraMeterRef): string {
  return meter.of === 'end-user' ? `end-user ${meter.orgId}/${meter.userHash}#${meter.epoch}` : `member ${meter.orgId}/${meter.userId}`;
}
