// The delivery queue through SQS: SendMessageBatch, entries SQS refused sent again a few times; and the
// backoff of a failed delivery (its message hidden for longer at each receive).
import { ChangeMessageVisibilityBatchCommand, SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { DeliveryQueue } from './outbox.js';

const SEND_ATTEMPTS = 5;

export class SqsDeliveryQueue implements DeliveryQueue {
  constructor(private readonly sqs: Pick<SQSClient, 'send'>, readonly queueUrl: string) {}

  async send(bodies: readonly string[]): Promise<void> {
    let entries = bodies.map((body, index) => ({ Id: String(index), MessageBody: body }));
    for (let attempt = 1; entries.length > 0; attempt += 1) {
      const reply = await this.sqs.send(new SendMessageBatchCommand({ QueueUrl: this.queueUrl, Entries: entries }));
      const failed = new Set((reply.Failed ?? []).map((failure) => failure.Id));
      entries = entries.filter((entry) => failed.has(entry.Id));
      if (entries.length > 0 && attempt >= SEND_ATTEMPTS) {
        throw new Error(`SQS refused ${entries.length} delivery message(s): ${(reply.Failed ?? []).map((failure) => failure.Message).join('; ')}`);
      }
      if (entries.length > 0) await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
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
