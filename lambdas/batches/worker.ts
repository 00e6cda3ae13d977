// The steps of a batch, each safe to run twice (SQS delivers at least once; Step Functions retries a Task
// that failed, and a crashed step runs again):
//   validate: reads the stored input once (a stream), records each bad item's error, plans the shards, moves
//             the batch to in_progress, then queues the shards on SQS (state machine, batches/state-machine.ts);
//   shard:    runs the runnable items of one byte range of the input through the inference core (the
//             item runner), skipping those with a result already; each result is recorded and counted once
//             (an SQS message to the worker function);
//   check:    ends the batch when every item has a result (finalizing: the results file; then completed),
//             when it was cancelled (cancelling → cancelled) or when its window passed (expired); otherwise
//             the state machine waits and checks again;
//   fail:     a step that kept failing: the batch fails, saying so.
import type { Logger } from '../platform/logger.js';
import { TooLargeError, InvalidInputError } from '../platform/errors.js';
import type { BatchObjects } from './batch-objects.js';
import type { BatchMessage, BatchQueue } from './batch-queue.js';
import type { BatchStepInput, BatchStepOutput } from './state-machine.js';
import { NO_USAGE, type BatchRecord, type BatchRepository } from './batch-repository.js';
import { BatchItemChecker, jsonLines, MAX_BATCH_INPUT_BYTES, type CheckedItem } from './input.js';
import { BatchStateError, isTerminal, type BatchEvent } from './lifecycle.js';
import { resultLines, type BatchResultRepository } from './result-repository.js';
import type { ItemCommitter } from './item-commits.js';
import type { BatchResult } from './schemas.js';
import { validateBatchInput, type Shard } from './validation.js';
import { MAX_PROVIDER_BATCH_ITEMS, type BatchItem, type BatchLeasePort, type ProviderBatchPort, type SubmittedBatch } from './provider-port.js';
import type { BatchLeaseRef, ProviderBatchRef, StoredPricing } from './batch-repository.js';
import { NEVER_ABORTED } from '../inference/attempts.js';
import { anthropicErrorType } from '../platform/http/anthropic-error-type.js';

export type { BatchItem } from './provider-port.js';

/**
 * Runs one item through the inference core and commits its end once (its result, its generation record and
 * the batch's counts together: item-commits.ts). Throws ItemBusyError when another run of it is in flight.
 */
export type ItemRunner = (batch: BatchRecord, item: BatchItem, signal: AbortSignal) => Promise<void>;

/** Another run of the item holds it now (its exact hold): the item is left to that run. */
export class ItemBusyError extends Error {
  constructor(readonly generationId: string) {
    super(`another run of batch item ${generationId} is in flight`);
    this.name = 'ItemBusyError';
  }
}

export interface BatchWorkerPorts {
  batches: Pick<BatchRepository, 'get' | 'move' | 'plan' | 'claimLease' | 'leaseReturned'>;
  results: Pick<BatchResultRepository, 'page' | 'linesDone'>;
  /** Where an item's end is written once (bad items' errors here; run items' by the item runner). */
  commits: Pick<ItemCommitter, 'commit'>;
  objects: Pick<BatchObjects, 'read' | 'readRange' | 'writeOutput'>;
  queue: BatchQueue;
  runItem: ItemRunner;
  clock: () => Date;
  log: Logger;
  /** Seconds before the first check of a running batch; the wait grows from it to MAX_CHECK_WAIT_SECONDS. */
  checkEverySeconds: number;
  /** Items of one shard run at once. */
  itemConcurrency: number;
  /** Items per shard (validation.ts SHARD_ITEMS by default). */
  shardItems?: number;
  /**
   * Seconds an item already running may still take (its request's deadline and a state check): a cancelled or
   * expired batch ends that long after the cancel or its window, once the items that were running when it
   * stopped have committed, so that its results file holds them all and nothing moves after it ended.
   */
  settleSeconds: number;
  /** The lease that covers a batch's maximum cost before its items run (absent: items reserve as live requests do). */
  leases?: BatchLeasePort;
  /** Runs a batch at a provider's own batch service when all its items can go there (absent: never; needs `leases`). */
  provider?: ProviderBatchPort;
}

/** A step that cannot run yet (a shard of a batch still validating): its message comes back later. */
export class NotYetError extends Error {}

/** The longest wait between two checks: a day's batch takes at most some 1,440 checks (Step Functions keeps 25,000 events of an execution). */
export const MAX_CHECK_WAIT_SECONDS = 60;

/** How long past a batch's deadline a provider that cannot be reached is waited for before its batch is given up. */
const PROVIDER_GIVE_UP_S = 60 * 60;

export class BatchWorker {
  private stopping = false;

  constructor(private readonly deps: BatchWorkerPorts) {}

  private nowSeconds(): number {
    return Math.floor(this.deps.clock().getTime() / 1000);
  }

  /**
   * Moves the batch; when another step moved it first (a twin of this step, a cancel, the expiry) and the
   * event no longer applies, the batch as that step left it.
   */
  private async move(id: string, event: BatchEvent, at: number, details: Parameters<BatchRepository['move']>[3] = {}): Promise<BatchRecord | undefined> {
    try {
      return await this.deps.batches.move(id, event, at, details);
    } catch (err) {
      if (err instanceof BatchStateError) return this.deps.batches.get(id);
      throw err;
    }
  }

  /** A queued step (a shard of items). */
  async handle(message: BatchMessage): Promise<void> {
    const batch = await this.deps.batches.get(message.batch_id);
    if (!batch) {
      this.deps.log.warn('batch message for a batch that does not exist', { batch_id: message.batch_id });
      return;
    }
    await this.shard(batch, message.shard);
  }

  /** A step of the state machine. */
  async step(input: BatchStepInput): Promise<BatchStepOutput> {
    const batch = await this.deps.batches.get(input.batch_id);
    if (!batch) return { batch_id: input.batch_id, status: 'deleted', ended: true, wait_seconds: 0 };
    const after = input.step === 'validate' ? await this.validate(batch, input.requeue === true)
      : input.step === 'check' ? await this.check(batch)
      : await this.fail(batch, input.error);
    // The wait grows by a quarter a check, to ten times the first (a minute at most): a long batch takes few
    // checks, a short one ends soon after its last item.
    const longest = Math.min(MAX_CHECK_WAIT_SECONDS, this.deps.checkEverySeconds * 10);
    const wait = input.step === 'check' && input.wait_seconds ? Math.min(longest, Math.ceil(input.wait_seconds * 1.25)) : this.deps.checkEverySeconds;
    return { batch_id: batch.id, status: after.status, ended: isTerminal(after.status), wait_seconds: Math.max(1, wait) };
  }

  private async validate(batch: BatchRecord, requeue: boolean): Promise<BatchRecord> {
    // Done before (a redelivery), unless it stopped between moving the batch and queueing its shards.
    if (batch.status !== 'validating' && !(batch.status === 'in_progress' && (!batch.queued || requeue))) return batch;
    if (batch.input.kind !== 's3') throw new Error(`batch ${batch.id} has no stored input`);
    const { key } = batch.input;
    let validated;
    // Bad items' results, committed like any item's end (grouped by the committer), a thousand in flight at most.
    let bad: Array<Promise<unknown>> = [];
    const settle = async () => {
      const group = bad;
      bad = [];
      await Promise.all(group);
    };
    // What every runnable item would reserve live: the batch's maximum cost, covered before any item runs.
    const leases = this.deps.leases;
    let maximum = 0n;
    // The runnable items, kept while the batch may go to a provider's batch service (it then takes at most
    // MAX_PROVIDER_BATCH_ITEMS of them), so that submitting them needs no second read of the input.
    let kept: BatchItem[] | undefined = this.deps.provider && batch.status === 'validating' && !batch.provider_batch && batch.model && this.deps.provider.choose(batch) ? [] : undefined;
    const onItem = (checked: BatchItem) => {
      const item = { line: checked.line, customId: checked.customId, body: checked.body };
      if (leases && !batch.lease) maximum += leases.maximum(batch, item);
      if (kept && kept.length < MAX_PROVIDER_BATCH_ITEMS) kept.push(item);
      else kept = undefined;
    };
    try {
      validated = await validateBatchInput(await this.deps.objects.read(key), batch.endpoint, {
        maxBytes: MAX_BATCH_INPUT_BYTES,
        model: batch.model,
        onItem,
        ...(this.deps.shardItems !== undefined ? { shardItems: this.deps.shardItems } : {}),
        onError: async (item) => {
          bad.push(this.deps.commits.commit({ batchId: batch.id, line: item.line, result: errorResult(item), usage: NO_USAGE }));
          if (bad.length >= 1000) await settle();
        },
      });
      await settle();
    } catch (err) {
      await settle().catch(() => undefined);
      // The input as a whole cannot run (too large): the batch fails, saying why.
      if (err instanceof TooLargeError || err instanceof InvalidInputError) {
        return (await this.move(batch.id, 'validation_failed', this.nowSeconds(), { error: err.message })) ?? batch;
      }
      throw err;
    }
    // An input of blank lines only (or a byte order mark alone): nothing to run, as an empty `requests` is a 400.
    if (validated.total === 0 && batch.status === 'validating') {
      return (await this.move(batch.id, 'validation_failed', this.nowSeconds(), { error: 'The input holds no request: every line of it is blank' })) ?? batch;
    }
    const model = batch.model ?? validated.model;
    const provider = this.deps.provider;
    // A batch is sent to a provider's batch service only from validating (never one whose items the gateway
    // started running: a start-up requeue validates in_progress batches again).
    const choice = batch.provider_batch ?? (provider && leases && batch.status === 'validating' && validated.runnable > 0 && validated.runnable <= MAX_PROVIDER_BATCH_ITEMS ? provider.choose({ ...batch, model }, validated.runnable) : undefined);
    const atProvider = provider && leases && choice ? await this.validateAtProvider(provider, leases, { ...batch, model }, validated, choice, kept) : undefined;
    if (atProvider) return atProvider;
    let current = batch;
    if (leases && !batch.lease && batch.status === 'validating') {
      const covered = await leases.cover(batch, maximum);
      if ('refused' in covered) return (await this.move(batch.id, 'validation_failed', this.nowSeconds(), { error: covered.refused })) ?? batch;
      current = { ...batch, lease: await this.keepLease(batch.id, covered.lease) };
    }
    if (batch.status === 'validating') {
      const moved = await this.move(batch.id, 'validated', this.nowSeconds(), { set: { total: validated.total, last_line: validated.lastLine, model } });
      // Cancelled or expired meanwhile: nothing to queue.
      if (!moved || moved.status !== 'in_progress') return moved ?? batch;
      current = moved;
    }
    const shards: BatchMessage[] = validated.shards.map((shard) => ({ kind: 'shard', batch_id: batch.id, shard }));
    await this.deps.queue.send(shards);
    await this.deps.batches.plan(batch.id, { queued: true });
    this.deps.log.info('batch validated', { batch_id: batch.id, total: validated.total, runnable: validated.runnable, failed: validated.failed, shards: validated.shards.length, bytes: validated.bytes });
    return { ...current, queued: true };
  }

  /**
   * A batch whose items all go to a provider's batch service: its maximum cost covered by a lease (or the batch
   * fails, saying why), then its items submitted there. Safe to repeat: the lease and the provider's batch
   * are stored as soon as they exist, and neither is taken again.
   */
  private async validateAtProvider(
    provider: ProviderBatchPort, leases: BatchLeasePort, batch: BatchRecord, validated: { total: number; lastLine: number; runnable: number },
    choice: { api: ProviderBatchRef['api']; endpoint: string; pricing: StoredPricing }, read?: BatchItem[],
  ): Promise<BatchRecord | undefined> {
    const items = read ?? await this.runnableItems(batch);
    let ref = batch.provider_batch;
    let lease = batch.lease;
    // Items a provider batch cannot take as they are (fallback models or provider preferences of their own,
    // more than a provider's batch file takes, what the service's batches cannot carry, fewer than it takes)
    // keep the batch with the gateway's workers.
    if (!ref && (!providerCanTake(items) || !(await provider.fits(batch, choice, items)))) return undefined;
    if (!ref) {
      if (!lease) {
        const priced = { endpoint: choice.endpoint, pricing: choice.pricing };
        let maximum = 0n;
        for (const item of items) maximum += leases.maximum(batch, item, priced);
        const covered = await leases.cover(batch, maximum);
        if ('refused' in covered) return (await this.move(batch.id, 'validation_failed', this.nowSeconds(), { error: covered.refused })) ?? batch;
        ref = { api: choice.api, endpoint: choice.endpoint, id: null, collected: false, pricing: choice.pricing };
        lease = await this.keepLease(batch.id, covered.lease, ref);
        // A twin step stored its own first: the batch goes on as that one left it.
        if (lease !== covered.lease) return (await this.deps.batches.get(batch.id)) ?? batch;
      } else {
        ref = { api: choice.api, endpoint: choice.endpoint, id: null, collected: false, pricing: choice.pricing };
        await this.deps.batches.plan(batch.id, { provider_batch: ref });
      }
    }
    if (!lease) throw new Error(`batch ${batch.id} is at a provider's batch service without a lease`);
    let current: BatchRecord = { ...batch, lease, provider_batch: ref };
    if (batch.status === 'validating') {
      const moved = await this.move(batch.id, 'validated', this.nowSeconds(), { set: { total: validated.total, last_line: validated.lastLine, model: batch.model } });
      // Cancelled or expired meanwhile: the check step gives the lease back.
      if (!moved || moved.status !== 'in_progress') return moved ?? current;
      current = moved;
    }
    if (!ref.id && !current.queued) {
      if (!ref.submitting) {
        ref = { ...ref, submitting: true };
        await this.deps.batches.plan(batch.id, { provider_batch: ref });
      }
      const submitted = await provider.submit({ ...current, provider_batch: ref, lease }, items);
      // Items whose request the provider's format cannot carry: their errors, as an item's error live.
      await Promise.all(submitted.refused.map(({ item, status, message }) => this.deps.commits.commit({
        batchId: batch.id, line: item.line, usage: NO_USAGE,
        result: { custom_id: item.customId, id: null, error: { message, param: null, type: anthropicErrorType(status), error_type: 'invalid_body' }, response: null },
      })));
      ref = { ...ref, id: submitted.id, submitting: false };
      await this.deps.batches.plan(batch.id, { provider_batch: ref, queued: true });
      this.deps.log.info('batch submitted to the provider\'s batch service', { batch_id: batch.id, api: ref.api, endpoint: ref.endpoint, provider_batch_id: ref.id, items: items.length - submitted.refused.length, refused: submitted.refused.length, covered: lease.amount });
    }
    return { ...current, provider_batch: ref, queued: true };
  }

  /** The batch's runnable items, read from its stored input (a provider batch holds at most MAX_PROVIDER_BATCH_ITEMS). */
  private async runnableItems(batch: BatchRecord): Promise<BatchItem[]> {
    if (batch.input.kind !== 's3') throw new Error(`batch ${batch.id} has no stored input`);
    const checker = new BatchItemChecker(batch.endpoint, { model: batch.model });
    const items: BatchItem[] = [];
    for await (const line of jsonLines(await this.deps.objects.read(batch.input.key), { maxBytes: MAX_BATCH_INPUT_BYTES })) {
      const checked = checker.checkLine(line);
      if (checked.kind === 'item') items.push({ line: checked.line, customId: checked.customId, body: checked.body });
    }
    return items;
  }

  /**
   * A provider batch's check: cancels it at the provider when the batch was cancelled or its window passed;
   * once the provider's batch has ended, commits every answer (through the inference core, once) and an error
   * for each item it did not run (unless the batch was stopped), and gives back what the lease did not spend.
   * Returns the batch as it then is (its counts final), or undefined while the provider's batch runs.
   */
  private async collectFromProvider(provider: ProviderBatchPort, batch: SubmittedBatch): Promise<BatchRecord | undefined> {
    const now = this.nowSeconds();
    const stopped = batch.status === 'cancelling' || now >= batch.expires_at;
    if (stopped) await provider.cancel(batch);
    if (!(await provider.ended(batch))) return undefined;
    const items = await this.runnableItems(batch);
    const done = await this.deps.results.linesDone(batch.id, 1, batch.last_line ?? Number.MAX_SAFE_INTEGER);
    const notRun = await provider.collect(batch, items.filter((item) => !done.has(item.line)));
    if (!stopped) {
      await Promise.all(notRun.map((item) => this.deps.commits.commit({
        batchId: batch.id, line: item.line, usage: NO_USAGE,
        result: { custom_id: item.customId, id: null, error: { message: 'The provider\'s batch service ended without running this item', param: null, type: 'api_error', error_type: 'provider_unavailable' }, response: null },
      })));
    }
    const ref = { ...batch.provider_batch, collected: true };
    await this.deps.batches.plan(batch.id, { provider_batch: ref });
    const collected = (await this.deps.batches.get(batch.id)) ?? batch;
    this.deps.log.info('provider batch collected', { batch_id: batch.id, provider_batch_id: ref.id, answered: items.length - done.size - notRun.length, not_run: notRun.length, spent: collected.usage.cost_nanos });
    return this.giveBackLease({ ...collected, provider_batch: ref });
  }

  /**
   * Ends a provider batch that will not be collected (its batch failed, or its provider kept failing): cancels
   * it there, as far as it can. What ran at the provider is then not charged; the lease is given back with
   * the batch's end.
   */
  private async giveUpAtProvider(batch: BatchRecord & { provider_batch: ProviderBatchRef }): Promise<void> {
    const provider = this.deps.provider;
    if (!provider || batch.provider_batch.collected) return;
    if (batch.provider_batch.id && batch.lease) {
      await provider.cancel({ ...batch, lease: batch.lease }).catch((err: unknown) => this.deps.log.warn('provider batch not cancelled', { batch_id: batch.id, error: String(err) }));
    }
    await this.deps.batches.plan(batch.id, { provider_batch: { ...batch.provider_batch, collected: true } });
    this.deps.log.warn('provider batch given up', { batch_id: batch.id, provider_batch_id: batch.provider_batch.id });
  }

  /** Stores a lease this step took, or gives it back when a twin step stored one first; the batch's lease. */
  private async keepLease(batchId: string, lease: BatchLeaseRef, providerBatch?: ProviderBatchRef): Promise<BatchLeaseRef> {
    const kept = await this.deps.batches.claimLease(batchId, lease, providerBatch);
    if (kept.id !== lease.id) await this.deps.leases?.giveBack(lease, 0n);
    return kept;
  }

  /**
   * Gives back what the batch's lease did not spend, once (a twin step finds it done): its items have all
   * ended (the batch is ending). Marked before it is given back: a step that dies in between leaves the lease
   * to the sweep, never given back twice.
   */
  private async giveBackLease(batch: BatchRecord): Promise<BatchRecord> {
    const { lease } = batch;
    if (!lease || lease.returned || !this.deps.leases) return batch;
    const current = (await this.deps.batches.get(batch.id)) ?? batch;
    if (await this.deps.batches.leaseReturned(batch.id)) await this.deps.leases.giveBack(lease, BigInt(current.usage.cost_nanos));
    return { ...current, lease: { ...lease, returned: true } };
  }

  private async fail(batch: BatchRecord, error: BatchStepInput['error']): Promise<BatchRecord> {
    if (isTerminal(batch.status)) return batch;
    if (batch.provider_batch && !batch.provider_batch.collected) await this.giveUpAtProvider({ ...batch, provider_batch: batch.provider_batch });
    batch = await this.giveBackLease(batch);
    this.deps.log.error('batch step failed after its retries; the batch fails', { batch_id: batch.id, error: error?.Error, cause: error?.Cause?.slice(0, 500) });
    const event = batch.status === 'cancelling' ? 'cancelled' : 'failed';
    return (await this.move(batch.id, event, this.nowSeconds(), { error: 'The batch could not be run to its end: one of its steps kept failing' })) ?? batch;
  }

  private async shard(batch: BatchRecord, shard: Shard): Promise<void> {
    if (batch.status === 'validating') throw new NotYetError(`batch ${batch.id} is still validating`);
    if (batch.status !== 'in_progress') return;
    if (batch.input.kind !== 's3') throw new Error(`batch ${batch.id} has no stored input`);
    const bytes = await this.deps.objects.readRange(batch.input.key, shard.start, shard.end);
    const checker = new BatchItemChecker(batch.endpoint, { model: batch.model });
    const items: BatchItem[] = [];
    let lastLine = shard.firstLine;
    for await (const line of jsonLines([bytes], { maxBytes: bytes.length + 1 })) {
      const number = shard.firstLine + line.number - 1;
      lastLine = number;
      const checked: CheckedItem = checker.checkLine({ ...line, number });
      // Validation let only runnable items into a range; anything else means the input changed under it.
      if (checked.kind === 'error') throw new Error(`batch ${batch.id} line ${number} no longer checks: ${checked.error.message}`);
      items.push({ line: number, customId: checked.customId, body: checked.body });
    }
    const done = await this.deps.results.linesDone(batch.id, shard.firstLine, lastLine);
    const todo = items.filter((item) => !done.has(item.line));

    // Every item starts only after a read of the batch's state that began after the item was due to start,
    // so no item starts once a cancel (or the window's end) has been answered. Lanes due meanwhile share the
    // next read (a read already in flight began too early for them): at most one read an item, and seldom
    // more than one in flight.
    let stopped = false;
    let reading: Promise<void> | undefined;
    let nextRead: Promise<void> | undefined;
    const read = (): Promise<void> => {
      const started = this.deps.batches.get(batch.id).then((now) => {
        if (!now || now.status !== 'in_progress' || this.nowSeconds() >= now.expires_at) stopped = true;
      });
      reading = started.finally(() => { reading = undefined; });
      return reading;
    };
    const freshState = (): Promise<void> => {
      if (!reading) return read();
      const afterIt = () => {
        nextRead = undefined;
        return read();
      };
      nextRead ??= reading.then(afterIt, afterIt);
      return nextRead;
    };
    const stillRunning = async (): Promise<boolean> => {
      if (stopped || this.stopping) return false;
      await freshState();
      return !stopped && !this.stopping;
    };
    let next = 0;
    let failure: { error: unknown } | undefined;
    let left = false;
    const lane = async () => {
      while (next < todo.length && !failure) {
        try {
          if (!(await stillRunning())) {
            left = this.stopping;
            return;
          }
          // Another lane may have taken the last item while this one looked at the batch's state.
          if (next >= todo.length || failure) return;
          const item = todo[next++]!;
          // Items are not cut short by a cancel: what runs finishes and is charged. The engine's own never-aborted
          // signal: no listener is added to it (a shared AbortController's warned of a leak past 10 items at once).
          await this.deps.runItem(batch, item, NEVER_ABORTED);
        } catch (error) {
          // Left to its other run, which records it.
          if (error instanceof ItemBusyError) continue;
          // No new item starts; the step fails once the items already running have ended (nothing of it
          // outlives the invocation), and its message comes back for the items left.
          failure ??= { error };
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(this.deps.itemConcurrency, todo.length)) }, lane));
    if (failure) throw failure.error;
    // The process is stopping: the items not started run when the message comes back.
    if (left && next < todo.length) throw new NotYetError(`batch ${batch.id}: the worker stopped before ${todo.length - next} item(s) of the shard`);
  }

  /** Stops starting items (a local process shutting down); those running finish and commit. */
  stop(): void {
    this.stopping = true;
  }

  private async check(batch: BatchRecord): Promise<BatchRecord> {
    if (isTerminal(batch.status)) return batch;
    // A provider batch: nothing of it runs here; its answers are collected once the provider's batch ended.
    const ref = batch.provider_batch;
    let collected = false;
    if (ref?.id && !ref.collected && batch.lease && this.deps.provider && (batch.status === 'in_progress' || batch.status === 'cancelling')) {
      let after: BatchRecord | undefined;
      try {
        after = await this.collectFromProvider(this.deps.provider, { ...batch, provider_batch: ref, lease: batch.lease });
      } catch (err) {
        // The provider unreachable or failing for a while is not the batch failing: the next check asks again
        // (a batch that never gets its answers expires, and its lease is given back then).
        this.deps.log.warn('provider batch not collected yet', { batch_id: batch.id, provider_batch_id: ref.id, error: String(err) });
        if (this.nowSeconds() < batch.expires_at + this.deps.settleSeconds + PROVIDER_GIVE_UP_S) return batch;
        await this.giveUpAtProvider({ ...batch, provider_batch: ref });
        after = (await this.deps.batches.get(batch.id)) ?? batch;
      }
      if (!after) return batch;
      batch = after;
      collected = true;
    }
    // Stopped before its items were submitted: nothing of it runs anywhere.
    if (ref && !ref.id && !ref.collected && (batch.status === 'cancelling' || this.nowSeconds() >= batch.expires_at)) {
      const ended = { ...ref, collected: true };
      await this.deps.batches.plan(batch.id, { provider_batch: ended });
      batch = { ...batch, provider_batch: ended };
      collected = true;
    }
    // Every item it will ever have has been answered: nothing runs that a stop would have to wait for.
    const settle = collected || batch.provider_batch?.collected ? 0 : this.deps.settleSeconds;
    const now = this.nowSeconds();
    const counts = batch.request_counts;
    const done = batch.status === 'finalizing' || (batch.status === 'in_progress' && batch.queued && counts.completed + counts.failed >= counts.total);
    // A batch whose items are all done completes even when its window has just passed. One that stopped (its
    // window passed, or cancelled) ends once the items running then have had time to commit, with the results
    // file of what was done.
    if (!done && now >= batch.expires_at) {
      if (now < batch.expires_at + settle) return batch;
      batch = await this.giveBackLease(batch);
      const output = await this.deps.objects.writeOutput(batch.id, resultLines(this.deps.results, batch));
      return (await this.move(batch.id, 'expire', this.nowSeconds(), { error: `The batch did not finish within its ${batch.completion_window} completion window`, set: { output } })) ?? batch;
    }
    if (batch.status === 'cancelling') {
      if (now < (batch.cancelling_at ?? 0) + settle) return batch;
      batch = await this.giveBackLease(batch);
      const output = await this.deps.objects.writeOutput(batch.id, resultLines(this.deps.results, batch));
      return (await this.move(batch.id, 'cancelled', this.nowSeconds(), { set: { output } })) ?? batch;
    }
    if (done) {
      // Every item has its result: what the lease did not spend goes back.
      batch = await this.giveBackLease(batch);
      if (batch.status === 'in_progress') {
        const moved = await this.move(batch.id, 'items_done', now);
        // Cancelled or expired meanwhile: no results file.
        if (moved && moved.status !== 'finalizing') return moved;
      }
      // Finalizing: every result, in input order, into the batch's results file (written again by a rerun).
      const output = await this.deps.objects.writeOutput(batch.id, resultLines(this.deps.results, batch));
      const done = await this.move(batch.id, 'finalized', this.nowSeconds(), { set: { output } });
      this.deps.log.info('batch completed', { batch_id: batch.id, ...counts });
      return done ?? batch;
    }
    return batch;
  }
}

/** The most bytes of item bodies sent to a provider's batch service (OpenAI takes files of up to 200 MB). */
const MAX_PROVIDER_BATCH_BYTES = 150 * 1024 * 1024;

/** Whether a provider batch can take these items as they are: one model each (no fallbacks), no provider preferences of their own. */
function providerCanTake(items: readonly BatchItem[]): boolean {
  let bytes = 0;
  for (const item of items) {
    if (item.body.models !== undefined || item.body.provider != null) return false;
    bytes += JSON.stringify(item.body).length;
    if (bytes > MAX_PROVIDER_BATCH_BYTES) return false;
  }
  return true;
}

/** A bad item's result: its custom_id (or its line's, when it has none) and why it cannot run. */
export function errorResult(bad: Extract<CheckedItem, { kind: 'error' }>): BatchResult {
  return { custom_id: bad.customId ?? `line-${bad.line}`, id: null, error: { ...bad.error }, response: null };
}
