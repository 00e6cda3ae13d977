// npm start's stand-ins for a batch's AWS services: S3 (s3rver, objects on disk under the data directory)
// and SQS (fauxqs, in memory), with the bucket, the work queue, the observability delivery queue and their
// dead-letter queues the CDK stack creates. fauxqs keeps messages in memory only: at start-up the runtime
// starts the state machine again for every batch that has not ended, which queues its shards again (its
// steps are safe to repeat), so a restart loses no batch. Deliveries queued when the stand-ins die are lost.
import { join } from 'node:path';
import { startFauxqs } from 'fauxqs';
import { startLocalS3 } from './s3.js';
import { DELIVERY_MAX_RECEIVES } from '../../lambdas/observability/queue-settings.js';

export const LOCAL_BATCH_BUCKET = 'gateway-batches';
const QUEUE = 'gateway-batch-work';
const DEAD_LETTERS = 'gateway-batch-work-dlq';
/** Receives before a message goes to the dead-letter queue (the stack's redrive policy). */
const MAX_RECEIVES = 5;
/** Seconds a received message stays hidden (longer than a shard of items takes here). */
const VISIBILITY_SECONDS = 120;
/** The observability delivery queue (and its dead-letter queue), as the stack creates them. */
const DELIVERIES = 'gateway-observability';
const DELIVERY_DEAD_LETTERS = 'gateway-observability-dlq';
/** A delivery takes at most its 10 s timeout; a failed one sets its own backoff. */
const DELIVERY_VISIBILITY_SECONDS = 60;

export interface LocalBatchServices {
  s3Endpoint: string;
  sqsEndpoint: string;
  bucket: string;
  queueUrl: string;
  /** The observability delivery queue and its dead-letter queue. */
  deliveryQueueUrl: string;
  deliveryDeadLetterUrl: string;
  close(): Promise<void>;
}

/**
 * `s3Port`, `sqsPort`: where to listen (default: any free port; a restart asks for the same ones).
 * `deliveryMaxReceives`: receives of a delivery before its dead-letter queue (the stack's redrive policy).
 */
export async function startLocalBatchServices(options: { dataDir: string; host: string; s3Port?: number; sqsPort?: number; deliveryMaxReceives?: number }): Promise<LocalBatchServices> {
  const [s3, sqs] = await Promise.all([
    startLocalS3({ directory: join(options.dataDir, 's3'), host: options.host, buckets: [LOCAL_BATCH_BUCKET], port: options.s3Port ?? 0 }),
    startFauxqs({ port: options.sqsPort ?? 0, host: options.host, logger: false }),
  ]);
  try {
    const dlq = sqs.createQueue(DEAD_LETTERS);
    const queue = sqs.createQueue(QUEUE, {
      attributes: {
        VisibilityTimeout: String(VISIBILITY_SECONDS),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.queueArn, maxReceiveCount: MAX_RECEIVES }),
      },
    });
    const deliveryDeadLetters = sqs.createQueue(DELIVERY_DEAD_LETTERS);
    const deliveries = sqs.createQueue(DELIVERIES, {
      attributes: {
        VisibilityTimeout: String(DELIVERY_VISIBILITY_SECONDS),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: deliveryDeadLetters.queueArn, maxReceiveCount: options.deliveryMaxReceives ?? DELIVERY_MAX_RECEIVES }),
      },
    });
    return {
      s3Endpoint: s3.endpoint,
      sqsEndpoint: sqs.address,
      bucket: LOCAL_BATCH_BUCKET,
      queueUrl: queue.queueUrl,
      deliveryQueueUrl: deliveries.queueUrl,
      deliveryDeadLetterUrl: deliveryDeadLetters.queueUrl,
      async close() {
        await Promise.all([s3.close(), sqs.stop()]);
      },
    };
  } catch (err) {
    await Promise.all([s3.close(), sqs.stop()]);
    throw err;
  }
}
