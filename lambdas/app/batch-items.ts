// How a batch worker runs an item: through the same inference core as a live request (routing, fallbacks,
// retries, cost; the process's budget lease pays), under the key that submitted the batch.
//
// Charged once: an item's generation id is derived from its batch and input line, and its record is the only
// record of a page named by that id (page block from the id, page 1). A second run of the item (an SQS
// redelivery, a worker that died after the record was written but before the result was) writes the same
// page, which is refused as already there: the item is charged by the first record only, and its result is
// recorded once by the result repository's condition.
import { createHash } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { PageRepository } from '../billing/page-repository.js';
import { PageWriter, type Page, type PageStore } from '../billing/pages.js';
import type { EngineDeps } from '../inference/engine.js';
import { fromChat } from '../inference/formats/from-chat.js';
import { fromResponses } from '../inference/formats/from-responses.js';
import type { ChatRequest } from '../inference/formats/chat-schema.js';
import type { ResponsesRequest } from '../inference/formats/responses-schema.js';
import { generateBuffered } from '../inference/operations.js';
import type { InferenceRequest } from '../inference/inference-request.js';
import { HttpError, httpErrorOf } from '../platform/http/errors.js';
import { DomainError } from '../platform/errors.js';
import { usdToNanos } from '../platform/money.js';
import { RecordCache } from '../platform/record-cache.js';
import type { ApiKey, ApiKeyRepository } from '../keys/index.js';
import type { BatchItem, BatchRecord, BatchResult, BatchUsage, ItemRunner } from '../batches/index.js';

const ALPHANUMERIC = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** How long a worker uses a batch's key record before reading it again (a disabled key stops its batch). */
const KEY_CACHE_MS = 5_000;

/** `gen-<batch created_at>-<12 characters from the batch id and line>00`: the same for every run of the item. */
export function batchGenerationId(batch: Pick<BatchRecord, 'id' | 'created_at'>, line: number): string {
  const digest = createHash('sha256').update(`${batch.id}:${line}`).digest();
  let block = '';
  for (let i = 0; i < 12; i += 1) block += ALPHANUMERIC[digest[i]! % 62];
  return `gen-${batch.created_at}-${block}00`;
}

/** The error type of a result's error from the status it failed with. */
function errorTypeOf(status: number): string {
  if (status === 429) return 'rate_limit_exceeded';
  if (status === 402) return 'insufficient_credits';
  if (status === 401 || status === 403) return 'permission_denied';
  if (status === 404) return 'not_found';
  if (status === 408 || status === 524) return 'timeout';
  if (status === 413) return 'payload_too_large';
  if (status < 500) return 'invalid_request';
  return 'server';
}

function failedResult(customId: string, id: string | null, error: HttpError): BatchResult {
  const param = typeof error.metadata?.param === 'string' ? error.metadata.param : null;
  return {
    custom_id: customId,
    id,
    error: { message: error.message, param, type: error.status < 500 ? 'invalid_request_error' : 'api_error', error_type: errorTypeOf(error.status) },
    response: null,
  };
}

function usageOf(body: Record<string, unknown>): BatchUsage {
  const usage = (body.usage ?? {}) as Record<string, unknown>;
  const prompt = Number(usage.prompt_tokens ?? usage.input_tokens ?? 0);
  const completion = Number(usage.completion_tokens ?? usage.output_tokens ?? 0);
  const cost = typeof usage.cost === 'number' ? usage.cost : 0;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: Number(usage.total_tokens ?? prompt + completion), cost_nanos: Number(usdToNanos(cost)) };
}

/**
 * Each item's record alone in the page its id names (page 1 of its block: the writer's recordPerBlock). A page found there already is
 * this run's own when it holds this very record (a write that landed but whose reply was lost, retried);
 * otherwise it is an earlier run's, and this run's record is a duplicate: not stored, not charged.
 */
export function itemPageStore(repository: Pick<PageRepository, 'putIfAbsent' | 'putAllIfAbsent'>): PageStore {
  const outcome = (page: Page, written: { writeUnits: number; existing?: Page }) => {
    if (!written.existing) return { writeUnits: written.writeUnits };
    const first = page.entries[0]!.record;
    const stored = written.existing.entries[0]?.record;
    const same = stored !== undefined && stored.id === first.id && stored.created_at === first.created_at && stored.latency_ms === first.latency_ms && stored.cost.total === first.cost.total;
    return same ? { writeUnits: 0 } : { writeUnits: 0, duplicate: true };
  };
  return {
    async put(page) {
      return outcome(page, await repository.putIfAbsent(page));
    },
    async putAll(pages) {
      const written = await repository.putAllIfAbsent(pages);
      return pages.map((page, index) => outcome(page, written[index]!));
    },
  };
}

export interface BatchItemWiring {
  engine: EngineDeps;
  keys: Pick<ApiKeyRepository, 'get'>;
  db: DynamoDBDocumentClient;
  tableName: string;
}

export function batchItemRunner(wiring: BatchItemWiring): ItemRunner {
  const { engine } = wiring;
  const pages = new PageWriter({
    store: itemPageStore(new PageRepository(wiring.db, wiring.tableName)),
    recordPerBlock: true,
    // Items' pages in transactions of up to 25: fewer round trips than one write each.
    pageRecords: 25,
    log: engine.log,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  });
  const keyCache = new RecordCache<ApiKey>(KEY_CACHE_MS);

  const keyOf = async (hash: string): Promise<ApiKey | undefined> => {
    const cached = keyCache.get(hash);
    if (cached) return cached;
    const key = await wiring.keys.get(hash);
    if (key) keyCache.set(hash, key);
    return key;
  };

  return async (batch: BatchRecord, item: BatchItem, signal: AbortSignal) => {
    const generationId = batchGenerationId(batch, item.line);
    const key = await keyOf(batch.key_hash);
    if (!key || key.disabled) {
      return { result: failedResult(item.customId, null, new HttpError(401, key ? 'The API key that submitted this batch is disabled' : 'The API key that submitted this batch was deleted')), usage: zero() };
    }
    let request: InferenceRequest;
    // The batch's model for an item that names none (an uploaded input; inline items had it filled in).
    const body = item.body.model === undefined && batch.model ? { ...item.body, model: batch.model } : item.body;
    try {
      request = batch.endpoint === '/v1/responses' ? fromResponses(body as ResponsesRequest) : fromChat(body as ChatRequest);
    } catch (err) {
      if (err instanceof DomainError) return { result: failedResult(item.customId, null, httpErrorOf(err)), usage: zero() };
      throw err;
    }
    if (batch.provider_only) request = { ...request, provider: { ...request.provider, only: batch.provider_only } };
    const itemEngine: EngineDeps = { ...engine, pages, generationIds: { next: () => generationId } };
    try {
      const { body } = await generateBuffered(request, { orgId: key.org_id, workspaceId: key.workspace_id, keyHash: key.hash, key }, itemEngine, signal);
      return { result: { custom_id: item.customId, id: generationId, error: null, response: { body, request_id: generationId, status_code: 200 } }, usage: usageOf(body) };
    } catch (err) {
      // The process is stopping: the item is not failed, its shard runs again (elsewhere, or after the restart).
      if (engine.shutdown.triggered) throw new Error(`batch ${batch.id} item ${item.line} cut short by the shutdown`, { cause: err });
      if (err instanceof HttpError) return { result: failedResult(item.customId, generationId, err), usage: zero() };
      if (err instanceof DomainError) return { result: failedResult(item.customId, generationId, httpErrorOf(err)), usage: zero() };
      throw err;
    }
  };
}

const zero = (): BatchUsage => ({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost_nanos: 0 });
