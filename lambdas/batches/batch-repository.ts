// Batches in the table: one item per batch (its state, counts and where its input is), listed newest first
// per workspace through gsi1. Every change of state is a conditional write on the state it was read in, so
// two steps racing (a worker finishing, a cancel, the expiry) never both move a batch; the loser reads again
// and is answered by the lifecycle (batches/lifecycle.ts) from the state the winner left.
import { DeleteCommand, GetCommand, PutCommand, ScanCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { queryUpTo } from '../platform/dynamo/query.js';
import { isConditionFailed } from '../platform/dynamo/write-failures.js';
import { ConflictError } from '../platform/errors.js';
import { isTerminal, transition, type BatchEvent, type BatchStatus } from './lifecycle.js';
import type { BatchEndpoint } from './input.js';

/** Where a batch's input is: in the create call itself (small batches), or an object in the batch bucket. */
export type BatchInput = { kind: 'inline'; bytes: number } | { kind: 's3'; bucket: string; key: string; bytes: number };

export interface BatchRecord {
  id: string;
  org_id: string;
  workspace_id: string;
  /** The key that created it: its limit pays for the items. */
  key_hash: string;
  status: BatchStatus;
  endpoint: BatchEndpoint;
  /** The model of the items when they all name one; null when they differ or none is known yet. */
  model: string | null;
  completion_window: '24h';
  /** Unix seconds. */
  created_at: number;
  /** Unix seconds: created_at + the completion window. After it, a batch that has not ended expires. */
  expires_at: number;
  /** Unix seconds at which it reached a terminal state; null before. */
  finalized_at: number | null;
  /** Unix seconds at which a cancel moved it to cancelling; null when it was not cancelled. */
  cancelling_at: number | null;
  error: { message: string } | null;
  request_counts: { total: number; completed: number; failed: number };
  provider_only: string[] | null;
  metadata: Record<string, string> | null;
  input: BatchInput;
  /** Every shard of its work has been queued (the validating step got that far). */
  queued: boolean;
  /** The input's last item line, once validated (blank lines count): no result lies beyond it. Null before. */
  last_line: number | null;
  /** The budget lease that covers its maximum cost, taken when it is validated; null before (or for a batch from before leases). */
  lease: BatchLeaseRef | null;
  /** Set when its items run at a provider's batch service rather than through the gateway's workers. */
  provider_batch: ProviderBatchRef | null;
  /** The key of its results file in the batch bucket, once written (when it ended); null before. */
  output: string | null;
  /** Summed usage of the items recorded so far (batches/result-repository.ts adds each item's). */
  usage: BatchUsage;
  /** Bumped by every change of state: what a conditional write compares. */
  version: number;
}

/** What an item's request is made from: the batch's endpoint, its model and its provider.only. */
export type BatchShape = Pick<BatchRecord, 'endpoint' | 'model' | 'provider_only'>;

/**
 * The lease that covers a batch's maximum cost (the sum of its items' reservations), taken before any item
 * runs; its items reserve from it in memory. As stored: the amount in nano-dollars, as text.
 */
export interface BatchLeaseRef {
  id: string;
  org_id: string;
  workspace_id: string;
  key_hash: string;
  amount: string;
  settings_version: number;
  budget_version: number;
  use_until: number;
  /** What its items did not spend has been given back (the batch has ended). */
  returned: boolean;
}

/** Prices in nano-dollars a token (or a request), as text. */
export type StoredPricing = Record<'prompt' | 'completion' | 'request' | 'input_cache_read' | 'input_cache_write' | 'internal_reasoning', string>;

/** A batch run at a provider's batch service (OpenAI's Batch API, Anthropic's Message Batches, Bedrock batch inference). */
export interface ProviderBatchRef {
  api: 'openai' | 'anthropic' | 'bedrock';
  /** The catalog endpoint (endpointKey) its items run on. */
  endpoint: string;
  /** The provider's id of the batch; null until it is submitted. */
  id: string | null;
  /** A submission began (and may have reached the provider before its id was stored): a retry looks for it first. */
  submitting?: boolean;
  /** Every answer has been collected (or the provider's batch was given up). */
  collected: boolean;
  /** The endpoint's prices at the batch price when the batch was covered: what its items are charged. */
  pricing: StoredPricing;
}

/** Token and cost sums of a batch's items (cost in nano-dollars). */
export interface BatchUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost_nanos: number;
}

export const NO_USAGE: BatchUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost_nanos: 0 };

function usageOf(value: unknown): BatchUsage {
  const usage = (value ?? {}) as Record<string, unknown>;
  return {
    prompt_tokens: Number(usage.prompt_tokens ?? 0),
    completion_tokens: Number(usage.completion_tokens ?? 0),
    total_tokens: Number(usage.total_tokens ?? 0),
    cost_nanos: Number(usage.cost_nanos ?? 0),
  };
}

/** The 24h completion window in seconds (SPEC Limits). */
export const COMPLETION_WINDOW_SECONDS = 24 * 60 * 60;

const MOVE_ATTEMPTS = 8;

export class BatchRepository {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string) {}

  /** Stores a new batch; a ConflictError if its id is taken (ids are random: a retried create). */
  async create(batch: BatchRecord): Promise<void> {
    try {
      await this.db.send(new PutCommand({
        TableName: this.tableName,
        Item: toItem(batch),
        ConditionExpression: 'attribute_not_exists(pk)',
      }));
    } catch (err) {
      if (isConditionFailed(err)) throw new ConflictError(`Batch ${batch.id} exists already`);
      throw err;
    }
  }

  async get(id: string): Promise<BatchRecord | undefined> {
    const { Item } = await this.db.send(new GetCommand({ TableName: this.tableName, Key: itemKeys.batch(id), ConsistentRead: true }));
    return Item ? fromItem(Item) : undefined;
  }

  /** A workspace's batches, newest first; `before` is the listing cursor (the last batch of the page before). */
  async list(orgId: string, workspaceId: string, page: { limit: number; before?: { created_at: number; id: string } }): Promise<{ batches: BatchRecord[]; more: boolean }> {
    const { gsi1pk } = itemKeys.batchesOf(orgId, workspaceId);
    const before = page.before ? itemKeys.batchListing(orgId, workspaceId, page.before.created_at, page.before.id).gsi1sk : undefined;
    const { items, truncated } = await queryUpTo(this.db, {
      TableName: this.tableName,
      IndexName: 'gsi1',
      KeyConditionExpression: before ? 'gsi1pk = :pk AND gsi1sk < :before' : 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': gsi1pk, ...(before ? { ':before': before } : {}) },
      ScanIndexForward: false,
    }, page.limit, { atMost: page.limit + 1 });
    return { batches: items.map(fromItem), more: truncated };
  }

  /**
   * Applies a lifecycle event: reads the batch, asks the lifecycle for the next state (a BatchStateError, 409,
   * when the event does not apply) and writes it on the condition that nobody moved the batch meanwhile.
   * An event that leaves the state as it is (a second cancel) writes nothing. Undefined when there is no
   * such batch.
   */
  async move(id: string, event: BatchEvent, at: number, details: { error?: string; set?: BatchPlan } = {}): Promise<BatchRecord | undefined> {
    let lost: BatchStatus | undefined;
    for (let attempt = 1; attempt <= MOVE_ATTEMPTS; attempt += 1) {
      const batch = await this.get(id);
      if (!batch) return undefined;
      // Another step made the same move while this one tried: its result is this one's answer.
      if (lost !== undefined && batch.status === lost) return batch;
      const next = transition(batch.status, event);
      if (next === batch.status) return batch;
      const finalizedAt = isTerminal(next) ? at : null;
      const cancellingAt = next === 'cancelling' ? at : batch.cancelling_at;
      const error = details.error !== undefined ? { message: details.error } : batch.error;
      const plan = planUpdate(details.set);
      try {
        await this.db.send(new UpdateCommand({
          TableName: this.tableName,
          Key: itemKeys.batch(id),
          UpdateExpression: `SET #status = :next, version = :version, finalized_at = :finalized, cancelling_at = :cancelling, #error = :error${plan.expression}`,
          ConditionExpression: batch.version === 0 ? 'attribute_not_exists(version) OR version = :read' : 'version = :read',
          ExpressionAttributeNames: { '#status': 'status', '#error': 'error', ...plan.names },
          ExpressionAttributeValues: { ':next': next, ':version': batch.version + 1, ':read': batch.version, ':finalized': finalizedAt, ':cancelling': cancellingAt, ':error': error, ...plan.values },
        }));
        return applyPlan({ ...batch, status: next, version: batch.version + 1, finalized_at: finalizedAt, cancelling_at: cancellingAt, error }, details.set);
      } catch (err) {
        if (!isConditionFailed(err)) throw err;
        lost = next;
        await new Promise((resolve) => setTimeout(resolve, attempt * 5 + Math.random() * 10));
      }
    }
    throw new ConflictError(`Batch ${id} kept changing while it was being moved (${event}); try again`, { retryAfterSeconds: 1 });
  }

  /** Sets what the validating step learnt or did (outside any change of state). */
  async plan(id: string, set: BatchPlan): Promise<void> {
    const plan = planUpdate(set);
    if (!plan.expression) return;
    await this.db.send(new UpdateCommand({
      TableName: this.tableName,
      Key: itemKeys.batch(id),
      UpdateExpression: `SET ${plan.expression.slice(2)}`,
      ConditionExpression: 'attribute_exists(pk)',
      ...(Object.keys(plan.names).length > 0 ? { ExpressionAttributeNames: plan.names } : {}),
      ExpressionAttributeValues: plan.values,
    }));
  }

  /**
   * Every batch that has not ended, of every workspace (a Scan: for npm start's start-up, which queues their
   * next steps again, since its local queue keeps messages in memory only).
   */
  async unfinished(): Promise<BatchRecord[]> {
    const found: BatchRecord[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.db.send(new ScanCommand({
        TableName: this.tableName,
        FilterExpression: '#type = :batch',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: { ':batch': 'batch' },
        ExclusiveStartKey: startKey,
      }));
      for (const item of page.Items ?? []) {
        const batch = fromItem(item);
        if (!isTerminal(batch.status)) found.push(batch);
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return found;
  }

  /**
   * Stores the batch's lease (and, for a provider batch, its reference) unless it has one: the lease the
   * batch keeps, which is `lease` when this call stored it. A twin step that took another lease gives that
   * one back.
   */
  async claimLease(id: string, lease: BatchLeaseRef, providerBatch?: ProviderBatchRef): Promise<BatchLeaseRef> {
    try {
      await this.db.send(new UpdateCommand({
        TableName: this.tableName,
        Key: itemKeys.batch(id),
        UpdateExpression: providerBatch ? 'SET lease = :lease, provider_batch = :provider' : 'SET lease = :lease',
        ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(lease) OR lease = :none)',
        ExpressionAttributeValues: { ':lease': lease, ':none': null, ...(providerBatch ? { ':provider': providerBatch } : {}) },
      }));
      return lease;
    } catch (err) {
      if (!isConditionFailed(err)) throw err;
      const stored = (await this.get(id))?.lease;
      if (!stored) throw new Error(`batch ${id} is gone`);
      return stored;
    }
  }

  /** Marks the batch's lease as given back; true for the one call that did (a twin step's finds it done). */
  async leaseReturned(id: string): Promise<boolean> {
    try {
      await this.db.send(new UpdateCommand({
        TableName: this.tableName,
        Key: itemKeys.batch(id),
        UpdateExpression: 'SET lease.returned = :yes',
        ConditionExpression: 'lease.returned = :no',
        ExpressionAttributeValues: { ':yes': true, ':no': false },
      }));
      return true;
    } catch (err) {
      if (isConditionFailed(err)) return false;
      throw err;
    }
  }

  /** Deletes the batch's item (its results are the result repository's). */
  async delete(id: string): Promise<void> {
    await this.db.send(new DeleteCommand({ TableName: this.tableName, Key: itemKeys.batch(id) }));
  }
}

/** What the validating step sets on a batch: its item count, its model, and that its shards are queued. */
export interface BatchPlan {
  lease?: BatchLeaseRef;
  provider_batch?: ProviderBatchRef;
  total?: number;
  last_line?: number;
  model?: string | null;
  queued?: boolean;
  /** The results file written when it ended (its key in the batch bucket). */
  output?: string;
}

function planUpdate(set: BatchPlan | undefined): { expression: string; names: Record<string, string>; values: Record<string, unknown> } {
  const parts: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  if (set?.total !== undefined) {
    parts.push('request_counts.#total = :total');
    names['#total'] = 'total';
    values[':total'] = set.total;
  }
  if (set?.lease !== undefined) {
    parts.push('lease = :lease');
    values[':lease'] = set.lease;
  }
  if (set?.provider_batch !== undefined) {
    parts.push('provider_batch = :provider_batch');
    values[':provider_batch'] = set.provider_batch;
  }
  if (set?.last_line !== undefined) {
    parts.push('last_line = :last_line');
    values[':last_line'] = set.last_line;
  }
  if (set?.model !== undefined) {
    parts.push('#model = :model');
    names['#model'] = 'model';
    values[':model'] = set.model;
  }
  if (set?.queued !== undefined) {
    parts.push('queued = :queued');
    values[':queued'] = set.queued;
  }
  if (set?.output !== undefined) {
    parts.push('#output = :output');
    names['#output'] = 'output';
    values[':output'] = set.output;
  }
  return { expression: parts.length ? `, ${parts.join(', ')}` : '', names, values };
}

function applyPlan(batch: BatchRecord, set: BatchPlan | undefined): BatchRecord {
  if (!set) return batch;
  return {
    ...batch,
    ...(set.model !== undefined ? { model: set.model } : {}),
    ...(set.queued !== undefined ? { queued: set.queued } : {}),
    ...(set.last_line !== undefined ? { last_line: set.last_line } : {}),
    ...(set.provider_batch !== undefined ? { provider_batch: set.provider_batch } : {}),
    ...(set.lease !== undefined ? { lease: set.lease } : {}),
    ...(set.output !== undefined ? { output: set.output } : {}),
    request_counts: { ...batch.request_counts, ...(set.total !== undefined ? { total: set.total } : {}) },
  };
}

function toItem(batch: BatchRecord): Record<string, unknown> {
  return {
    ...itemKeys.batch(batch.id),
    ...itemKeys.batchListing(batch.org_id, batch.workspace_id, batch.created_at, batch.id),
    type: 'batch',
    ...batch,
  };
}

function fromItem(item: Record<string, unknown>): BatchRecord {
  const counts = (item.request_counts ?? {}) as Record<string, unknown>;
  return {
    id: item.id as string,
    org_id: item.org_id as string,
    workspace_id: item.workspace_id as string,
    key_hash: item.key_hash as string,
    status: item.status as BatchStatus,
    endpoint: item.endpoint as BatchEndpoint,
    model: (item.model as string | null | undefined) ?? null,
    completion_window: '24h',
    created_at: Number(item.created_at),
    expires_at: Number(item.expires_at),
    finalized_at: item.finalized_at === null || item.finalized_at === undefined ? null : Number(item.finalized_at),
    cancelling_at: item.cancelling_at === null || item.cancelling_at === undefined ? null : Number(item.cancelling_at),
    error: (item.error as { message: string } | null | undefined) ?? null,
    request_counts: { total: Number(counts.total ?? 0), completed: Number(counts.completed ?? 0), failed: Number(counts.failed ?? 0) },
    provider_only: (item.provider_only as string[] | null | undefined) ?? null,
    metadata: (item.metadata as Record<string, string> | null | undefined) ?? null,
    input: item.input as BatchInput,
    queued: item.queued === true,
    lease: (item.lease as BatchLeaseRef | null | undefined) ?? null,
    provider_batch: (item.provider_batch as ProviderBatchRef | null | undefined) ?? null,
    last_line: typeof item.last_line === 'number' ? item.last_line : item.last_line === undefined || item.last_line === null ? null : Number(item.last_line),
    output: typeof item.output === 'string' ? item.output : null,
    usage: usageOf(item.usage),
    // An item written without one (by hand) starts at 0; move() then writes on its absence.
    version: Number(item.version ?? 0),
  };
}
