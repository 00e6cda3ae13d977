// The items applying a page writes, named so that records and pages sharing one count it once: its block's
// applied-marker, and per record its organization, key, workspace, rollup row, and its hold or its lease
// (a record that held nothing has neither).
// The aggregator groups pages by them within DynamoDB's 100 items per transaction (aggregation.ts); the page
// writer (pages.ts) keeps each page within that limit, since a page is applied whole or not at all.
import { itemKeys } from '../platform/dynamo/item-keys.js';
import type { GenerationRecord } from './generation-record.js';
import { hourOf } from './rollups.js';
import { extraMeterId } from './meter-writes.js';

/** DynamoDB's limit on the items of one TransactWriteItems. */
export const MAX_TRANSACTION_ITEMS = 100;

type Claimed = { record: GenerationRecord; claim: { kind: 'hold' | 'none' } | { kind: 'lease'; leaseId: string } };

export const markerItem = (block: string): string => `marker ${block}`;

export function entryItems({ record, claim }: Claimed): string[] {
  const rollup = itemKeys.rollup(record.org_id, hourOf(record.created_at), record.workspace_id, record.key_hash, record.model, record.provider);
  const items = [`org ${record.org_id}`, `key ${record.key_hash}`, `ws ${record.org_id}/${record.workspace_id}`, `rollup ${rollup.pk}|${rollup.sk}`];
  for (const charge of record.spend_meters ?? []) items.push(`meter ${extraMeterId(charge.meter)}`);
  if (claim.kind === 'hold') items.push(`hold ${record.id}`);
  else if (claim.kind === 'lease') items.push(`lease ${claim.leaseId}`);
  return items;
}
