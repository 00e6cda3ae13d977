// npm start's batch runner, in a process of its own (bin/local/child.ts), as on AWS the worker and steps
// functions are functions of their own: the work queue's event source mapping feeding the worker's handler,
// and the batch state machine (its deployed definition) calling the steps. Its own deps, as a Lambda's: its
// own lease owner (GATEWAY_LEASE_OWNER, set by the parent), taking back at start what a predecessor that
// died held (the parent lets the meter aggregator apply what that one wrote first), and batches that had not
// ended started again. The parent starts executions through a `start`
// message (the management handler's BatchExecutions); log lines and generation metrics go to the parent's
// logger as `log` and `generation` messages.
import { installAwsLambdaShim } from './awslambda-shim.js';
import { parentChannel } from './child.js';
import { startSqsEventSource } from './sqs-event-source.js';
import { startLocalStepFunctions } from './step-functions.js';
import { createSqsClient } from '../../lambdas/platform/aws/sqs.js';

export interface BatchChildOptions {
  queueUrl: string;
  /** The observability delivery queue, whose mapping (the delivery function's on AWS) runs here too. */
  deliveryQueueUrl?: string;
  sqsEndpoint: string;
  /** How long items running when it is told to stop may take before they are told to end (the parent's grace). */
  graceMs: number;
}

const channel = parentChannel();

async function main(): Promise<void> {
  const options = JSON.parse(process.env.BATCH_CHILD_OPTIONS ?? '{}') as BatchChildOptions;
  installAwsLambdaShim();
  const { handleBatchMessages } = await import('../../lambdas/handlers/batch-worker.js');
  const { handleObservabilityDeliveries } = await import('../../lambdas/handlers/observability-delivery.js');
  const { batchDepsOf } = await import('../../lambdas/app/batch-deps.js');
  const { defaultDeps } = await import('../../lambdas/app/deps.js');
  const deps = await defaultDeps();
  deps.log.sink = (line) => channel.send({ type: 'log', line });
  deps.engine.metrics = (record, timestamp) => channel.send({ type: 'generation', record, timestamp });
  // One process runs every item and is never frozen: records of items that end apart share pages.
  deps.engine.pages.shared = true;
  if (deps.engine.observability) deps.engine.observability.shared = true;
  const owner = process.env.GATEWAY_LEASE_OWNER;
  if (owner) {
    const taken = await deps.engine.ledger.sweepLeases(owner);
    const released = await deps.engine.ledger.releaseExpired(owner);
    if (taken > 0) deps.log.info(`batch runner: took back ${taken} budget lease(s) its previous run held`);
    if (released > 0) deps.log.info(`batch runner: released ${released} credit hold(s) of items its previous run did not finish`);
  }
  const batches = batchDepsOf(deps);
  const worker = batches.worker;
  if (!worker) throw new Error('the batch runner needs GATEWAY_BATCH_BUCKET and GATEWAY_BATCH_QUEUE_URL');
  // The work queue's shards, one per invocation, 8 invocations at once (64 items in flight; 40 shards at once
  // measured 20 % slower and 100 MiB larger).
  const source = await startSqsEventSource({
    sqs: createSqsClient({ endpoint: options.sqsEndpoint }),
    queueUrl: options.queueUrl,
    handler: (event) => handleBatchMessages(event, deps),
    log: deps.log,
    batchSize: 1,
    concurrency: 8,
    waitSeconds: 1,
  });
  // Observability deliveries, ten messages an invocation, two at once (the delivery function's mapping).
  const deliveries = options.deliveryQueueUrl
    ? await startSqsEventSource({
      sqs: createSqsClient({ endpoint: options.sqsEndpoint }),
      queueUrl: options.deliveryQueueUrl,
      handler: (event) => handleObservabilityDeliveries(event, deps),
      log: deps.log,
      batchSize: 10,
      concurrency: 2,
      waitSeconds: 1,
    })
    : undefined;
  const machine = startLocalStepFunctions({ step: (input) => worker.step(input), log: deps.log });
  batches.executions = machine;
  channel.answer('start', (message) => machine.start(message.batchId as string, { requeue: message.requeue === true }));
  channel.onStop(async () => {
    // No new item starts; those running finish and commit (a shard stopped part-way comes back at the next
    // start for its items not done), or after the grace are told to end.
    worker.stop();
    const stopped = Promise.all([source.stop(), machine.stop(), deliveries?.stop()]);
    const grace = setTimeout(() => deps.engine.shutdown.trigger(), options.graceMs);
    await stopped;
    clearTimeout(grace);
    deps.engine.shutdown.trigger();
    await deps.engine.leases?.returnAll();
    await deps.engine.pages.flush();
    await deps.engine.observability?.flush();
  });
  // Ready first, then the batches that had not ended: a batch created meanwhile either is in that scan or has
  // its start sent here (a start of a batch already running is nothing).
  channel.ready({});
  const unfinished = await batches.repository.unfinished();
  for (const batch of unfinished) await machine.start(batch.id, { requeue: true });
  if (unfinished.length > 0) deps.log.info(`resumed ${unfinished.length} batch(es) the previous run had not finished`);
}

main().catch((error: unknown) => channel.failed(error));
