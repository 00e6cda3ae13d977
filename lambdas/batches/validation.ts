// The validating step of a batch: reads its whole input once, as a stream, checks every item, and plans the
// work as shards: byte ranges of the stored input, each holding up to `shardItems` runnable items. A worker
// given a shard reads just that range (an S3 ranged GET) and checks its lines again (cheap), so nothing but
// the ranges has to be written between the steps. Bad items go to `onError` as they are found (a 200 MB
// input of bad lines is never held as a list), and no range holds one. A range's line k is the input's
// line firstLine + k - 1.
import { BatchItemChecker, jsonLines, type BatchEndpoint, type CheckedItem } from './input.js';

export interface Shard {
  /** The first input line in the range (1-based). */
  firstLine: number;
  /** Byte range of the stored input: start inclusive, end exclusive. */
  start: number;
  end: number;
  /** Items in the range: all of them runnable (blank lines aside, a range holds nothing else). */
  items: number;
}

export interface ValidatedInput {
  /** Items in the input (runnable and not). */
  total: number;
  /** The last item's line number (blank lines count); 0 for an input without items. */
  lastLine: number;
  runnable: number;
  failed: number;
  /** The model every runnable item names, or null when they differ (or name `models` only). */
  model: string | null;
  shards: Shard[];
  bytes: number;
}

export const SHARD_ITEMS = 100;

export async function validateBatchInput(
  source: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
  endpoint: BatchEndpoint,
  options: {
    onError: (item: Extract<CheckedItem, { kind: 'error' }>) => void | Promise<void>;
    /** Each runnable item, as it is found (what the batch's maximum cost is summed from). */
    onItem?: (item: Extract<CheckedItem, { kind: 'item' }>) => void;
    shardItems?: number; maxBytes?: number; model?: string | null;
  },
): Promise<ValidatedInput> {
  const shardItems = Math.max(1, options.shardItems ?? SHARD_ITEMS);
  const checker = new BatchItemChecker(endpoint, { model: options.model ?? null });
  const shards: Shard[] = [];
  let open: Shard | undefined;
  let total = 0;
  let lastLine = 0;
  let runnable = 0;
  let failed = 0;
  let bytes = 0;
  let model: string | null | undefined;
  for await (const line of jsonLines(source, options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes })) {
    total += 1;
    lastLine = line.number;
    bytes = line.offset + line.bytes;
    const checked = checker.checkLine(line);
    if (checked.kind === 'error') {
      failed += 1;
      // A range never holds a bad line: a worker, checking only its range, could not tell a duplicate of an
      // item in another range from a good item.
      open = undefined;
      await options.onError(checked);
      continue;
    }
    runnable += 1;
    options.onItem?.(checked);
    const named = typeof checked.body.model === 'string' ? checked.body.model : null;
    model = model === undefined ? named : model === named ? model : null;
    if (!open || open.items >= shardItems) {
      open = { firstLine: line.number, start: line.offset, end: line.offset + line.bytes, items: 0 };
      shards.push(open);
    }
    open.items += 1;
    open.end = line.offset + line.bytes;
  }
  return { total, lastLine, runnable, failed, model: model ?? null, shards, bytes };
}
