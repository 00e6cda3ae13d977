// The batch work queue: the shards of a batch's items, through SQS to the worker function. Handling a
// message twice is harmless (batches/worker.ts), since SQS delivers at least once.
import type { SQSClient } from '@aws-sdk/client-sqs';
import { sendMessageBatch } from '../platform/aws/sqs.js';
import type { Shard } from './validation.js';

/** Run the items of one byte range of the input (the worker function's SQS messages). */
export type BatchMessage = { kind: 'shard'; batch_id: string; shard: Shard };

export interface BatchQueue {
  /** Sends the messages (durably, or throws). */
  send(messages: readonly BatchMessage[]): Promise<void>;
}

export class SqsBatchQueue implements BatchQueue {
  constructor(private readonly sqs: SQSClient, private readonly queueUrl: string) {}

  async send(messages: readonly BatchMessage[]): Promise<void> {
    for (let start = 0; start < messages.length; start += 10) {
      const refused = await sendMessageBatch(this.sqs, this.queueUrl, messages.slice(start, start + 10).map((message) => JSON.stringify(message)));
      if (refused.length > 0) throw new Error(`SQS refused ${refused.length} batch message(s)`);
    }
  }
}

/** A message from its SQS body; undefined for anything else (it is dropped and logged by the worker). */
export function parseBatchMessage(body: string): BatchMessage | undefined {
  try {
    const value = JSON.parse(body) as Partial<BatchMessage> | null;
    if (!value || typeof value !== 'object' || typeof value.batch_id !== 'string') return undefined;
    if (value.kind === 'shard') {
      const shard = (value as { shard?: Partial<Shard> }).shard;
      if (!shard || ![shard.firstLine, shard.start, shard.end, shard.items].every((n) => Number.isInteger(n) && (n as number) >= 0)) return undefined;
      return { kind: 'shard', batch_id: value.batch_id, shard: shard as Shard };
    }
    return undefined;
  } catch {
    return undefined;
  }
}
