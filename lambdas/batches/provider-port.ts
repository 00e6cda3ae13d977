// How the batch worker runs a batch at a provider's own batch service (OpenAI's Batch API, Anthropic's
// Message Batches) instead of item by item: the port it asks, implemented by app/provider-batches.ts.
import type { BatchRecord, ProviderBatchRef } from './batch-repository.js';

/** A runnable item (the worker's BatchItem): its input line, custom_id and checked body. */
export interface BatchItem {
  line: number;
  customId: string;
  body: Record<string, unknown>;
}

/** Items a provider batch takes at most here (OpenAI's limit is 50,000; every item's request is held in memory to submit it). */
export const MAX_PROVIDER_BATCH_ITEMS = 10_000;

export interface ProviderBatchPort {
  /**
   * The provider batch service the batch's items can all run at (one model for all of them, an endpoint of
   * it with a batch service, provider.only allowing it), or undefined: the gateway runs them itself.
   */
  choose(batch: BatchRecord): { api: ProviderBatchRef['api']; endpoint: string } | undefined;
  /**
   * Takes the lease that covers the batch's maximum cost (the sum of its items' reservations at the batch
   * price): the reference to store before submitting, or why the batch cannot run (a limit cannot cover it).
   */
  cover(batch: BatchRecord, items: readonly BatchItem[], choice: { api: ProviderBatchRef['api']; endpoint: string }): Promise<{ ref: ProviderBatchRef } | { refused: string }>;
  /**
   * Submits the items (each under its line): the provider's id of the batch (null when no item could go),
   * and the items refused before they went (their request cannot be made for the endpoint), with why.
   */
  submit(batch: BatchRecord & { provider_batch: ProviderBatchRef }, items: readonly BatchItem[]): Promise<{ id: string | null; refused: Array<{ item: BatchItem; status: number; message: string }> }>;
  /** Whether the provider's batch has ended (every request it will run has run). */
  ended(batch: BatchRecord & { provider_batch: ProviderBatchRef }): Promise<boolean>;
  /**
   * Commits the result of every item the provider answered and that has none yet, each through the inference
   * core at the batch price, charged from the batch's lease, once. Returns the items it never ran.
   */
  collect(batch: BatchRecord & { provider_batch: ProviderBatchRef }, items: readonly BatchItem[]): Promise<BatchItem[]>;
  cancel(batch: BatchRecord & { provider_batch: ProviderBatchRef }): Promise<void>;
  /** Gives back what the lease did not spend (`spent`: the batch's summed cost), once. */
  finish(batch: BatchRecord & { provider_batch: ProviderBatchRef }, spent: bigint): Promise<void>;
}
