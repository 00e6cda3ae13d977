// What DynamoDB Local never does and AWS does whenever two writers touch one item: refuse a transaction for a
// concurrent one. A middleware on a client fails a seeded share of its writes before they are sent (so
// nothing of them is written, as on AWS), and the first two of each kind:
//   TransactWriteItems  TransactionCanceledException whose CancellationReasons name a TransactionConflict
//                       (one item; the others None), or, a share of those, TransactionConflictException
//   UpdateItem on a key, workspace or organization item (a window roll): TransactionConflictException, what
//                       AWS answers a single write on an item a transaction holds, on its first try per item
//                       (a meter's roll always meets the transactions of the requests that crossed the window)
// once started, and counts what it did, by write: a hold or lease taken ('r', 'lease'), a hold released
// ('x'), a lease given back or swept ('l'), pages applied ('a'), and single updates ('update').
import { TransactionCanceledException, TransactionConflictException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { seeded } from './random.js';

export interface ConflictOptions {
  /** Share of the eligible writes failed (0–1). */
  rate: number;
  /** Of those, the share failed with TransactionConflictException instead of a cancellation. */
  exceptionShare: number;
  seed: number;
}

/** One write as the middleware saw it: what it was, its attempt (from its ClientRequestToken) and what was done to it. */
export interface SeenWrite {
  kind: string;
  /** The id in its token (a generation or lease id, shortened), the item's key for an update, '' where nothing names it. */
  id: string;
  attempt: number;
  injected: 'cancelled' | 'exception' | undefined;
}

export interface ConflictInjector {
  seen: SeenWrite[];
  /** Injecting starts here (before, writes pass through uncounted: setting up a test's tenants). */
  start(): void;
  /** Stops injecting (the writes still pass through and are counted). */
  stop(): void;
}

const TOKEN = /^([a-z])(\d+)-(.*)$/;

type TransactItem = { Put?: { Item?: Record<string, unknown> }; Update?: { Key?: Record<string, unknown> }; Delete?: { Key?: Record<string, unknown> } };

/** Which write a transaction is, from its token and first item. */
function transactionKind(input: { ClientRequestToken?: string; TransactItems?: TransactItem[] }): { kind: string; id: string; attempt: number } {
  const match = TOKEN.exec(input.ClientRequestToken ?? '');
  if (!match) return { kind: 'transaction', id: '', attempt: 1 };
  const [, letter, attempt, id] = match;
  const firstPk = String(input.TransactItems?.[0]?.Put?.Item?.pk ?? '');
  const kind = letter === 'r' && firstPk.startsWith('LEASE#') ? 'lease' : letter!;
  // The aggregator's tokens carry a fresh random id per attempt: only their attempt says anything.
  // A reservation's or release's token ends in its own nonce (`.<2 characters>`): the id is what precedes it.
  return { kind, id: letter === 'a' ? '' : id!.replace(/\.[A-Za-z0-9_-]{0,2}$/, ''), attempt: Number(attempt) };
}

/** Items of the meters: organizations, keys, workspaces (not pages, markers, rollups or holds). */
function isMeter(key: Record<string, unknown> | undefined): boolean {
  const pk = String(key?.pk ?? '');
  const sk = String(key?.sk ?? '');
  return (pk.startsWith('KEY#') && sk === 'KEY') || (pk.startsWith('ORG#') && !pk.endsWith('#RU') && (sk === 'ORG' || sk.startsWith('WS#')));
}

export function injectTransactionConflicts(db: DynamoDBDocumentClient, options: ConflictOptions): ConflictInjector {
  const random = seeded(options.seed);
  const seen: SeenWrite[] = [];
  const updated = new Set<string>();
  let active = false;
  let counting = false;
  db.middlewareStack.add((next, context) => async (args) => {
    const input = args.input as Record<string, unknown>;
    let write: Omit<SeenWrite, 'injected'> | undefined;
    const key = input.Key as Record<string, unknown> | undefined;
    if (context.commandName === 'TransactWriteItemsCommand') write = transactionKind(input as { ClientRequestToken?: string; TransactItems?: TransactItem[] });
    else if (context.commandName === 'UpdateItemCommand' && isMeter(key)) write = { kind: 'update', id: `${String(key!.pk)}/${String(key!.sk)}`, attempt: 1 };
    if (!write || !counting) return next(args);
    let injected: SeenWrite['injected'];
    if (active && write.kind === 'update') {
      if (!updated.has(write.id)) injected = 'exception';
      updated.add(write.id);
    } else if (active) {
      // Each kind's first write is cancelled and its second refused with the exception, whatever the draw:
      // every kind meets both; the rest as drawn.
      const before = seen.filter((earlier) => earlier.kind === write!.kind).length;
      if (before < 2) injected = before === 0 ? 'cancelled' : 'exception';
      else if (random() < options.rate) injected = random() < options.exceptionShare ? 'exception' : 'cancelled';
    }
    seen.push({ ...write, injected });
    if (injected === 'exception') {
      throw new TransactionConflictException({ message: 'Transaction is ongoing for the item', $metadata: { httpStatusCode: 400 } });
    }
    if (injected === 'cancelled') {
      const items = (input.TransactItems as unknown[]).length;
      const at = Math.floor(random() * items);
      throw new TransactionCanceledException({
        message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${Array.from({ length: items }, (_, i) => (i === at ? 'TransactionConflict' : 'None')).join(', ')}]`,
        $metadata: { httpStatusCode: 400 },
        CancellationReasons: Array.from({ length: items }, (_, i) => (i === at ? { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' } : { Code: 'None' })),
      });
    }
    return next(args);
  }, { step: 'initialize', name: 'injectTransactionConflicts' });
  return { seen, start: () => { active = true; counting = true; }, stop: () => { active = false; } };
}
