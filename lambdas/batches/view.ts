// A stored batch as SPEC's Batch object (GET /batches/{id}, the list, create's 202).
import type { BatchRecord } from './batch-repository.js';
import type { BatchObject, BatchResult } from './schemas.js';

/** `results` is the page of item results shown with it; `usage` the batch's summed usage once known. */
export function batchView(batch: BatchRecord, results: BatchResult[] = [], usage: Record<string, unknown> | null = null): BatchObject {
  return {
    id: batch.id,
    object: 'batch',
    status: batch.status,
    endpoint: batch.endpoint,
    model: batch.model,
    completion_window: batch.completion_window,
    created_at: batch.created_at,
    finalized_at: batch.finalized_at,
    error: batch.error,
    request_counts: { ...batch.request_counts },
    results,
    usage,
  };
}
