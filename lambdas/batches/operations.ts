// The batch routes' operations. A batch belongs to the workspace of the key that submitted it: other
// workspaces' keys are told it does not exist. Submitting stores the input in the batch bucket as JSON Lines,
// creates the batch (validating) and starts its state machine; the steps after that are the worker's.
import { randomBytes } from 'node:crypto';
import { ConflictError, InvalidInputError, NotFoundError, TooLargeError, UnavailableError, UpstreamError } from '../platform/errors.js';
import type { Principal } from '../platform/http/auth.js';
import type { OperationResult } from '../platform/http/route.js';
import type { Logger } from '../platform/logger.js';
import { echo } from '../platform/echo.js';
import type { BatchObjects } from './batch-objects.js';
import { alphanumeric } from '../billing/pages.js';
import type { BatchExecutions } from './executions.js';
import { COMPLETION_WINDOW_SECONDS, NO_USAGE, type BatchRecord, type BatchRepository, type BatchShape } from './batch-repository.js';
import { checkInlineRequests, MAX_BATCH_INPUT_BYTES } from './input.js';
import { isTerminal } from './lifecycle.js';
import { resultLines, type BatchResultRepository } from './result-repository.js';
import type { BatchUpload, BatchUploadRepository } from './upload-repository.js';
import type { BatchItem } from './provider-port.js';
import type { BatchOperations } from './routes.js';
import { batchView } from './view.js';

export interface BatchPorts {
  batches: Pick<BatchRepository, 'create' | 'get' | 'list' | 'move' | 'delete'>;
  results: Pick<BatchResultRepository, 'page' | 'deleteAll'>;
  /** The batch bucket and its state machine; undefined where batches are not configured (then 503). */
  objects: Pick<BatchObjects, 'bucket' | 'putInput' | 'deleteBatch' | 'downloadUrl' | 'uploadKey' | 'startUpload' | 'partUrl' | 'completeUpload' | 'size' | 'deleteObject'> | undefined;
  uploads: Pick<BatchUploadRepository, 'create' | 'get' | 'move'>;
  /** Whether the catalog has this model: a batch naming one it lacks is refused when created (as a live request is). */
  knowsModel?: (id: string) => boolean;
  /**
   * Throws the 402 (naming the limit) for a batch the key's credits, limit and budgets cannot cover now:
   * `items` are the inline requests' runnable items, undefined for an uploaded input (not read yet). Nothing
   * is reserved: the lease taken when the batch is validated decides.
   */
  affords?: (key: Principal['key'], batch: BatchShape, items: readonly BatchItem[] | undefined) => Promise<void>;
  /** Read at each call: npm start puts its in-process runner there once it is up. */
  executions: () => BatchExecutions | undefined;
  clock: () => Date;
  log: Logger;
  /** Seconds a batch may run before it expires (the 24h window; shorter only to try expiry out). */
  windowSeconds?: number;
  /**
   * Seconds past its deadline after which a batch that has not ended is expired when it is read: its state
   * machine would have expired it by then, so it is gone (its steps kept failing, its execution timed out).
   */
  stuckAfterSeconds?: number;
}

/** Two hours: well past the state machine's last check of a batch at its deadline. */
const STUCK_AFTER_SECONDS = 2 * 60 * 60;

/** How long a results file's download link works. */
const DOWNLOAD_URL_SECONDS = 15 * 60;
/**
 * The most a results download answered from the table may hold (a running batch's results so far): one reply
 * of the management function (API Gateway and Lambda cap a reply at 6 MB). An ended batch's results are
 * downloaded from its results file instead, of any size.
 */
const MAX_INLINE_DOWNLOAD_BYTES = 5 * 1024 * 1024;

function newId(prefix: 'batch_' | 'upload_'): string {
  return `${prefix}${alphanumeric(randomBytes(24))}`;
}

/** Parts of an upload: 8 MiB each (S3 wants at least 5 MiB but for the last), fewer than S3's 10,000. */
const PART_BYTES = 8 * 1024 * 1024;
/** How long an upload's part URLs work, and the upload may be completed. */
const UPLOAD_SECONDS = 60 * 60;

function uploadView(upload: BatchUpload, parts: Array<{ part_number: number; bytes: number; url: string }> = []) {
  return {
    id: upload.id, object: 'batch.upload' as const, status: upload.status, bytes: upload.bytes, part_bytes: upload.part_bytes, parts, expires_at: upload.expires_at,
  };
}

function configured(deps: BatchPorts): { objects: NonNullable<BatchPorts['objects']>; executions: BatchExecutions } {
  const executions = deps.executions();
  if (!deps.objects || !executions) throw new UnavailableError('Batches are not available on this deployment (no batch bucket, queue or state machine configured)');
  return { objects: deps.objects, executions };
}

/**
 * The batch-level model goes into every item that names none; an item naming another one is refused
 * (OpenRouter's rule: one model per batch when the batch names it).
 */
function withBatchModel(requests: readonly unknown[], model: string | undefined): unknown[] {
  if (model === undefined) return [...requests];
  return requests.map((request, index) => {
    if (typeof request !== 'object' || request === null || Array.isArray(request)) return request;
    const item = request as Record<string, unknown>;
    const body = item.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return request;
    const own = (body as Record<string, unknown>).model;
    if (own === undefined || own === null) return { ...item, body: { model, ...(body as Record<string, unknown>) } };
    if (own !== model) {
      throw new InvalidInputError(`Invalid body.requests.${index}.body.model: "${String(own)}" is not the batch's model "${model}"; leave it out or use the same`, { metadata: { param: `requests.${index}.body.model` } });
    }
    return request;
  });
}

/** Why S3 refused to complete an upload, in the caller's terms (S3's error names are not the API's). */
const PART_REFUSALS = new Map<string, string>([
  ['InvalidPart', 'a part was not uploaded, or its ETag is not the one its upload answered'],
  ['InvalidPartOrder', 'the parts are not in ascending order'],
  ['EntityTooSmall', 'a part other than the last is smaller than the part size'],
  ['NoSuchUpload', 'the upload is no longer open'],
]);

export function createBatchOperations(deps: BatchPorts): BatchOperations {
  const now = () => Math.floor(deps.clock().getTime() / 1000);

  /** The batch, if the caller's workspace owns it (404 otherwise, as for one that does not exist). */
  const owned = async (principal: Principal, id: string): Promise<BatchRecord> => {
    const batch = await deps.batches.get(id);
    if (!batch || batch.org_id !== principal.key.org_id || batch.workspace_id !== principal.key.workspace_id) throw new NotFoundError(`Batch ${id} not found`);
    // Nothing runs it any more: it is expired now, so that it reads as ended and can be deleted.
    if (!isTerminal(batch.status) && now() >= batch.expires_at + (deps.stuckAfterSeconds ?? STUCK_AFTER_SECONDS)) {
      deps.log.warn('batch past its deadline without an end; expired on read', { batch_id: batch.id, status: batch.status });
      try {
        return (await deps.batches.move(batch.id, 'expire', now(), { error: `The batch did not finish within its ${batch.completion_window} completion window` })) ?? batch;
      } catch (err) {
        // Moved by something else meanwhile: as it is now.
        if (!(err instanceof ConflictError)) throw err;
        return (await deps.batches.get(batch.id)) ?? batch;
      }
    }
    return batch;
  };

  return {
    async createBatch({ principal, body }) {
      const { objects, executions } = configured(deps);
      const id = newId('batch_');
      const createdAt = now();
      let input: BatchRecord['input'];
      let total = 0;
      let model: string | null = body.model ?? null;
      // The 402 check, on the batch's model as known when it is called (inline items may name it).
      const affords = (items: readonly BatchItem[] | undefined) => deps.affords?.(principal.key, { endpoint: body.endpoint, model, provider_only: body.provider?.only ?? null }, items);
      if (model !== null && deps.knowsModel && !deps.knowsModel(model)) {
        throw new InvalidInputError(`Invalid model: "${echo(model, 128)}" is not a valid model ID`, { metadata: { param: 'model' } });
      }
      if (body.input_upload_id !== undefined) {
        // An uploaded input: checked item by item by the validating step; its items are counted then.
        const upload = await deps.uploads.get(body.input_upload_id);
        if (!upload || upload.org_id !== principal.key.org_id || upload.workspace_id !== principal.key.workspace_id) {
          throw new InvalidInputError(`Invalid input_upload_id: no upload ${body.input_upload_id} in this workspace`, { metadata: { param: 'input_upload_id' } });
        }
        if (upload.status !== 'completed') {
          const why = upload.status === 'used' ? 'the input of another batch already' : upload.status === 'refused' ? 'refused (over 200 MB)' : 'not completed yet (POST /batches/uploads/{id}/complete)';
          throw new InvalidInputError(`Invalid input_upload_id: upload ${upload.id} is ${why}`, { metadata: { param: 'input_upload_id' } });
        }
        await affords(undefined);
        if (!(await deps.uploads.move(upload.id, 'completed', 'used'))) {
          throw new ConflictError(`Upload ${upload.id} became the input of another batch meanwhile`);
        }
        input = { kind: 's3', bucket: objects.bucket, key: upload.key, bytes: upload.bytes };
      } else {
        const requests = withBatchModel(body.requests ?? [], body.model);
        // A missing, unreadable or repeated custom_id is a 400 for the whole batch; a body failing its
        // endpoint's schema is that item's error, reported in its result once the batch is validated.
        const checked = checkInlineRequests(requests, body.endpoint);
        const text = Buffer.from(requests.map((request) => JSON.stringify(request)).join('\n') + '\n');
        if (text.length > MAX_BATCH_INPUT_BYTES) throw new TooLargeError(`A batch's input is at most ${MAX_BATCH_INPUT_BYTES} bytes; this one is ${text.length}`);
        const models = new Set(checked.flatMap((item) => (item.kind === 'item' && typeof item.body.model === 'string' ? [item.body.model] : [])));
        model ??= models.size === 1 ? [...models][0]! : null;
        total = requests.length;
        const runnable = checked.flatMap((item) => (item.kind === 'item' ? [item] : []));
        await affords(runnable);
        try {
          input = { kind: 's3', ...(await objects.putInput(id, text)) };
        } catch (err) {
          deps.log.error('batch input could not be stored', { batch_id: id, error: String(err) });
          throw new UpstreamError('The batch service is unavailable: the input could not be stored; try again', { reason: 'unavailable', retryAfterSeconds: 5, cause: err });
        }
      }
      const batch: BatchRecord = {
        id,
        org_id: principal.key.org_id,
        workspace_id: principal.key.workspace_id,
        key_hash: principal.key.hash,
        status: 'validating',
        endpoint: body.endpoint,
        model,
        completion_window: body.completion_window,
        created_at: createdAt,
        expires_at: createdAt + (deps.windowSeconds ?? COMPLETION_WINDOW_SECONDS),
        finalized_at: null,
        cancelling_at: null,
        error: null,
        request_counts: { total, completed: 0, failed: 0 },
        provider_only: body.provider?.only ?? null,
        metadata: body.metadata ?? null,
        input,
        queued: false,
        last_line: null,
        lease: null,
        provider_batch: null,
        output: null,
        usage: { ...NO_USAGE },
        version: 1,
      };
      try {
        await deps.batches.create(batch);
      } catch (err) {
        // The upload stays usable for the next try.
        if (body.input_upload_id !== undefined) await deps.uploads.move(body.input_upload_id, 'used', 'completed').catch(() => undefined);
        throw err;
      }
      try {
        await executions.start(id);
      } catch (err) {
        deps.log.error('batch could not be started', { batch_id: id, error: String(err) });
        await deps.batches.move(id, 'validation_failed', now(), { error: 'The batch could not be started' }).catch(() => undefined);
        throw new UpstreamError('The batch service is unavailable: the batch could not be started; try again', { reason: 'unavailable', retryAfterSeconds: 5, cause: err });
      }
      return { status: 202, body: batchView(batch, []) };
    },

    async createBatchUpload({ principal, body }) {
      const { objects } = configured(deps);
      if (body.bytes > MAX_BATCH_INPUT_BYTES) throw new TooLargeError(`A batch's input is at most ${MAX_BATCH_INPUT_BYTES} bytes (200 MB); ${body.bytes} were announced`);
      const id = newId('upload_');
      const key = objects.uploadKey(id);
      const createdAt = now();
      let s3UploadId: string;
      try {
        s3UploadId = await objects.startUpload(key);
      } catch (err) {
        deps.log.error('batch upload could not be started', { upload_id: id, error: String(err) });
        throw new UpstreamError('The batch service is unavailable: the upload could not be started; try again', { reason: 'unavailable', retryAfterSeconds: 5, cause: err });
      }
      const upload: BatchUpload = {
        id, org_id: principal.key.org_id, workspace_id: principal.key.workspace_id, key, s3_upload_id: s3UploadId,
        bytes: body.bytes, part_bytes: PART_BYTES, status: 'uploading', created_at: createdAt, expires_at: createdAt + UPLOAD_SECONDS,
      };
      await deps.uploads.create(upload);
      const count = Math.ceil(body.bytes / PART_BYTES);
      const parts = await Promise.all(Array.from({ length: count }, async (_, index) => {
        const bytes = index === count - 1 ? body.bytes - index * PART_BYTES : PART_BYTES;
        return { part_number: index + 1, bytes, url: await objects.partUrl(key, s3UploadId, index + 1, bytes, UPLOAD_SECONDS) };
      }));
      return { status: 201, body: uploadView(upload, parts) };
    },

    async completeBatchUpload({ principal, params, body }) {
      const { objects } = configured(deps);
      const upload = await deps.uploads.get(params.id);
      if (!upload || upload.org_id !== principal.key.org_id || upload.workspace_id !== principal.key.workspace_id) throw new NotFoundError(`Upload ${params.id} not found`);
      if (upload.status !== 'uploading') return { body: uploadView(upload) };
      if (now() >= upload.expires_at) throw new InvalidInputError(`Upload ${upload.id} expired; start another`);
      // Parts are numbered 1 to the count the upload was given, each once, in order (as S3 requires).
      const count = Math.ceil(upload.bytes / upload.part_bytes);
      const misnumbered = body.parts.findIndex((part, index) => part.part_number > count || (index > 0 && part.part_number <= body.parts[index - 1]!.part_number));
      if (misnumbered !== -1) {
        throw new InvalidInputError(`parts[${misnumbered}]: upload ${upload.id} has parts 1 to ${count}, each listed once in ascending order; part_number ${body.parts[misnumbered]!.part_number} is not`, { metadata: { param: 'parts' } });
      }
      try {
        await objects.completeUpload(upload.key, upload.s3_upload_id, body.parts);
      } catch (err) {
        const name = (err as { name?: string }).name ?? '';
        // Completed already by an earlier try whose reply was lost (S3 then knows no such upload): go on.
        const completedBefore = name === 'NoSuchUpload' && (await objects.size(upload.key)) !== undefined;
        if (!completedBefore) {
          const why = PART_REFUSALS.get(name);
          if (why) throw new InvalidInputError(`The parts do not complete upload ${upload.id}: ${why}; send every part's number and the ETag its upload answered, in order`, { metadata: { param: 'parts' } });
          throw new UpstreamError('The batch service is unavailable: the upload could not be completed; try again', { reason: 'unavailable', retryAfterSeconds: 5, cause: err });
        }
      }
      // What arrived, not what was announced: over the limit, it is deleted and refused.
      const bytes = (await objects.size(upload.key)) ?? 0;
      if (bytes > MAX_BATCH_INPUT_BYTES) {
        await objects.deleteObject(upload.key);
        await deps.uploads.move(upload.id, 'uploading', 'refused');
        throw new TooLargeError(`A batch's input is at most ${MAX_BATCH_INPUT_BYTES} bytes (200 MB); ${bytes} were uploaded, and deleted`);
      }
      await deps.uploads.move(upload.id, 'uploading', 'completed', { bytes });
      return { body: uploadView({ ...upload, status: 'completed', bytes }) };
    },

    async listBatches({ principal, query }) {
      const { org_id: orgId, workspace_id: workspaceId } = principal.key;
      const after = query.after === undefined ? undefined : await owned(principal, query.after).catch(() => {
        throw new InvalidInputError(`Invalid after: no batch ${query.after} in this workspace`, { metadata: { param: 'after' } });
      });
      const { batches, more } = await deps.batches.list(orgId, workspaceId, { limit: query.limit, ...(after ? { before: { created_at: after.created_at, id: after.id } } : {}) });
      return {
        body: {
          object: 'list' as const,
          data: batches.map((batch) => batchView(batch, null)),
          first_id: batches[0]?.id ?? null,
          last_id: batches[batches.length - 1]?.id ?? null,
          has_more: more,
        },
      };
    },

    async getBatch({ principal, params, query }) {
      const batch = await owned(principal, params.id);
      const { results, more } = await deps.results.page(batch.id, query.results_after, query.results_limit, batch.last_line);
      const next = more && results.length > 0 ? results[results.length - 1]!.line : null;
      return { body: batchView(batch, results.map((stored) => stored.result), next) };
    },

    async getBatchResults({ principal, params }): Promise<OperationResult> {
      const batch = await owned(principal, params.id);
      const filename = `${batch.id}-results.jsonl`;
      // An ended batch has its results file: the reply sends the client there (a link valid for a while).
      if (batch.output && deps.objects) {
        const url = await deps.objects.downloadUrl(batch.output, filename, DOWNLOAD_URL_SECONDS);
        return { status: 303, headers: { location: url }, body: { url, expires_at: now() + DOWNLOAD_URL_SECONDS } };
      }
      let text = '';
      for await (const chunk of resultLines(deps.results, batch)) {
        text += chunk;
        if (Buffer.byteLength(text) > MAX_INLINE_DOWNLOAD_BYTES) {
          throw new ConflictError(`Batch ${batch.id} is ${batch.status} and its results so far are larger than one reply; page them with GET /batches/${batch.id}?results_after=…${batch.status === 'completed' ? '' : ' (a completed batch has a results file)'}`);
        }
      }
      return { kind: 'text' as const, status: 200, headers: { 'content-type': 'application/jsonl; charset=utf-8', 'content-disposition': `attachment; filename="${filename}"` }, body: text };
    },

    async cancelBatch({ principal, params }) {
      const batch = await owned(principal, params.id);
      // The state machine's next check ends the cancel (cancelling → cancelled); items running finish.
      const moved = (await deps.batches.move(batch.id, 'cancel', now())) ?? batch;
      return { body: batchView(moved, null) };
    },

    async deleteBatch({ principal, params }) {
      const batch = await owned(principal, params.id);
      if (!isTerminal(batch.status)) throw new ConflictError(`Batch ${batch.id} is ${batch.status}: only an ended batch can be deleted (cancel it first)`);
      // The batch first: an item of it still committing (its run outlived a cancel) is then refused whole
      // (item-commits.ts requires the batch), so no result is written after its results are deleted.
      await deps.batches.delete(batch.id);
      await deps.results.deleteAll(batch.id);
      if (deps.objects) await deps.objects.deleteBatch(batch.id, batch.input.kind === 's3' ? batch.input.key : undefined);
      return { body: { id: batch.id, object: 'batch' as const, deleted: true as const } };
    },
  };
}
