// npm start's stand-ins for AWS's S3, SQS and KMS (bin/local/batch-services.ts, kms.ts) in a process of their
// own (bin/local/child.ts): they are AWS's side, so their work and memory (a 200 MB upload, the workers'
// ranged reads, the queue's long polls) are not the gateway's. Settings in AWS_CHILD_OPTIONS (JSON); a
// restart asks for the ports the first start got (objects and the key are on disk; queued messages are not,
// and the runtime restarts the batch runner, which queues the shards of unfinished batches again).
import { join } from 'node:path';
import { parentChannel } from './child.js';
import { startLocalBatchServices } from './batch-services.js';
import { startLocalKms } from './kms.js';

export interface AwsChildOptions {
  dataDir: string;
  host: string;
  s3Port?: number;
  sqsPort?: number;
  kmsPort?: number;
  deliveryMaxReceives?: number;
}

export interface AwsStandIns {
  s3Endpoint: string;
  sqsEndpoint: string;
  bucket: string;
  queueUrl: string;
  deliveryQueueUrl: string;
  deliveryDeadLetterUrl: string;
  kmsUrl: string;
  keyArn: string;
}

const channel = parentChannel();
const options = JSON.parse(process.env.AWS_CHILD_OPTIONS ?? '{}') as AwsChildOptions;
Promise.all([
  startLocalBatchServices({ dataDir: options.dataDir, host: options.host, ...(options.s3Port ? { s3Port: options.s3Port } : {}), ...(options.sqsPort ? { sqsPort: options.sqsPort } : {}), ...(options.deliveryMaxReceives ? { deliveryMaxReceives: options.deliveryMaxReceives } : {}) }),
  startLocalKms({ dataDir: join(options.dataDir, 'kms'), ...(options.kmsPort ? { port: options.kmsPort } : {}) }),
]).then(([services, kms]) => {
  channel.onStop(async () => {
    await Promise.all([services.close(), kms.close()]);
  });
  channel.ready({
    s3Endpoint: services.s3Endpoint, sqsEndpoint: services.sqsEndpoint, bucket: services.bucket, queueUrl: services.queueUrl, deliveryQueueUrl: services.deliveryQueueUrl, deliveryDeadLetterUrl: services.deliveryDeadLetterUrl, kmsUrl: kms.url, keyArn: kms.keyArn,
  } satisfies AwsStandIns);
}, (error: unknown) => channel.failed(error));
