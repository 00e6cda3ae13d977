// Where batches live (the bucket and the work queue) and how their steps run, from the environment.
import { COMPLETION_WINDOW_SECONDS } from './batch-repository.js';

export interface BatchConfig {
  /** GATEWAY_BATCH_BUCKET; undefined: the batch routes answer 503. */
  bucket: string | undefined;
  /** GATEWAY_BATCH_QUEUE_URL; undefined: the batch routes answer 503. */
  queueUrl: string | undefined;
  /**
   * GATEWAY_BEDROCK_BATCH_ROLE_ARN: the service role Bedrock's batch inference jobs read and write the batch
   * bucket with; undefined: batches of Bedrock models run through the gateway.
   */
  bedrockRoleArn: string | undefined;
  /** GATEWAY_BATCH_STATE_MACHINE_ARN: the batch state machine (npm start runs it in process instead). */
  stateMachineArn: string | undefined;
  /** S3_ENDPOINT / SQS_ENDPOINT: set only for local stand-ins. */
  s3Endpoint: string | undefined;
  sqsEndpoint: string | undefined;
  region: string | undefined;
  /** GATEWAY_BATCH_CHECK_SECONDS: how often a running batch is checked for its end (default 10). */
  checkEverySeconds: number;
  /** GATEWAY_BATCH_ITEM_CONCURRENCY: items of one shard run at once (default 8). */
  itemConcurrency: number;
  /**
   * GATEWAY_BATCH_WINDOW_SECONDS: how long a batch may run before it expires. The API's completion window is
   * 24h (the default); a shorter one is for trying expiry out (the tests do).
   */
  windowSeconds: number;
}

function positiveInteger(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got "${text}"`);
  return value;
}

export function batchConfigFromEnv(env: NodeJS.ProcessEnv = process.env): BatchConfig {
  return {
    bucket: env.GATEWAY_BATCH_BUCKET || undefined,
    queueUrl: env.GATEWAY_BATCH_QUEUE_URL || undefined,
    stateMachineArn: env.GATEWAY_BATCH_STATE_MACHINE_ARN || undefined,
    bedrockRoleArn: env.GATEWAY_BEDROCK_BATCH_ROLE_ARN || undefined,
    s3Endpoint: env.S3_ENDPOINT || undefined,
    sqsEndpoint: env.SQS_ENDPOINT || undefined,
    region: env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined,
    checkEverySeconds: positiveInteger(env, 'GATEWAY_BATCH_CHECK_SECONDS', 10),
    itemConcurrency: positiveInteger(env, 'GATEWAY_BATCH_ITEM_CONCURRENCY', 8),
    windowSeconds: positiveInteger(env, 'GATEWAY_BATCH_WINDOW_SECONDS', COMPLETION_WINDOW_SECONDS),
  };
}
