// Pages in DynamoDB: one item per page (GENS#<block>, P#<seq>), its records as a list of maps with the
// money each moves. A page is written once and never changed; the aggregator reads it from the stream.
import { PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { isConditionFailed } from '../platform/dynamo/write-failures.js';
import { nanosFromStore, nanosToStore } from '../platform/money.js';
import { recordFromAttributes, recordToAttributes, type GenerationRecord } from './generation-record.js';
import { blockOf, type Claim, type Page, type PageEntry, type PageStore } from './pages.js';

function claimToItem(claim: Claim): Record<string, unknown> {
  return { ...claim, amount: nanosToStore(claim.amount) };
}

function claimFromItem(item: unknown): Claim {
  const claim = item as Record<string, unknown>;
  const amount = nanosFromStore(claim.amount);
  if (claim.kind === 'lease') return { kind: 'lease', leaseId: String(claim.leaseId), amount };
  if (claim.kind === 'hold') return { kind: 'hold', amount };
  throw new Error(`unknown claim kind ${String(claim.kind)}`);
}

export function pageToItem(page: Page): Record<string, unknown> {
  return {
    ...itemKeys.page(page.block, page.seq),
    type: 'page',
    written_at: page.writtenAt ?? Date.now(),
    records: page.entries.map((entry) => ({ ...recordToAttributes(entry.record), claim: claimToItem(entry.claim) })),
  };
}

/** A page from its item (as the stream's NEW_IMAGE or a read gives it). */
export function pageFromItem(item: Record<string, unknown>): Page {
  const block = String(item.pk).slice(itemKeys.pagesOf('').pk.length);
  const seq = Number(String(item.sk).slice(itemKeys.pageSortPrefix.length));
  const entries: PageEntry[] = (item.records as Array<Record<string, unknown>>).map((stored) => {
    const { claim, ...record } = stored;
    return { record: recordFromAttributes(record), claim: claimFromItem(claim) };
  });
  return { block, seq, entries, ...(typeof item.written_at === 'number' ? { writtenAt: item.written_at } : {}) };
}

export class PageRepository implements PageStore {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string) {}

  async put(page: Page): Promise<{ writeUnits: number }> {
    try {
      const result = await this.db.send(new PutCommand({
        TableName: this.tableName,
        Item: pageToItem(page),
        // A retry of a write that did land (its reply was lost) finds the page there: stored all the same.
        ConditionExpression: 'attribute_not_exists(pk)',
        ReturnConsumedCapacity: 'TOTAL',
      }));
      return { writeUnits: result.ConsumedCapacity?.WriteCapacityUnits ?? result.ConsumedCapacity?.CapacityUnits ?? 0 };
    } catch (err) {
      if (isConditionFailed(err)) return { writeUnits: 0 };
      throw err;
    }
  }

  /** The record of a generation, from its block's pages: one Query of at most BLOCK_SIZE records. */
  async find(generationId: string): Promise<GenerationRecord | undefined> {
    const block = blockOf(generationId);
    if (block === undefined) return undefined;
    let start: Record<string, unknown> | undefined;
    do {
      const result = await this.db.send(new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :pages)',
        ExpressionAttributeValues: { ':pk': itemKeys.pagesOf(block).pk, ':pages': itemKeys.pageSortPrefix },
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }));
      for (const item of result.Items ?? []) {
        const found = (item.records as Array<Record<string, unknown>>).find((record) => record.id === generationId);
        if (found) {
          const { claim: _claim, ...record } = found;
          return recordFromAttributes(record);
        }
      }
      start = result.LastEvaluatedKey;
    } while (start);
    return undefined;
  }
}
