// A stored batch as SPEC's Batch object (GET /batches/{id}, the list, create's 202).
import { nanosToUsd } from '../platform/money.js';
import type { BatchRecord } from './batch-repository.js';
import type { BatchObject, BatchResult } from './schemas.js';

/**
 * `results` is the page of item results shown with it (null in a list), `resultsNext` where the next page
 * starts (null when this page is the last).
 */
export function batchView(batch: BatchRecord, results: BatchResult[] | null = null, resultsNext: number | null = null): BatchObject {
  const counted = batch.request_counts.completed + batch.request_counts.failed;
  return {
    id: batch.id,
    object: 'batch',
    status: batch.status,
    endpoint: batch.endpoint,
    model: batch.model,
    completion_window: batch.completion_window,
    created_at: batch.created_at,
    finalized_at: batch.finalized_at,
    expires_at: batch.expires_at,
    error: batch.error,
    request_counts: { ...batch.request_counts },
    results,
    usage: counted === 0 ? null : {
      prompt_tokens: batch.usage.prompt_tokens,
      completion_tokens: batch.usage.completion_tokens,
      total_tokens: batch.usage.total_tokens,
      cost: nanosToUsd(BigInt(batch.usage.cost_nanos)),
    },
    metadata: batch.metadata,
    results_next: resultsNext,
  };
}
