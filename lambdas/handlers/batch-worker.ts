// Batch worker Lambda (SQS event source mapping with ReportBatchItemFailures): each message is one step of a
// batch (batches/worker.ts). A step that fails, or cannot run yet, is reported as an item failure and comes
// back after the queue's visibility timeout (to the dead-letter queue after the redrive policy's count);
// the others are deleted. A message that is not a batch step is logged and dropped.
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { defaultDeps, type GatewayDeps } from '../app/deps.js';
import { batchDepsOf } from '../app/batch-deps.js';
import { NotYetError, parseBatchMessage } from '../batches/index.js';

export async function handleBatchMessages(event: SQSEvent, deps: GatewayDeps): Promise<SQSBatchResponse> {
  const worker = batchDepsOf(deps).worker;
  if (!worker) throw new Error('batch worker invoked without GATEWAY_BATCH_BUCKET and GATEWAY_BATCH_QUEUE_URL');
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  await Promise.all(event.Records.map(async (record) => {
    const message = parseBatchMessage(record.body);
    if (!message) {
      deps.log.error('dropped a message that is not a batch step', { message_id: record.messageId, body: record.body.slice(0, 200) });
      return;
    }
    try {
      await worker.handle(message);
    } catch (err) {
      if (!(err instanceof NotYetError)) deps.log.error('batch step failed; it will be retried', { message_id: record.messageId, kind: message.kind, batch_id: message.batch_id, error: String(err), ...(err instanceof Error && err.stack ? { stack: err.stack } : {}) });
      failures.push({ itemIdentifier: record.messageId });
    }
  }));
  // The records of the items run are written before the invocation ends (a Lambda may be frozen after it).
  await deps.engine.pages.flush();
  return { batchItemFailures: failures };
}

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => handleBatchMessages(event, await defaultDeps());
