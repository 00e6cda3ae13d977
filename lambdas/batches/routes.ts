// The batch routes (regular API keys): submit, list, read with a page of results, download all results as
// JSON Lines, cancel, delete. Paths and shapes follow OpenRouter's Batch API where SPEC is silent.
import type { OperationsFor, RouteDef } from '../platform/http/route.js';
import type { PathParam } from '../platform/http/route.js';
import { INFERENCE_MAX_BODY_BYTES } from '../inference/routes.js';
import { batchDeletedReply, batchListReply, batchObject, completeUploadBody, createBatchBody, createUploadBody, getBatchQuery, listBatchesQuery, uploadReply } from './schemas.js';

const uploadId: PathParam = { pattern: /^upload_[0-9A-Za-z]{1,64}$/, expected: 'an upload id (upload_…)' };
const batchId: PathParam = { pattern: /^batch_[0-9A-Za-z]{1,64}$/, expected: 'a batch id (batch_…)' };

export const batchRoutes = [
  {
    operationId: 'createBatch', method: 'POST', path: '/batches', fn: 'management', auth: 'inference',
    tag: 'Batches', summary: 'Submit a batch of requests to one endpoint: 202 once its input is stored and queued (status validating); 402 when the key\'s credits, limit or budgets cannot cover it',
    body: createBatchBody, response: batchObject, successStatus: 202, maxBodyBytes: INFERENCE_MAX_BODY_BYTES,
  },
  {
    operationId: 'createBatchUpload', method: 'POST', path: '/batches/uploads', fn: 'management', auth: 'inference',
    tag: 'Batches', summary: 'Upload a batch input larger than one request (up to 200 MB): presigned URLs of its 8 MiB parts, valid an hour (413 over 200 MB)',
    body: createUploadBody, response: uploadReply, successStatus: 201,
  },
  {
    operationId: 'completeBatchUpload', method: 'POST', path: '/batches/uploads/{id}/complete', params: { id: uploadId }, fn: 'management', auth: 'inference',
    tag: 'Batches', summary: 'Complete an upload with its parts\' ETags; then submit it as a batch\'s input_upload_id (413 when more than 200 MB arrived)',
    body: completeUploadBody, response: uploadReply,
  },
  {
    operationId: 'listBatches', method: 'GET', path: '/batches', fn: 'management', auth: 'inference',
    tag: 'Batches', summary: 'The workspace\'s batches, newest first (without results)', query: listBatchesQuery, response: batchListReply,
  },
  {
    operationId: 'getBatch', method: 'GET', path: '/batches/{id}', params: { id: batchId }, fn: 'management', auth: 'inference',
    tag: 'Batches', summary: 'A batch: its state, counts, usage and a page of its results in input order', query: getBatchQuery, response: batchObject,
  },
  {
    operationId: 'getBatchResults', method: 'GET', path: '/batches/{id}/results', params: { id: batchId }, fn: 'management', auth: 'inference',
    tag: 'Batches', summary: 'Every result of a batch so far, as JSON Lines (one result per line, in input order)',
  },
  {
    operationId: 'cancelBatch', method: 'POST', path: '/batches/{id}/cancel', params: { id: batchId }, fn: 'management', auth: 'inference',
    tag: 'Batches', summary: 'Cancel a batch: no new item starts; items already running finish and are charged', response: batchObject,
  },
  {
    operationId: 'deleteBatch', method: 'DELETE', path: '/batches/{id}', params: { id: batchId }, fn: 'management', auth: 'inference',
    tag: 'Batches', summary: 'Delete an ended batch with its input and results (409 while it runs); its charges stay', response: batchDeletedReply,
  },
] as const satisfies readonly RouteDef[];

export type BatchOperations = OperationsFor<typeof batchRoutes>;
