// Observability delivery on AWS: the delivery queue (with its dead-letter queue) that carries one message per
// generation and destination, from the functions that run generations to the delivery function, which sends
// each to its destination (webhook, OTLP collector, Langfuse, S3 with the destination's own credentials).
// The delivery function's backoff is its own (ChangeMessageVisibility at each failure, doubling); the redrive
// policy's count is the one npm start's stand-in uses (observability/queue-settings.ts).
import { Duration } from 'aws-cdk-lib';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DELIVERY_MAX_RECEIVES } from '../lambdas/observability/queue-settings.js';
import type { ArchitectureName } from './config.js';
import { GatewayFunction, type TableAccess } from './gateway-function.js';
import type { VaultKey } from './vault-key.js';

/**
 * A batch is at most 10 deliveries, run at once, each cut off after GATEWAY_OBSERVABILITY_TIMEOUT_MS (10 s
 * by default): a minute covers a batch with its destination reads, vault releases and backoff calls.
 */
export const OBSERVABILITY_DELIVERY_TIMEOUT = Duration.minutes(1);
/** Messages per invocation, delivered at once (one ChangeMessageVisibilityBatch sets the backoff of up to ten). */
export const OBSERVABILITY_DELIVERY_BATCH_SIZE = 10;
/** Delivery invocations at once: what a burst of generations may take of the account's Lambda concurrency. */
export const OBSERVABILITY_DELIVERY_CONCURRENCY = 10;

export interface ObservabilityResourcesProps {
  tableAccess: TableAccess;
  architecture: ArchitectureName;
  /** The key the destinations' secrets are sealed under: the delivery function opens their data keys. */
  vaultKey: VaultKey;
  /**
   * The delivery function's environment besides the queue (GATEWAY_KMS_KEY_ID). Not the provider secret: it
   * calls no provider, and with the secret's ARN it would read the secret at every cold start.
   */
  environment: Record<string, string>;
}

export class ObservabilityResources extends Construct {
  readonly queue: Queue;
  readonly deadLetters: Queue;
  readonly worker: GatewayFunction;
  /** What a function that runs generations needs to queue their deliveries (with grantSend). */
  readonly environment: Record<string, string>;

  constructor(scope: Construct, id: string, props: ObservabilityResourcesProps) {
    super(scope, id);

    this.deadLetters = new Queue(this, 'DeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.queue = new Queue(this, 'Deliveries', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // Lambda's advice for an SQS event source: six times the function's timeout.
      visibilityTimeout: Duration.seconds(OBSERVABILITY_DELIVERY_TIMEOUT.toSeconds() * 6),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.deadLetters, maxReceiveCount: DELIVERY_MAX_RECEIVES },
    });

    this.environment = { GATEWAY_OBSERVABILITY_QUEUE_URL: this.queue.queueUrl };
    this.worker = new GatewayFunction(this, 'Worker', {
      entry: 'lambdas/handlers/observability-delivery.ts',
      description: 'Model gateway observability delivery: sends each generation to its destinations (SQS)',
      memorySize: 512,
      architecture: props.architecture,
      timeout: OBSERVABILITY_DELIVERY_TIMEOUT,
      // Destinations, vault rows and the vault's audit rows.
      tableAccess: props.tableAccess,
      // The dead-letter queue too: a delivery no retry can help (a 4xx, a refused address) goes there at once.
      environment: { ...props.environment, ...this.environment, GATEWAY_OBSERVABILITY_DLQ_URL: this.deadLetters.queueUrl },
    });
    this.worker.role.addToPrincipalPolicy(new PolicyStatement({
      sid: 'DeadLetterRefusedDeliveries', effect: Effect.ALLOW, actions: ['sqs:SendMessage'], resources: [this.deadLetters.queueArn],
    }));
    // The mapping grants the worker what it consumes with: ReceiveMessage, DeleteMessage, GetQueueAttributes,
    // GetQueueUrl and ChangeMessageVisibility (the backoff of a failed delivery), on this queue only.
    this.worker.function.addEventSource(new SqsEventSource(this.queue, {
      batchSize: OBSERVABILITY_DELIVERY_BATCH_SIZE,
      maxBatchingWindow: Duration.seconds(1),
      reportBatchItemFailures: true,
      maxConcurrency: OBSERVABILITY_DELIVERY_CONCURRENCY,
    }));
    // Releasing a destination's secrets opens its vault's data key; the management function stored them (and
    // made the data key), so this function only decrypts, and only data keys made for observability.
    props.vaultKey.grantOpenDataKeys(this.worker.role, ['observability']);
  }

  /** A function that runs generations: it queues their deliveries (SendMessageBatch is sqs:SendMessage). */
  grantSend(fn: GatewayFunction): void {
    fn.role.addToPrincipalPolicy(new PolicyStatement({
      sid: 'QueueObservabilityDeliveries', effect: Effect.ALLOW, actions: ['sqs:SendMessage'], resources: [this.queue.queueArn],
    }));
  }
}
