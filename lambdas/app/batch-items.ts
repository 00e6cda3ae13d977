// How a batch worker runs an item: through the same inference core as a live request (routing, fallbacks,
// retries, cost; the process's budget lease pays), under the key that submitted the batch.
//
// Charged once: an item's generation id is derived from its batch and input line, and its record is the only
// record of a page named by that id (page block from the id, page 1). A second run of the item (an SQS
// redelivery, a worker that died after the record was written but before the result was) writes the same
// page, which is refused as already there: the item is charged by the first record only, and its result is
// recorded once by the result repository's condition.
import { createHash } from 'node:crypto';
import { alphanumeric, blockOf, type PageEntry, type PageWriter, type StoredEntry } from '../billing/pages.js';
import { HoldExistsError } from '../billing/errors.js';
import { ShutdownSwitch } from '../platform/shutdown.js';
import type { ItemCommitter } from '../batches/item-commits.js';
import type { EngineDeps } from '../inference/engine.js';
import { fromChat } from '../inference/formats/from-chat.js';
import { fromResponses } from '../inference/formats/from-responses.js';
import { fromMessages } from '../inference/formats/from-messages.js';
import type { MessagesRequest } from '../inference/formats/messages-schema.js';
import { fromEmbeddings } from '../inference/formats/embeddings.js';
import type { EmbeddingsRequest } from '../inference/formats/embeddings-schema.js';
import type { ChatRequest } from '../inference/formats/chat-schema.js';
import type { ResponsesRequest } from '../inference/formats/responses-schema.js';
import { generateDeferred } from '../inference/operations.js';
import type { InferenceRequest } from '../inference/inference-request.js';
import { HttpError, httpErrorOf } from '../platform/http/errors.js';
import { DomainError } from '../platform/errors.js';
import { RecordCache } from '../platform/record-cache.js';
import type { ApiKey, ApiKeyRepository } from '../keys/index.js';
import { ItemBusyError, NO_USAGE, type BatchItem, type BatchRecord, type BatchResult, type BatchShape, type BatchUsage, type ItemRunner } from '../batches/index.js';
import { anthropicErrorType } from '../platform/http/anthropic-error-type.js';

/** How long a worker uses a batch's key record before reading it again (a disabled key stops its batch). */
const KEY_CACHE_MS = 5_000;

/** `gen-<batch created_at>-<12 characters from the batch id and line>00`: the same for every run of the item. */
export function batchGenerationId(batch: Pick<BatchRecord, 'id' | 'created_at'>, line: number): string {
  const digest = createHash('sha256').update(`${batch.id}:${line}`).digest();
  return `gen-${batch.created_at}-${alphanumeric(digest.subarray(0, 12))}00`;
}

/** The error type of a result's error from the status it failed with. */
function errorTypeOf(status: number): string {
  if (status === 429) return 'rate_limit_exceeded';
  if (status === 402) return 'insufficient_credits';
  if (status === 401 || status === 403) return 'permission_denied';
  if (status === 404) return 'not_found';
  if (status === 408 || status === 504 || status === 524) return 'timeout';
  if (status === 413) return 'payload_too_large';
  if (status < 500) return 'invalid_request';
  return 'server';
}

/** A failed item's result: the error as the live request would have answered it. */
export function failedResult(customId: string, id: string | null, error: HttpError): BatchResult {
  const param = typeof error.metadata?.param === 'string' ? error.metadata.param : null;
  return {
    custom_id: customId,
    id,
    // The type by status as the SDKs name their errors (rate_limit_error, timeout_error …; Anthropic's set).
    error: { message: error.message, param, type: anthropicErrorType(error.status), error_type: errorTypeOf(error.status) },
    response: null,
  };
}

/**
 * Each item's record alone in the page its id names (page 1 of its block: the writer's recordPerBlock). A page found there already is
 * this run's own when it holds this very record (a write that landed but whose reply was lost, retried);
 * otherwise it is an earlier run's, and this run's record is a duplicate: not stored, not charged.
 */
/**
 * The engine's page port for one run of a batch item: its record is not written on its own but handed to
 * the run, which commits it together with the item's result (batches/item-commits.ts); the settlement learns
 * then whether it was stored, or was another run's duplicate (charged nothing, its draw given back). One per
 * run: two runs of an item share its generation id.
 */
class RunPage implements Pick<PageWriter, 'add' | 'flush' | 'shared' | 'journaled' | 'provisional' | 'withdraw'> {
  shared = true;
  /**
   * A batch item's record waits for its item's commit, not in a journal: a provisional record stored by a
   * next start would take the item's generation id, and the item's rerun would then be a duplicate, charged nothing.
   */
  readonly journaled = false;
  private entry: PageEntry | undefined;
  private resolveStored: ((stored: StoredEntry) => void) | undefined;
  private onArrival: ((entry: PageEntry) => void) | undefined;

  add(entry: PageEntry): Promise<StoredEntry> {
    return new Promise((resolve) => {
      this.entry = entry;
      this.resolveStored = resolve;
      this.onArrival?.(entry);
    });
  }

  /** The run's record once its settlement hands it over; never resolves for a run without one. */
  arrival(): Promise<PageEntry> {
    if (this.entry) return Promise.resolve(this.entry);
    return new Promise((resolve) => { this.onArrival = resolve; });
  }

  /** Tells the settlement what became of the record. */
  settle(stored: StoredEntry): void {
    this.onArrival = undefined;
    this.resolveStored?.(stored);
    this.resolveStored = undefined;
  }

  async flush(): Promise<void> {
    // Nothing waits here on its own: the record waits for its item's commit.
  }

  provisional(): void {}

  withdraw(): void {}
}

/**
 * An item's body as the inference request it is (the batch's model filled in, its provider.only applied),
 * or the DomainError that makes it fail.
 */
export function itemRequest(batch: BatchShape, item: BatchItem): InferenceRequest {
  // The batch's model for an item that names none (an uploaded input; inline items had it filled in).
  const body = item.body.model == null && item.body.models === undefined && batch.model ? { ...item.body, model: batch.model } : item.body;
  const request = batch.endpoint === '/v1/responses' ? fromResponses(body as ResponsesRequest)
    : batch.endpoint === '/v1/messages' ? fromMessages(body as MessagesRequest)
    : batch.endpoint === '/v1/embeddings' ? fromEmbeddings(body as EmbeddingsRequest)
    : fromChat(body as ChatRequest);
  return batch.provider_only ? { ...request, provider: { ...request.provider, only: batch.provider_only } } : request;
}

export interface BatchItemWiring {
  engine: EngineDeps;
  /**
   * The engine one item runs with, in place of `engine` (a batch run at a provider's batch service answers
   * each item from the provider's results, priced at its discount, from the batch's own lease).
   */
  engineFor?: (batch: BatchRecord, item: BatchItem) => EngineDeps;
  /** Runs items of a disabled key too (a provider batch's answers, paid for already); a deleted key's still fail. */
  chargeDisabledKey?: boolean;
  keys: Pick<ApiKeyRepository, 'get'>;
  /** Writes each item's end once (batches/item-commits.ts). */
  commits: Pick<ItemCommitter, 'commit'>;
}

export function batchItemRunner(wiring: BatchItemWiring): BatchItemRunner {
  const { engine } = wiring;
  const committer = wiring.commits;
  // Batch items are not cut short by the process's shutdown (a record cut short would take the item's page):
  // a stopping process starts no new item and lets those running finish (BatchWorker.stop).
  const shutdown = new ShutdownSwitch();
  const keyCache = new RecordCache<ApiKey>(KEY_CACHE_MS);

  const keyOf = async (hash: string): Promise<ApiKey | undefined> => {
    const cached = keyCache.get(hash);
    if (cached) return cached;
    const key = await wiring.keys.get(hash);
    if (key) keyCache.set(hash, key);
    return key;
  };

  const commit = (batch: BatchRecord, item: BatchItem, result: BatchResult) => committer.commit({ batchId: batch.id, line: item.line, result, usage: { ...NO_USAGE } });

  return async (batch: BatchRecord, item: BatchItem, signal: AbortSignal) => {
    const generationId = batchGenerationId(batch, item.line);
    const key = await keyOf(batch.key_hash);
    if (!key || (key.disabled && !wiring.chargeDisabledKey)) {
      await commit(batch, item, failedResult(item.customId, null, new HttpError(401, key ? 'The API key that submitted this batch is disabled' : 'The API key that submitted this batch was deleted')));
      return;
    }
    let request: InferenceRequest;
    try {
      request = itemRequest(batch, item);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      await commit(batch, item, failedResult(item.customId, null, httpErrorOf(err)));
      return;
    }
    const pages = new RunPage();
    const itemEngine: EngineDeps = { ...(wiring.engineFor?.(batch, item) ?? engine), pages, shutdown, generationIds: { next: () => generationId } };
    let run: Awaited<ReturnType<typeof generateDeferred>>;
    try {
      run = await generateDeferred(request, { orgId: key.org_id, workspaceId: key.workspace_id, keyHash: key.hash, key }, itemEngine, signal);
    } catch (err) {
      // Another run of this item holds it now: that run records it.
      if (err instanceof HoldExistsError) throw new ItemBusyError(generationId);
      throw err;
    }
    const result: BatchResult = 'body' in run.outcome
      ? { custom_id: item.customId, id: generationId, error: null, response: { body: run.outcome.body, request_id: generationId, status_code: 200 } }
      : failedResult(item.customId, run.generationId ?? null, run.outcome.error);
    // Its record, if its settlement writes one (a completion always does; a failure before any reply does not).
    const entry = await Promise.race([pages.arrival(), run.settled.then(() => undefined)]);
    const usage: BatchUsage = entry
      ? {
        prompt_tokens: entry.record.usage.input_tokens,
        completion_tokens: entry.record.usage.output_tokens,
        total_tokens: entry.record.usage.input_tokens + entry.record.usage.output_tokens,
        cost_nanos: Number(entry.record.cost.total),
      }
      : { ...NO_USAGE };
    try {
      const outcome = await committer.commit({
        batchId: batch.id, line: item.line, result, usage,
        ...(entry ? { page: { block: blockOf(generationId)!, seq: 1, entries: [entry] } } : {}),
      });
      pages.settle(outcome === 'committed' ? { stored: true, writeUnits: 0 } : { stored: false, writeUnits: 0, duplicate: true });
    } catch (err) {
      // Not written (the store failing): the record is not stored, the lease keeps the draw until it is swept.
      pages.settle({ stored: false, writeUnits: 0 });
      throw err;
    }
    await run.settled;
  };
}

/** Runs one item and commits it (its result, record and counts) once: see batches/item-commits.ts. */
export type BatchItemRunner = ItemRunner;

