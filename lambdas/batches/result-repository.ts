// A batch's item results, one item each, keyed by the item's line in the input, so they page in input
// order. Writing a result and counting it are one transaction conditional on the result not being there:
// an item redelivered by SQS, retried by a worker or run again by a restarted execution is recorded and
// counted once, whichever copy gets there first; the others learn it was done already.
import { BatchWriteCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { cancellationOf } from '../platform/dynamo/write-failures.js';
import { queryItems, queryUpTo } from '../platform/dynamo/query.js';
import type { BatchResult } from './schemas.js';
import { NO_USAGE, type BatchUsage } from './batch-repository.js';

/** One item's outcome: its input line, and the result as SPEC shows it. */
export interface StoredResult {
  line: number;
  result: BatchResult;
}

const CONFLICT_ATTEMPTS = 6;
/** Results written in one transaction (DynamoDB takes 100 items; one is the batch's counts). */
const RESULTS_PER_TRANSACTION = 99;
/** The largest line number a result key holds (9 digits). */
const MAX_LINE = 999_999_999;

export class BatchResultRepository {
  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string) {}

  /**
   * Records an item's result and counts it on the batch (completed when it has a response with a 2xx status,
   * failed otherwise) with its usage, once. 'already' when this item's result was recorded before (then nothing changes);
   * 'no-batch' when the batch is gone.
   */
  async record(batchId: string, stored: StoredResult, usage: BatchUsage = NO_USAGE): Promise<'recorded' | 'already' | 'no-batch'> {
    const ok = succeeded(stored.result);
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.db.send(new TransactWriteCommand({
          TransactItems: [
            {
              Put: {
                TableName: this.tableName,
                Item: { ...itemKeys.batchResult(batchId, stored.line), type: 'batch_result', line: stored.line, ...stored.result },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            {
              Update: {
                TableName: this.tableName,
                Key: itemKeys.batch(batchId),
                UpdateExpression: `ADD request_counts.${ok ? 'completed' : 'failed'} :one, #usage.prompt_tokens :prompt, #usage.completion_tokens :completion, #usage.total_tokens :tokens, #usage.cost_nanos :cost`,
                ConditionExpression: 'attribute_exists(pk)',
                ExpressionAttributeNames: { '#usage': 'usage' },
                ExpressionAttributeValues: { ':one': 1, ':prompt': usage.prompt_tokens, ':completion': usage.completion_tokens, ':tokens': usage.total_tokens, ':cost': usage.cost_nanos },
              },
            },
          ],
        }));
        return 'recorded';
      } catch (err) {
        const cancellation = cancellationOf(err);
        if (!cancellation) throw err;
        if (cancellation.failedAt(0)) return 'already';
        if (cancellation.failedAt(1)) return 'no-batch';
        // Two workers' transactions on the batch item at once: DynamoDB refuses one whole; it tries again.
        if (!cancellation.conflict || attempt >= CONFLICT_ATTEMPTS) throw err;
        await new Promise((resolve) => setTimeout(resolve, Math.min(200, 5 * 2 ** attempt) * (0.5 + Math.random() / 2)));
      }
    }
  }

  /** Records results of items that cannot run (no usage): recordMany. */
  recordFailed(batchId: string, stored: readonly StoredResult[]): Promise<void> {
    return this.recordMany(batchId, stored.map((one) => ({ ...one, usage: NO_USAGE })));
  }

  /**
   * Records results and counts them with their usage, up to 99 in one transaction; where one of them is there
   * already (a step run again), each is recorded on its own (and those already there are not counted again).
   */
  async recordMany(batchId: string, stored: ReadonlyArray<StoredResult & { usage: BatchUsage }>): Promise<void> {
    for (let start = 0; start < stored.length; start += RESULTS_PER_TRANSACTION) {
      const group = stored.slice(start, start + RESULTS_PER_TRANSACTION);
      const completed = group.filter((one) => succeeded(one.result)).length;
      const sum = (field: keyof BatchUsage) => group.reduce((total, one) => total + one.usage[field], 0);
      for (let attempt = 1; ; attempt += 1) {
        try {
          await this.db.send(new TransactWriteCommand({
            TransactItems: [
              ...group.map((one) => ({
                Put: {
                  TableName: this.tableName,
                  Item: { ...itemKeys.batchResult(batchId, one.line), type: 'batch_result', line: one.line, ...one.result },
                  ConditionExpression: 'attribute_not_exists(pk)',
                },
              })),
              {
                Update: {
                  TableName: this.tableName,
                  Key: itemKeys.batch(batchId),
                  UpdateExpression: 'ADD request_counts.completed :completed, request_counts.failed :failed, #usage.prompt_tokens :prompt, #usage.completion_tokens :completion, #usage.total_tokens :tokens, #usage.cost_nanos :cost',
                  ConditionExpression: 'attribute_exists(pk)',
                  ExpressionAttributeNames: { '#usage': 'usage' },
                  ExpressionAttributeValues: {
                    ':completed': completed, ':failed': group.length - completed,
                    ':prompt': sum('prompt_tokens'), ':completion': sum('completion_tokens'), ':tokens': sum('total_tokens'), ':cost': sum('cost_nanos'),
                  },
                },
              },
            ],
          }));
          break;
        } catch (err) {
          const cancellation = cancellationOf(err);
          if (!cancellation) throw err;
          if (cancellation.conflict && attempt < CONFLICT_ATTEMPTS) {
            await new Promise((resolve) => setTimeout(resolve, Math.min(200, 5 * 2 ** attempt) * (0.5 + Math.random() / 2)));
            continue;
          }
          if (cancellation.failedAt(group.length)) return;
          for (const one of group) await this.record(batchId, one, one.usage);
          break;
        }
      }
    }
  }

  /** Deletes every result of a batch. */
  deleteAll(batchId: string): Promise<number> {
    return deleteResults(this.db, this.tableName, batchId);
  }

  /** Results in input order, from the line after `afterLine` (0: from the start), at most `limit`. */
  async page(batchId: string, afterLine: number, limit: number): Promise<{ results: StoredResult[]; more: boolean }> {
    const { items, truncated } = await queryUpTo(this.db, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: {
        ':pk': itemKeys.batchResultsOf(batchId).pk,
        ':from': itemKeys.batchResult(batchId, afterLine + 1).sk,
        ':to': itemKeys.batchResult(batchId, MAX_LINE).sk,
      },
      ConsistentRead: true,
    }, limit, { atMost: limit + 1 });
    return { results: items.map(resultFromItem), more: truncated };
  }
}

/** Completed when it has a response with a 2xx status, failed otherwise. */
function succeeded(result: BatchResult): boolean {
  return result.response !== null && result.response.status_code >= 200 && result.response.status_code < 300;
}

/** Deletes every result of a batch (25 at a time); unprocessed deletes are sent again. */
export async function deleteResults(db: DynamoDBDocumentClient, tableName: string, batchId: string): Promise<number> {
  let deleted = 0;
  let keys: Array<{ pk: string; sk: string }> = [];
  const send = async () => {
    let requests = keys.map((key) => ({ DeleteRequest: { Key: key } }));
    keys = [];
    for (let attempt = 1; requests.length > 0; attempt += 1) {
      const reply = await db.send(new BatchWriteCommand({ RequestItems: { [tableName]: requests } }));
      requests = (reply.UnprocessedItems?.[tableName] ?? []) as typeof requests;
      if (requests.length > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 20 * 2 ** attempt)));
    }
  };
  for await (const item of queryItems(db, {
    TableName: tableName,
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': itemKeys.batchResultsOf(batchId).pk, ':prefix': itemKeys.batchResultsOf(batchId).skPrefix },
    ProjectionExpression: 'pk, sk',
  })) {
    keys.push({ pk: item.pk as string, sk: item.sk as string });
    deleted += 1;
    if (keys.length === 25) await send();
  }
  if (keys.length > 0) await send();
  return deleted;
}

function resultFromItem(item: Record<string, unknown>): StoredResult {
  return {
    line: Number(item.line),
    result: {
      custom_id: item.custom_id as string,
      id: (item.id as string | null | undefined) ?? null,
      error: (item.error as BatchResult['error'] | undefined) ?? null,
      response: (item.response as BatchResult['response'] | undefined) ?? null,
    },
  };
}

/** Every result of a batch so far as JSON Lines text, in input order, a page (`pageSize` results) per chunk. */
export async function* resultLines(results: Pick<BatchResultRepository, 'page'>, batchId: string, pageSize = 500): AsyncGenerator<string> {
  let after = 0;
  for (;;) {
    const page = await results.page(batchId, after, pageSize);
    if (page.results.length > 0) yield page.results.map((stored) => JSON.stringify(stored.result)).join('\n') + '\n';
    if (!page.more || page.results.length === 0) return;
    after = page.results[page.results.length - 1]!.line;
  }
}
