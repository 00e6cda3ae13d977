// Decoding of refused writes, so that repositories turn them into outcomes of their own (as Powertools'
// DynamoDBPersistenceLayer does): a failed condition of a single write, and a cancelled transaction's
// reasons — which item's condition failed (with the item as stored, when ALL_OLD was asked for) and whether
// a concurrent transaction was in the way.
import { ConditionalCheckFailedException, TransactionCanceledException, type CancellationReason } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';

/** The write's condition did not hold (ConditionalCheckFailedException). */
export function isConditionFailed(err: unknown): err is ConditionalCheckFailedException {
  return err instanceof ConditionalCheckFailedException;
}

/** The write's result, or `otherwise` when its condition did not hold; any other failure is rethrown. */
export async function unlessConditionFails<T, U>(write: Promise<T>, otherwise: U): Promise<T | U> {
  try {
    return await write;
  } catch (err) {
    if (isConditionFailed(err)) return otherwise;
    throw err;
  }
}

/** Why a transaction was cancelled, item by item (in the order of its TransactItems). */
export class Cancellation {
  constructor(private readonly reasons: readonly CancellationReason[]) {}

  /** A concurrent transaction held one of the items: trying again may succeed. */
  get conflict(): boolean {
    return this.reasons.some((reason) => reason.Code === 'TransactionConflict');
  }

  /** The condition of the item at `index` did not hold (false for an index < 0: an item left out). */
  failedAt(index: number): boolean {
    return index >= 0 && this.reasons[index]?.Code === 'ConditionalCheckFailed';
  }

  /**
   * The item at `index` as stored when its condition failed: undefined when its condition held, `{ item:
   * undefined }` when there was no such item (or ReturnValuesOnConditionCheckFailure was not ALL_OLD).
   */
  stored(index: number): { item: Record<string, unknown> | undefined } | undefined {
    if (!this.failedAt(index)) return undefined;
    const old = this.reasons[index]!.Item;
    return { item: old ? unmarshall(old) : undefined };
  }
}

/** The reasons of a cancelled transaction, or undefined for any other failure (which the caller rethrows). */
export function cancellationOf(err: unknown): Cancellation | undefined {
  return err instanceof TransactionCanceledException ? new Cancellation(err.CancellationReasons ?? []) : undefined;
}
