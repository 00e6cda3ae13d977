// Wire shapes of the batch routes (SPEC "Batch"): the create body and the Batch object.
import * as z from 'zod';
import { queryIntOr } from '../platform/http/query-int.js';
import { BATCH_ENDPOINTS } from './input.js';
import { BATCH_STATUSES } from './lifecycle.js';

/**
 * POST /batches. Each request is checked on its own (batches/input.ts), so that a bad body is that item's
 * error rather than a 400 for the whole batch: the array's items are not typed here.
 */
export const createBatchBody = z.strictObject({
  endpoint: z.enum(BATCH_ENDPOINTS),
  /** The model of every item (OpenRouter): an item may leave out its own, or must name the same. */
  model: z.string().min(1).max(256).refine((model) => !model.includes('@preset/'), 'presets cannot be used in batches; send the preset\'s settings in the items').optional(),
  /** The items inline; or `input_upload_id`, an input uploaded before (POST /batches/uploads). */
  requests: z.array(z.unknown()).min(1, 'requests needs at least one item').optional(),
  input_upload_id: z.string().regex(/^upload_[0-9A-Za-z]{1,64}$/, 'input_upload_id must be an upload id (upload_…)').optional(),
  completion_window: z.literal('24h', { message: 'completion_window must be "24h"' }).default('24h'),
  provider: z.strictObject({
    only: z.array(z.string().min(1).max(128)).min(1).max(64),
  }).nullish(),
  metadata: z.record(z.string().max(64), z.string().max(512)).refine((value) => Object.keys(value).length <= 16, 'metadata has at most 16 pairs').nullish(),
}).refine((body) => (body.requests === undefined) !== (body.input_upload_id === undefined), {
  message: 'give the items either inline as requests or uploaded as input_upload_id (one of them)',
  path: ['requests'],
});
export type CreateBatchBody = z.infer<typeof createBatchBody>;

const resultError = z.object({ message: z.string(), param: z.string().nullable(), type: z.string(), error_type: z.string() });

export const batchResult = z.object({
  custom_id: z.string(),
  id: z.string().nullable(),
  error: resultError.nullable(),
  response: z.object({ body: z.record(z.string(), z.unknown()), request_id: z.string(), status_code: z.number().int() }).nullable(),
});
export type BatchResult = z.infer<typeof batchResult>;

export const batchObject = z.object({
  id: z.string(),
  object: z.literal('batch'),
  status: z.enum(BATCH_STATUSES),
  endpoint: z.enum(BATCH_ENDPOINTS),
  model: z.string().nullable(),
  completion_window: z.literal('24h'),
  created_at: z.number().int(),
  finalized_at: z.number().int().nullable(),
  expires_at: z.number().int().nullable(),
  error: z.object({ message: z.string() }).nullable(),
  request_counts: z.object({ total: z.number().int(), completed: z.number().int(), failed: z.number().int() }),
  results: z.array(batchResult).nullable(),
  usage: z.object({
    prompt_tokens: z.number().int(),
    completion_tokens: z.number().int(),
    total_tokens: z.number().int(),
    cost: z.number(),
  }).nullable(),
  metadata: z.record(z.string(), z.string()).nullable(),
  /** Where the next page of `results` starts (`results_after`), while there are more. */
  results_next: z.number().int().nullable(),
});
export type BatchObject = z.infer<typeof batchObject>;

const pageLimit = (max: number, fallback: number) => queryIntOr(1, max, fallback);

export const getBatchQuery = z.strictObject({
  /** Results shown with the batch, at most (default 100, at most 1,000). */
  results_limit: pageLimit(1000, 100),
  /** Results after this input line (from the previous page's `results_next`). */
  results_after: queryIntOr(0, 999_999_998, 0),
});

export const listBatchesQuery = z.strictObject({
  limit: pageLimit(100, 20),
  /** A batch id from the previous page's `last_id`: the page after it. */
  after: z.string().min(1).max(64).optional(),
});

export const batchListReply = z.object({
  object: z.literal('list'),
  data: z.array(batchObject),
  first_id: z.string().nullable(),
  last_id: z.string().nullable(),
  has_more: z.boolean(),
});

export const batchDeletedReply = z.object({ id: z.string(), object: z.literal('batch'), deleted: z.literal(true) });

export const createUploadBody = z.strictObject({
  /** The input's size in bytes: over 200 MB is a 413 at once. */
  bytes: z.number().int().min(1),
});

export const uploadReply = z.object({
  id: z.string(),
  object: z.literal('batch.upload'),
  status: z.enum(['uploading', 'completed', 'used', 'refused']),
  bytes: z.number().int(),
  part_bytes: z.number().int(),
  /** PUT each part's bytes to its URL and keep the ETag header of the reply (while uploading). */
  parts: z.array(z.object({ part_number: z.number().int(), bytes: z.number().int(), url: z.string() })),
  expires_at: z.number().int(),
});

export const completeUploadBody = z.strictObject({
  parts: z.array(z.strictObject({ part_number: z.number().int().min(1).max(10_000), etag: z.string().min(1).max(256) })).min(1).max(10_000),
});
