// The SQS client (the batch work queue, the observability delivery queue), through @aws-sdk/client-sqs: the same code talks to SQS on Lambda and to the
// local stand-in (fauxqs) under npm start.
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { withoutSdkLogging } from './quiet-client.js';

/** `endpoint` is set only for a local stand-in. */
export function createSqsClient(config: { endpoint?: string | undefined; region?: string | undefined }): SQSClient {
  const local = Boolean(config.endpoint);
  return withoutSdkLogging(new SQSClient({
    endpoint: config.endpoint,
    region: config.region ?? (local ? 'us-east-1' : undefined),
    ...(local ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
    maxAttempts: 3,
  }));
}

const SEND_ATTEMPTS = 5;

/**
 * Sends up to ten bodies in one SendMessageBatch; the indexes of those SQS would not take. Entries refused for
 * a passing reason are sent again, a few times with a growing wait; those refused for what they are (sender
 * faults) are not.
 */
export async function sendMessageBatch(sqs: Pick<SQSClient, 'send'>, queueUrl: string, bodies: readonly string[]): Promise<number[]> {
  let entries = bodies.map((body, index) => ({ Id: String(index), MessageBody: body }));
  const refused: number[] = [];
  for (let attempt = 1; entries.length > 0; attempt += 1) {
    const reply = await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
    const failures = reply.Failed ?? [];
    for (const failure of failures) if (failure.SenderFault) refused.push(Number(failure.Id));
    const again = new Set(failures.filter((failure) => !failure.SenderFault).map((failure) => failure.Id));
    entries = entries.filter((entry) => again.has(entry.Id));
    if (entries.length > 0 && attempt >= SEND_ATTEMPTS) return [...refused, ...entries.map((entry) => Number(entry.Id))].sort((a, b) => a - b);
    if (entries.length > 0) await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
  }
  return refused.sort((a, b) => a - b);
}
