// The batch queue's client, through @aws-sdk/client-sqs: the same code talks to SQS on Lambda and to the
// local stand-in (fauxqs) under npm start.
import { SQSClient } from '@aws-sdk/client-sqs';
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
