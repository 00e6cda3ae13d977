// A batch item's end, written once: its result, the page of its generation record (which charges it, when
// the meter aggregator applies it) and the batch's counts and usage, in one transaction that holds only if the
// item has no result yet. An item run twice (an SQS redelivery, a shard rerun after a crash) is therefore
// recorded, counted and charged once, whichever run gets there first, and a crash can never leave an item
// charged without its result or with its result but uncharged. Items commit in groups (one transaction for
// up to GROUP_ITEMS of them); a group refused because one of its items is done already is written again item
// by item.
import { TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { pageToItem } from '../billing/page-repository.js';
import type { Page } from '../billing/pages.js';
import { itemKeys } from '../platform/dynamo/item-keys.js';
import { transactRetryingConflicts } from '../platform/dynamo/conflict-retry.js';
import type { Logger } from '../platform/logger.js';
import type { BatchUsage } from './batch-repository.js';
import type { BatchResult } from './schemas.js';

export interface ItemCommit {
  batchId: string;
  line: number;
  result: BatchResult;
  usage: BatchUsage;
  /** The item's generation record in its page (none when the item produced no record). */
  page?: Page;
}

/** committed: this run's result (and record) are the item's; already: another run's are. */
export type CommitOutcome = 'committed' | 'already';

/** Items per transaction: two writes each, beside one count update per batch (DynamoDB takes 100). */
const GROUP_ITEMS = 40;
/** Bytes per transaction, under DynamoDB's 4 MB. */
const GROUP_BYTES = 3_000_000;
/** One result item under DynamoDB's 400 KB, with room for its keys. */
export const MAX_RESULT_BYTES = 350_000;
const WAIT_MS = 5;
const CONFLICT_ATTEMPTS = 6;

interface Waiting {
  commit: ItemCommit;
  bytes: number;
  resolve: (outcome: CommitOutcome) => void;
  reject: (error: unknown) => void;
}

function succeeded(result: BatchResult): boolean {
  return result.response !== null && result.response.status_code >= 200 && result.response.status_code < 300;
}

/** A result too large for one item: kept as that item's error (its record, if any, still charges it). */
function storable(commit: ItemCommit): ItemCommit {
  const bytes = Buffer.byteLength(JSON.stringify(commit.result));
  if (bytes <= MAX_RESULT_BYTES) return commit;
  return {
    ...commit,
    result: {
      custom_id: commit.result.custom_id,
      id: commit.result.id,
      error: { message: `The reply is ${bytes} bytes; a batch result holds at most ${MAX_RESULT_BYTES}`, param: null, type: 'api_error', error_type: 'payload_too_large' },
      response: null,
    },
  };
}

export class ItemCommitter {
  private waiting: Waiting[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly db: DynamoDBDocumentClient, private readonly tableName: string, private readonly log: Logger) {}

  commit(item: ItemCommit): Promise<CommitOutcome> {
    const commit = storable(item);
    const bytes = Buffer.byteLength(JSON.stringify(commit.result)) + ((commit.page ? (pageToItem(commit.page).data as Buffer).length : 0));
    return new Promise((resolve, reject) => {
      this.waiting.push({ commit, bytes, resolve, reject });
      if (this.waiting.length >= GROUP_ITEMS) this.write();
      else this.timer ??= setTimeout(() => this.write(), WAIT_MS);
    });
  }

  private write(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.waiting.length > 0) {
      const group: Waiting[] = [];
      let bytes = 0;
      const lines = new Set<string>();
      while (this.waiting.length > 0 && group.length < GROUP_ITEMS) {
        const next = this.waiting[0]!;
        const key = `${next.commit.batchId}:${next.commit.line}`;
        // Two runs of one item in one process: never in one transaction (DynamoDB refuses that outright).
        if (lines.has(key) || (group.length > 0 && bytes + next.bytes > GROUP_BYTES)) break;
        lines.add(key);
        bytes += next.bytes;
        group.push(this.waiting.shift()!);
      }
      void this.writeGroup(group);
    }
  }

  private async writeGroup(group: Waiting[]): Promise<void> {
    try {
      if (group.length > 1 && await this.transact(group.map((one) => one.commit))) {
        for (const one of group) one.resolve('committed');
        return;
      }
      // Alone: an item done already is told so; the others commit.
      for (const one of group) {
        try {
          one.resolve(await this.writeOne(one.commit));
        } catch (err) {
          one.reject(err);
        }
      }
    } catch (err) {
      for (const one of group) one.reject(err);
    }
  }

  /** True once written; false when one of the items was refused (it has a result already, or its batch is gone). */
  private async transact(commits: ItemCommit[]): Promise<boolean> {
    const refusal = await transactRetryingConflicts(() => this.db.send(new TransactWriteCommand({ TransactItems: this.items(commits) })), { attempts: CONFLICT_ATTEMPTS });
    return refusal === undefined;
  }

  private async writeOne(commit: ItemCommit): Promise<CommitOutcome> {
    if (await this.transact([commit])) return 'committed';
    // Refused: its result is there (another run's), or its batch is gone (deleted); either way not this run's.
    this.log.info('batch item done by another run; this run is not recorded or charged', { batch_id: commit.batchId, line: commit.line });
    return 'already';
  }

  private items(commits: ItemCommit[]): NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']> {
    const items: NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']> = [];
    const sums = new Map<string, { completed: number; failed: number; usage: BatchUsage }>();
    for (const commit of commits) {
      items.push({
        Put: {
          TableName: this.tableName,
          Item: { ...itemKeys.batchResult(commit.batchId, commit.line), type: 'batch_result', line: commit.line, ...commit.result },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      });
      // The page carries no condition of its own: its item's result is the one that says whether it ran.
      if (commit.page) items.push({ Put: { TableName: this.tableName, Item: pageToItem(commit.page) } });
      const sum = sums.get(commit.batchId) ?? { completed: 0, failed: 0, usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost_nanos: 0 } };
      if (succeeded(commit.result)) sum.completed += 1;
      else sum.failed += 1;
      for (const field of ['prompt_tokens', 'completion_tokens', 'total_tokens', 'cost_nanos'] as const) sum.usage[field] += commit.usage[field];
      sums.set(commit.batchId, sum);
    }
    for (const [batchId, sum] of sums) {
      items.push({
        Update: {
          TableName: this.tableName,
          Key: itemKeys.batch(batchId),
          UpdateExpression: 'ADD request_counts.completed :completed, request_counts.failed :failed, #usage.prompt_tokens :prompt, #usage.completion_tokens :completion, #usage.total_tokens :tokens, #usage.cost_nanos :cost',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#usage': 'usage' },
          ExpressionAttributeValues: {
            ':completed': sum.completed, ':failed': sum.failed, ':prompt': sum.usage.prompt_tokens, ':completion': sum.usage.completion_tokens,
            ':tokens': sum.usage.total_tokens, ':cost': sum.usage.cost_nanos,
          },
        },
      });
    }
    return items;
  }
}
