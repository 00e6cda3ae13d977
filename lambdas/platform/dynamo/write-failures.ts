// Decoding of refused writes, so that repositories turn them into outcomes of their own (as Powertools'
// DynamoDBPersistenceLayer does): a failed condition of a single write, and a cancelled transaction's
// reasons — which item's condition failed (with the item as stored, when ALL_OLD was asked for) and whether
// a concurrent transaction was in the way.
//
// A concurrent transaction shows in two ways: a cancelled transaction's TransactionConflict reason, and
// TransactionConflictException, which AWS answers a single write on an item a transaction is writing
// (DynamoDB Local reports neither). Both wrote nothing, and the SDK retries neither: our client tries a
// single write again a few times (conflict-retry.ts) and the callers of transactions decide for themselves.
import { ConditionalCheckFailedException, TransactionCanceledException, TransactionConflictException, type CancellationReason } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

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

/** A concurrent transaction held the item (TransactionConflictException): nothing was written, and trying again may succeed. */
export function isTransactionConflict(err: unknown): err is TransactionConflictException {
  return err instanceof TransactionConflictException;
}

/**
 * The write's result, or `otherwise` when it did not happen for now: its condition did not hold, or a
 * concurrent transaction held the item (for writes whose caller tries again, as a window roll's does).
 */
export async function unlessConditionFailsOrConflicts<T, U>(write: Promise<T>, otherwise: U): Promise<T | U> {
  try {
    return await write;
  } catch (err) {
    if (isConditionFailed(err) || isTransactionConflict(err)) return otherwise;
    throw err;
  }
}

/**
 * DynamoDB will refuse the same request again whatever the wait: the table is gone, the request is malformed
 * or the caller may not make it. Callers that keep trying (a release after the reply) give up at once.
 */
export function isPermanentStoreFailure(err: unknown): boolean {
  return err instanceof Error && PERMANENT_FAILURES.has(err.name);
}
const PERMANENT_FAILURES = new Set(['ResourceNotFoundException', 'ValidationException', 'AccessDeniedException', 'UnrecognizedClientException']);

/** Cancellation reasons after which the same transaction may go through when sent again. */
const TRY_AGAIN = new Set(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded']);

/** Why a transaction was cancelled, item by item (in the order of its TransactItems). */
export class Cancellation {
  /** `conflicted`: refused whole for a concurrent transaction, with no reasons item by item. */
  constructor(private readonly reasons: readonly CancellationReason[], private readonly conflicted = false) {}

  /**
   * A concurrent transaction held one of the items, or one of them was throttled (DynamoDB cancels the
   * whole transaction then, naming no failed condition): trying again after a moment may succeed.
   */
  get conflict(): boolean {
    return this.conflicted || this.reasons.some((reason) => reason.Code !== undefined && TRY_AGAIN.has(reason.Code));
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

/**
 * The reasons of a cancelled transaction, or undefined for any other failure (which the caller rethrows). A
 * TransactionConflictException is a conflict too, so every transaction's conflict path (back off, try
 * again) takes it.
 */
export function cancellationOf(err: unknown): Cancellation | undefined {
  if (err instanceof TransactionCanceledException) return new Cancellation(err.CancellationReasons ?? []);
  if (isTransactionConflict(err)) return new Cancellation([], true);
  return undefined;
}

/**
 * Puts an item that is new, or (with `replacing`) that replaces the version read (its `updated_at`); false
 * when the item exists already, or another change was stored since that read.
 */
export function putVersioned(db: DynamoDBDocumentClient, tableName: string, item: Record<string, unknown>, replacing?: { updated_at: string }): Promise<boolean> {
  return unlessConditionFails(db.send(new PutCommand({
    TableName: tableName,
    Item: item,
    ...(replacing
      ? { ConditionExpression: 'updated_at = :read', ExpressionAttributeValues: { ':read': replacing.updated_at } }
      : { ConditionExpression: 'attribute_not_exists(pk)' }),
  })).then(() => true), false);
}
