// npm start's SQS event source mapping: long-polls a queue (on the local SQS stand-in, fauxqs, through the
// real @aws-sdk/client-sqs) and calls a worker handler with the event Lambda would give it, as the stream
// feeder does for the meter aggregator. What it keeps of Lambda's SQS mapping:
//   - batches of up to `batchSize` messages, `concurrency` batches in flight at most;
//   - `batchItemFailures` in the reply (ReportBatchItemFailures): every message not named is deleted, the
//     named ones are left to come back once their visibility timeout passes;
//   - a thrown error (or a reply naming a message not in the batch): nothing is deleted, the whole batch
//     comes back;
//   - a message received more often than the queue's redrive policy allows goes to its dead-letter queue:
//     that is SQS's own doing (the stand-in's), not the mapping's.
// Nothing here throws out of the loop: the stand-in not answering is logged once a minute and retried.
import {
  ChangeMessageVisibilityBatchCommand, DeleteMessageBatchCommand, GetQueueAttributesCommand, ReceiveMessageCommand, type Message, type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { Logger } from '../../lambdas/platform/logger.js';

export interface SqsEventSourceOptions {
  sqs: SQSClient;
  queueUrl: string;
  handler: (event: SQSEvent) => Promise<SQSBatchResponse | void>;
  log: Logger;
  /** Messages per invocation (Lambda's BatchSize; SQS returns at most 10 per receive). */
  batchSize?: number;
  /** Invocations at once (Lambda's maximum concurrency of the mapping). */
  concurrency?: number;
  /** How long one receive waits for messages, in seconds (long polling). */
  waitSeconds?: number;
  region?: string;
}

export interface SqsEventSource {
  /** Stops polling and waits for the invocations in flight (and a receive in progress, at most waitSeconds). */
  stop(): Promise<void>;
}

const OUTAGE_RETRY_MS = 1000;
const OUTAGE_REPORT_MS = 60_000;

export async function startSqsEventSource(options: SqsEventSourceOptions): Promise<SqsEventSource> {
  const { sqs, queueUrl, handler, log } = options;
  const batchSize = Math.min(10, Math.max(1, options.batchSize ?? 10));
  const concurrency = Math.max(1, options.concurrency ?? 2);
  const waitSeconds = options.waitSeconds ?? 1;
  const region = options.region ?? 'us-east-1';
  const attributes = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
  const queueArn = attributes.Attributes?.QueueArn ?? queueUrl;
  let stopped = false;
  let lastOutageReport = 0;

  const toRecord = (message: Message): SQSRecord => ({
    messageId: message.MessageId!,
    receiptHandle: message.ReceiptHandle!,
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: message.Attributes?.ApproximateReceiveCount ?? '1',
      SentTimestamp: message.Attributes?.SentTimestamp ?? String(Date.now()),
      SenderId: message.Attributes?.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: message.Attributes?.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: region,
  });

  const invoke = async (messages: Message[]): Promise<void> => {
    const records = messages.map(toRecord);
    let done: SQSRecord[];
    try {
      const reply = await handler({ Records: records });
      const failed = new Set((reply?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier));
      if ([...failed].some((id) => !records.some((record) => record.messageId === id))) {
        log.error('SQS worker named a message that is not in its batch: the whole batch comes back', { queue: queueArn, failed: [...failed] });
        return;
      }
      done = records.filter((record) => !failed.has(record.messageId));
    } catch (err) {
      log.error('SQS worker failed: its batch comes back after the visibility timeout', { queue: queueArn, error: String(err) });
      return;
    }
    if (done.length === 0) return;
    const deleted = await sqs.send(new DeleteMessageBatchCommand({
      QueueUrl: queueUrl,
      Entries: done.map((record, index) => ({ Id: String(index), ReceiptHandle: record.receiptHandle })),
    }));
    if (deleted.Failed?.length) log.warn('SQS messages not deleted: they come back and their worker must find them done', { queue: queueArn, failed: deleted.Failed.length });
  };

  // One idle poller at a time polls an idle queue (one receive a waitSeconds): the others wait until a receive
  // brings messages, then poll too, until they find the queue empty again; the last of them to find it so
  // keeps polling. Eight pollers long-polling an idle queue once a second each were a steady tax on the
  // process that serves requests (late stream chunks); and a fixed scout, busy with a long batch, left new
  // messages unread until it was done, while the others waited to be woken.
  let polling = 0;
  let wake: (() => void) | undefined;
  let woken = new Promise<void>((resolve) => { wake = resolve; });
  const rouse = () => {
    wake?.();
    woken = new Promise<void>((resolve) => { wake = resolve; });
  };

  const poller = async (): Promise<void> => {
    while (!stopped) {
      let messages: Message[];
      polling += 1;
      try {
        const received = await sqs.send(new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: batchSize,
          WaitTimeSeconds: waitSeconds,
          MessageSystemAttributeNames: ['All'],
        }));
        messages = received.Messages ?? [];
      } catch (err) {
        polling -= 1;
        if (stopped) return;
        if (Date.now() - lastOutageReport >= OUTAGE_REPORT_MS) {
          lastOutageReport = Date.now();
          log.warn('SQS stand-in not answering; retrying', { queue: queueUrl, error: String(err) });
        }
        await new Promise((resolve) => setTimeout(resolve, OUTAGE_RETRY_MS));
        continue;
      }
      polling -= 1;
      if (stopped && messages.length > 0) {
        // Received while stopping: handed back at once rather than hidden for a visibility timeout.
        await sqs.send(new ChangeMessageVisibilityBatchCommand({
          QueueUrl: queueUrl,
          Entries: messages.map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle!, VisibilityTimeout: 0 })),
        })).catch((err: unknown) => log.warn('SQS messages received while stopping not handed back; they return after their visibility timeout', { queue: queueUrl, error: String(err) }));
        return;
      }
      if (messages.length === 0 && waitSeconds === 0) await new Promise((resolve) => setTimeout(resolve, 50));
      // Another poller is polling: this one waits to be roused (checked and awaited in one go: a stop after
      // this point rouses it). None is: this one goes on polling.
      if (messages.length === 0 && polling > 0 && !stopped) await woken;
      if (messages.length > 0) {
        rouse();
        try {
          await invoke(messages);
        } catch (err) {
          log.warn('SQS delete failed; the batch comes back', { queue: queueUrl, error: String(err) });
        }
      }
    }
  };

  // One poller per concurrent invocation: each receives, invokes and deletes in turn.
  const pollers = Array.from({ length: concurrency }, () => poller());
  return {
    async stop() {
      // A receive in progress is let finish (at most waitSeconds): cancelling it on this side would leave
      // the stand-in (and SQS) to hand the next message to a poll nobody reads.
      stopped = true;
      rouse();
      await Promise.allSettled(pollers);
    },
  };
}
