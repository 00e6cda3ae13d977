// npm start's SQS event source mapping against the SQS stand-in (fauxqs) through the real client: handled
// messages are deleted, a reported failure comes back, a thrown error brings the whole batch back, and a
// message that keeps failing ends in the dead-letter queue by the queue's redrive policy.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startFauxqs } from 'fauxqs';
import {
  CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageBatchCommand, SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { startSqsEventSource, type SqsEventSource } from '../../bin/local/sqs-event-source.js';
import { Logger } from '../../lambdas/platform/logger.js';
import { waitFor } from '../support/wait.js';

let server: Awaited<ReturnType<typeof startFauxqs>>;
let sqs: SQSClient;
const logs: string[] = [];
const log = new Logger((line) => { logs.push(line); });

beforeAll(async () => {
  server = await startFauxqs({ port: 0, logger: false });
  sqs = new SQSClient({ endpoint: server.address, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
});

afterAll(async () => {
  sqs?.destroy();
  await server?.stop();
});

let queues = 0;
async function queue(maxReceiveCount = 3): Promise<{ url: string; dlq: string }> {
  queues += 1;
  const dlq = (await sqs.send(new CreateQueueCommand({ QueueName: `dlq-${queues}` }))).QueueUrl!;
  const dlqArn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlq, AttributeNames: ['QueueArn'] }))).Attributes!.QueueArn!;
  const url = (await sqs.send(new CreateQueueCommand({
    QueueName: `work-${queues}`,
    Attributes: { VisibilityTimeout: '1', RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount }) },
  }))).QueueUrl!;
  return { url, dlq };
}

async function send(url: string, bodies: string[]): Promise<void> {
  for (let at = 0; at < bodies.length; at += 10) {
    await sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: bodies.slice(at, at + 10).map((body, i) => ({ Id: String(i), MessageBody: body })) }));
  }
}

async function drain(url: string): Promise<string[]> {
  const bodies: string[] = [];
  for (;;) {
    const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    if (Messages.length === 0) return bodies;
    bodies.push(...Messages.map((m) => m.Body!));
  }
}

describe('SQS event source (local)', () => {
  let source: SqsEventSource | undefined;
  afterAll(async () => { await source?.stop(); });

  it('hands every message to the worker once, in Lambda\'s event shape, and deletes it', async () => {
    const { url } = await queue();
    const seen: string[] = [];
    const events: SQSEvent[] = [];
    source = await startSqsEventSource({ sqs, queueUrl: url, log, batchSize: 5, concurrency: 2, handler: async (event) => { events.push(event); seen.push(...event.Records.map((r) => r.body)); } });
    const bodies = Array.from({ length: 23 }, (_, i) => `m${i}`);
    await send(url, bodies);
    await waitFor(() => seen.length >= 23, { what: 'every message handled' });
    // Past one visibility timeout nothing came back: all were deleted.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await source.stop();
    source = undefined;
    expect(seen.sort()).toEqual([...bodies].sort());
    expect(Math.max(...events.map((e) => e.Records.length))).toBeLessThanOrEqual(5);
    expect(events[0]!.Records[0]).toMatchObject({ eventSource: 'aws:sqs', eventSourceARN: expect.stringMatching(/^arn:aws:sqs:.*:work-/), attributes: { ApproximateReceiveCount: '1' } });
    expect(await drain(url)).toEqual([]);
  });

  it('brings back only the messages a worker reports as failed, and the whole batch when it throws', async () => {
    const { url } = await queue(5);
    const attempts = new Map<string, number>();
    let threw = false;
    source = await startSqsEventSource({
      sqs, queueUrl: url, log, batchSize: 10, concurrency: 1,
      handler: async (event): Promise<SQSBatchResponse> => {
        for (const record of event.Records) attempts.set(record.body, (attempts.get(record.body) ?? 0) + 1);
        if (!threw && event.Records.some((r) => r.body === 'throw')) { threw = true; throw new Error('worker crashed'); }
        // 'flaky' fails its first delivery only.
        return { batchItemFailures: event.Records.filter((r) => r.body === 'flaky' && attempts.get('flaky') === 1).map((r) => ({ itemIdentifier: r.messageId })) };
      },
    });
    await send(url, ['ok', 'flaky', 'throw']);
    await waitFor(() => (attempts.get('flaky') ?? 0) >= 2 && (attempts.get('throw') ?? 0) >= 2, { what: 'redeliveries', timeoutMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await source.stop();
    source = undefined;
    expect(attempts.get('flaky')).toBe(2);
    expect(attempts.get('throw')).toBe(2);
    // 'ok' shared a batch with 'throw' only if they arrived together: then it came back with it, else once.
    expect([1, 2]).toContain(attempts.get('ok'));
    expect(logs.some((line) => line.includes('worker crashed'))).toBe(true);
    expect(await drain(url)).toEqual([]);
  });

  it('reads a new message while another invocation is still busy: an idle poller is always polling', async () => {
    queues += 1;
    const url = (await sqs.send(new CreateQueueCommand({ QueueName: `busy-${queues}`, Attributes: { VisibilityTimeout: '60' } }))).QueueUrl!;
    let release: (() => void) | undefined;
    const blocked = new Promise<void>((resolve) => { release = resolve; });
    const handled: string[] = [];
    const busy = await startSqsEventSource({
      sqs, queueUrl: url, log, batchSize: 1, concurrency: 3, waitSeconds: 1,
      handler: async (event) => {
        handled.push(...event.Records.map((r) => r.body));
        if (event.Records.some((r) => r.body === 'slow')) await blocked;
      },
    });
    try {
      // Past the first receive of every poller: one of them polls the idle queue, the others wait.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await send(url, ['slow']);
      await waitFor(() => handled.includes('slow'));
      // Whichever poller took 'slow' is busy with it; the next message must not wait for it.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await send(url, ['next']);
      await waitFor(() => handled.includes('next'), { timeoutMs: 5000, what: 'the second message' });
    } finally {
      release!();
      await busy.stop();
    }
  });

  it('stops without hiding a message sent while a receive was waiting', async () => {
    const { url } = await queue();
    const handled: string[] = [];
    const stopping = await startSqsEventSource({ sqs, queueUrl: url, log, concurrency: 1, waitSeconds: 1, handler: async (event) => { handled.push(...event.Records.map((r) => r.body)); } });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const stopped = stopping.stop();
    await send(url, ['late']);
    await stopped;
    // Not handled by the stopped source, and at once receivable by whoever polls next.
    const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, MessageSystemAttributeNames: ['All'] }));
    expect(handled).toEqual([]);
    expect(Messages.map((m) => m.Body)).toEqual(['late']);
  });

  it('leaves a message that always fails to the queue\'s dead-letter queue', async () => {
    const { url, dlq } = await queue(2);
    let deliveries = 0;
    source = await startSqsEventSource({
      sqs, queueUrl: url, log, concurrency: 1,
      handler: async (event) => { deliveries += event.Records.length; return { batchItemFailures: event.Records.map((r) => ({ itemIdentifier: r.messageId })) }; },
    });
    await send(url, ['poison']);
    let dead: string[] = [];
    await waitFor(async () => { dead = dead.concat(await drain(dlq)); return dead.length > 0; }, { what: 'the message in the DLQ', timeoutMs: 10_000 });
    await source.stop();
    source = undefined;
    expect(dead).toEqual(['poison']);
    expect(deliveries).toBe(2);
  });
});
