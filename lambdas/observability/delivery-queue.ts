// The delivery queue through SQS: SendMessageBatch (platform/aws/sqs.ts); and the
// backoff of a failed delivery (its message hidden for longer at each receive).
import { ChangeMessageVisibilityBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { sendMessageBatch } from '../platform/aws/sqs.js';
import type { DeliveryQueue } from './outbox.js';

export class SqsDeliveryQueue implements DeliveryQueue {
  constructor(private readonly sqs: Pick<SQSClient, 'send'>, readonly queueUrl: string) {}

  /** Sends up to ten bodies (within SQS's batch size); the indexes of those SQS would not take. */
  send(bodies: readonly string[]): Promise<number[]> {
    return sendMessageBatch(this.sqs, this.queueUrl, bodies);
  }

  /** Hides failed messages for their backoff (seconds each) before they are received again. */
  async delay(messages: ReadonlyArray<{ receiptHandle: string; seconds: number }>): Promise<void> {
    for (let start = 0; start < messages.length; start += 10) {
      await this.sqs.send(new ChangeMessageVisibilityBatchCommand({
        QueueUrl: this.queueUrl,
        Entries: messages.slice(start, start + 10).map((message, index) => ({ Id: String(index), ReceiptHandle: message.receiptHandle, VisibilityTimeout: message.seconds })),
      }));
    }
  }
}
