// The batch worker's ports to money and to providers' batch services, implemented in the app layer
// (app/batch-lease.ts, app/provider-batches.ts).
import type { BatchLeaseRef, BatchRecord, ProviderBatchRef, StoredPricing } from './batch-repository.js';

/** A runnable item (the worker's BatchItem): its input line, custom_id and checked body. */
export interface BatchItem {
  line: number;
  customId: string;
  body: Record<string, unknown>;
}

/** Items a provider batch takes at most here (OpenAI's limit is 50,000; every item's request is held in memory to submit it). */
export const MAX_PROVIDER_BATCH_ITEMS = 10_000;

/** The lease that covers a batch's maximum cost before any of its items runs. */
export interface BatchLeasePort {
  /**
   * The most an item can cost: what it would reserve live (on the endpoints its request routes to), or at a
   * provider batch's price on that endpoint; 0 for an item whose request cannot be made (it fails at no cost).
   */
  maximum(batch: BatchRecord, item: BatchItem, priced?: { endpoint: string; pricing: StoredPricing }): bigint;
  /** Takes the lease for `total`, checked as a hold is; or why the batch cannot run (a limit cannot cover it). */
  cover(batch: BatchRecord, total: bigint): Promise<{ lease: BatchLeaseRef } | { refused: string }>;
  /** Gives back what the lease did not spend (`spent`: the batch's summed cost). */
  giveBack(lease: BatchLeaseRef, spent: bigint): Promise<void>;
}

export type SubmittedBatch = BatchRecord & { provider_batch: ProviderBatchRef; lease: BatchLeaseRef };

export interface ProviderBatchPort {
  /**
   * The provider batch service the batch's items can all run at (one model for all of them, an endpoint of
   * it with a batch service, provider.only allowing it), with its prices at the batch price now; or undefined:
   * the gateway runs them itself. With `items`, the number of runnable items: a service that takes more per
   * batch (Bedrock's jobs: 100) is passed over.
   */
  choose(batch: BatchRecord, items?: number): { api: ProviderBatchRef['api']; endpoint: string; pricing: StoredPricing } | undefined;
  /**
   * Whether the items can all go to the chosen service's batch: none of them can go live but not there (tools to
   * a Bedrock job), none would be served live with the caller's own BYOK credentials (the service's batch runs on
   * the gateway's), and as many as it takes at least remain once those a live call would refuse are set aside.
   */
  fits(batch: BatchRecord, choice: { endpoint: string; pricing: StoredPricing }, items: readonly BatchItem[]): Promise<boolean>;
  /**
   * Submits the items (each under its line): the provider's id of the batch (null when no item could go),
   * and the items refused before they went (their request cannot be made for the endpoint), with why.
   */
  submit(batch: SubmittedBatch, items: readonly BatchItem[]): Promise<{ id: string | null; refused: Array<{ item: BatchItem; status: number; message: string }> }>;
  /** Whether the provider's batch has ended (every request it will run has run). */
  ended(batch: SubmittedBatch): Promise<boolean>;
  /**
   * Commits the result of every item the provider answered and that has none yet, each through the inference
   * core at the batch price, charged from the batch's lease, once. Returns the items it never ran.
   */
  collect(batch: SubmittedBatch, items: readonly BatchItem[]): Promise<BatchItem[]>;
  cancel(batch: SubmittedBatch): Promise<void>;
}
