// The delivery queue through SQS: SendMessageBatch, entries SQS refused sent again a few times; and the
// backoff of a failed delivery (its message hidden for longer at each receive).
import { ChangeMessageVisibilityBatchCommand, SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { DeliveryQueue } from './outbox.js';

const SEND_ATTEMPTS = 5;

export class SqsDeliveryQueue implements DeliveryQueue {
  constructor(private readonly sqs: Pick<SQSClient, 'send'>, readonly queueUrl: string) {}

  /**
   * Sends up to ten bodies (within SQS's batch size); the indexes of those SQS would not take. Entries it
   * refused for a passing reason are sent again, a few times; those refused for what they are are not.
   */
  async send(bodies: readonly string[]): Promise<number[]> {
    let entries = bodies.map((body, index) => ({ Id: String(index), MessageBody: body }));
    const refused: number[] = [];
    for (let attempt = 1; entries.length > 0; attempt += 1) {
      const reply = await this.sqs.send(new SendMessageBatchCommand({ QueueUrl: this.queueUrl, Entries: entries }));
      const failures = reply.Failed ?? [];
      for (const failure of failures) if (failure.SenderFault) refused.push(Number(failure.Id));
      const again = new Set(failures.filter((failure) => !failure.SenderFault).map((failure) => failure.Id));
      entries = entries.filter((entry) => again.has(entry.Id));
      if (entries.length > 0 && attempt >= SEND_ATTEMPTS) return [...refused, ...entries.map((entry) => Number(entry.Id))].sort((a, b) => a - b);
      if (entries.length > 0) await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
    return refused.sort((a, b) => a - b);
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
