// AWS answers a single write (PutItem, UpdateItem, DeleteItem) on an item that a transaction is writing at
// that moment with TransactionConflictException: nothing was written, and the SDK does not retry it. The
// meter aggregator and lease takes run transactions on the organization, key and workspace items all the
// time, so a key PATCH or a workspace change would now and then fail with a 500 for no fault of the
// caller's (a window roll, which swallows conflicts, would be left for the next request). This middleware
// tries such a write again, a few times with a short jittered backoff, before the error reaches the
// caller. Transactions are left alone: their callers decide (a cancelled transaction may need its amounts
// read again); `transactRetryingConflicts` is the loop of those that only need to send it again. DynamoDB
// Local never reports conflicts; the unit tests inject them.
import { setTimeout as delay } from 'node:timers/promises';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { cancellationOf, type Cancellation } from './write-failures.js';

/** Tries in all, the first included. */
export const CONFLICT_ATTEMPTS = 5;
const BASE_DELAY_MS = 10;

const SINGLE_WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand']);

export function retryTransactionConflicts(client: DynamoDBClient, sleep: (ms: number) => Promise<unknown> = delay): DynamoDBClient {
  client.middlewareStack.add((next, context) => async (args) => {
    if (!SINGLE_WRITES.has(context.commandName ?? '')) return next(args);
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await next(args);
      } catch (err) {
        if ((err as { name?: string }).name !== 'TransactionConflictException' || attempt >= CONFLICT_ATTEMPTS) throw err;
        const cap = BASE_DELAY_MS * 2 ** (attempt - 1);
        await sleep(cap / 2 + Math.random() * cap / 2);
      }
    }
  }, { step: 'initialize', name: 'retryTransactionConflicts' });
  return client;
}

/**
 * A transaction, sent again while a concurrent transaction is in its way (a doubling, jittered wait: 5 ms,
 * then up to 200 ms), at most `attempts` times in all. Resolves undefined once written, or with the
 * refusal when `outcome` (by default: any refusal but a conflict) takes it as the caller's answer; any
 * other failure is rethrown, and a conflict left after the last attempt is rethrown or, with `busy`, the
 * error that makes.
 */
export async function transactRetryingConflicts(
  send: () => Promise<unknown>,
  options: { attempts: number; outcome?: (refusal: Cancellation) => boolean; busy?: () => Error; sleep?: (ms: number) => Promise<void> },
): Promise<Cancellation | undefined> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await send();
      return undefined;
    } catch (err) {
      const cancellation = cancellationOf(err);
      if (!cancellation) throw err;
      if (options.outcome ? options.outcome(cancellation) : !cancellation.conflict) return cancellation;
      if (!cancellation.conflict) throw err;
      if (attempt >= options.attempts) throw options.busy?.() ?? err;
      const cap = Math.min(200, 5 * 2 ** attempt);
      await (options.sleep ?? delay)(cap / 2 + (Math.random() * cap) / 2);
    }
  }
}
