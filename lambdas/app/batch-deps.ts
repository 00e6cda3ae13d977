// Batches' ports, built on first use from the process's deps: their table items, and where configured their
// bucket, work queue, worker and state machine. Apart from the rest of the deps so that the inference
// function, which never touches batches, does not bundle the S3, SQS and Step Functions clients.
import { SFNClient } from '@aws-sdk/client-sfn';
import { BatchObjects, BatchRepository, BatchResultRepository, BatchUploadRepository, BatchWorker, SqsBatchQueue, StepFunctionsExecutions, type BatchExecutions, type BatchQueue } from '../batches/index.js';
import { createS3Client } from '../platform/aws/s3.js';
import { createSqsClient } from '../platform/aws/sqs.js';
import { withoutSdkLogging } from '../platform/aws/quiet-client.js';
import { providerBatches } from './provider-batches.js';
import { createBedrockBatchApi } from '../providers/bedrock/bedrock-batch-api.js';
import { batchLeases, withBatchLease } from './batch-lease.js';
import { batchItemRunner } from './batch-items.js';
import { ItemCommitter } from '../batches/item-commits.js';
import type { GatewayDeps } from './deps.js';

export interface BatchDeps {
  repository: BatchRepository;
  results: BatchResultRepository;
  uploads: BatchUploadRepository;
  objects: BatchObjects | undefined;
  queue: BatchQueue | undefined;
  /** The steps (validate, shard, check, fail); undefined without a bucket and a queue. */
  worker: BatchWorker | undefined;
  /**
   * Starts a batch's state machine: the deployed one (GATEWAY_BATCH_STATE_MACHINE_ARN); npm start puts its
   * in-process runner here. Undefined: batches are not available.
   */
  executions: BatchExecutions | undefined;
}

const built = new WeakMap<GatewayDeps, BatchDeps>();

export function batchDepsOf(deps: GatewayDeps): BatchDeps {
  let batches = built.get(deps);
  if (!batches) built.set(deps, batches = createBatchDeps(deps));
  return batches;
}

function createBatchDeps(deps: GatewayDeps): BatchDeps {
  const { db, tableName } = deps.store;
  const repository = new BatchRepository(db, tableName);
  const results = new BatchResultRepository(db, tableName);
  const uploads = new BatchUploadRepository(db, tableName);
  const settings = deps.config.batches;
  if (!settings.bucket || !settings.queueUrl) return { repository, results, uploads, objects: undefined, queue: undefined, worker: undefined, executions: undefined };
  const s3 = createS3Client({ endpoint: settings.s3Endpoint, region: settings.region });
  const objects = new BatchObjects(s3, settings.bucket);
  const { bucket, bedrockRoleArn } = settings;
  const queue = new SqsBatchQueue(createSqsClient({ endpoint: settings.sqsEndpoint, region: settings.region }), settings.queueUrl);
  const commits = new ItemCommitter(db, tableName, deps.log);
  const worker = new BatchWorker({
    batches: repository,
    results,
    objects,
    queue,
    commits,
    // Items of a covered batch reserve from its lease; those of a batch from before leases, as live requests do.
    runItem: batchItemRunner({ engine: deps.engine, keys: deps.keys, commits, engineFor: (batch) => (batch.lease && !batch.lease.returned ? withBatchLease(deps.engine, batch.lease) : deps.engine) }),
    leases: batchLeases({ engine: deps.engine, keys: deps.keys }),
    provider: providerBatches({
      engine: deps.engine, keys: deps.keys, commits, log: deps.log,
      // Bedrock's jobs read their input from, and write their output to, the batch bucket.
      ...(bedrockRoleArn ? { bedrock: (endpoint) => createBedrockBatchApi({ provider: endpoint.provider, bucket, roleArn: bedrockRoleArn, s3, region: settings.region, endpoint: endpoint.base_url }) } : {}),
    }),
    clock: deps.clock,
    log: deps.log,
    checkEverySeconds: settings.checkEverySeconds,
    itemConcurrency: settings.itemConcurrency,
    // A running item ends within its request's deadline; a lane may start one up to a state check (1 s) after
    // the stop, the stop's time is stored to the second, and the item's commit takes a moment.
    settleSeconds: Math.ceil(deps.engine.config.requestTimeoutMs / 1000) + 4,
  });
  const executions = settings.stateMachineArn ? new StepFunctionsExecutions(withoutSdkLogging(new SFNClient({ region: settings.region })), settings.stateMachineArn) : undefined;
  return { repository, results, uploads, objects, queue, worker, executions };
}
