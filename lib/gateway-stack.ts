// The whole gateway in one stack: the table, the streaming inference function behind a Function URL,
// the management function behind an HTTP API whose routes come from the route table, the meter
// aggregator fed by the table's stream, batches (bucket, queue, worker, state machine), and observability
// delivery (queue, delivery function).
import { CfnOutput, Duration, SecretValue, Stack, type StackProps } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { FilterCriteria, FunctionUrlAuthType, HttpMethod, InvokeMode, StartingPosition, type FunctionUrl } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { API_PREFIX } from '../lambdas/platform/http/router.js';
import { routesOf } from '../lambdas/app/routes.js';
import { CORS_ALLOWED_HEADERS } from '../lambdas/platform/http/cors.js';
import { PAGE_FILTER_PATTERN, PAGE_STREAM_SETTINGS } from '../lambdas/billing/page-stream.js';
import type { ArchitectureName } from './config.js';
import { GatewayFunction } from './gateway-function.js';
import { GatewayTable } from './gateway-table.js';
import { ManagementApi, type ThrottleLimits } from './management-api.js';
import { FrontDoor } from './front-door.js';
import { VaultKey } from './vault-key.js';
import { acknowledgeNag } from './nag.js';
import { BatchResources } from './batch-resources.js';
import { ObservabilityResources } from './observability-resources.js';

export interface GatewayStackProps extends StackProps {
  /** Memory of both functions, in MB. */
  memorySize: number;
  architecture: ArchitectureName;
  throttle?: ThrottleLimits;
}

/** Streams may run as long as Lambda allows: long generations and audio are written as produced. */
export const INFERENCE_TIMEOUT = Duration.minutes(15);
/** API Gateway HTTP APIs give an integration at most 30 s. */
export const MANAGEMENT_TIMEOUT = Duration.seconds(29);
export const MAINTENANCE_TIMEOUT = Duration.minutes(4);
/** A batch is at most PAGE_STREAM_SETTINGS.batchSize pages; a minute leaves room for retried transactions. */
export const AGGREGATOR_TIMEOUT = Duration.minutes(1);

const RUNTIME_PINNED =
  'nodejs22.x is the runtime the gateway is built and tested for (esbuild target node22, the local runtime); '
  + 'moving to a newer Node.js runtime is a deliberate, tested upgrade rather than a side effect of a CDK release.';

export class GatewayStack extends Stack {
  readonly table: GatewayTable;
  readonly inference: GatewayFunction;
  readonly inferenceUrl: FunctionUrl;
  readonly management: GatewayFunction;
  readonly maintenance: GatewayFunction;
  readonly maintenanceSchedule: Rule;
  readonly aggregator: GatewayFunction;
  readonly aggregatorSource: DynamoEventSource;
  /** Where the aggregator's event source mapping reports pages it gave up on (their shard and sequence numbers). */
  readonly aggregatorFailures: Queue;
  readonly managementApi: ManagementApi;
  readonly providerSecret: Secret;
  readonly vaultKey: VaultKey;
  readonly frontDoorToken: Secret;
  readonly frontDoor: FrontDoor;
  readonly batches: BatchResources;
  readonly observability: ObservabilityResources;

  constructor(scope: Construct, id: string, props: GatewayStackProps) {
    super(scope, id, props);

    this.table = new GatewayTable(this, 'Store');
    const tableAccess = { table: this.table.table, indexNames: this.table.indexNames };

    // Provider credentials: a JSON object of credential names to values (OPENAI_API_KEY, ANTHROPIC_API_KEY …),
    // filled in by the operator after deployment; the functions read it once per cold start.
    this.providerSecret = new Secret(this, 'ProviderCredentials', {
      description: 'Model gateway provider credentials: JSON object {"OPENAI_API_KEY": "...", ...}',
      secretStringValue: SecretValue.unsafePlainText('{}'),
    });
    acknowledgeNag(this.providerSecret, 'AwsSolutions-SMG4',
      'Holds third-party provider API keys, which the providers issue and revoke; they cannot be rotated by a Lambda rotation function. Operators replace the value when a provider key changes.');
    this.vaultKey = new VaultKey(this, 'VaultKey');
    // A random value CloudFront adds to every origin request, so the functions can tell the global hostname
    // from their regional ones (resolved by CloudFormation into both places; never in the template).
    this.frontDoorToken = new Secret(this, 'FrontDoorToken', {
      description: 'Model gateway: marks requests that came through the CloudFront front door',
      generateSecretString: { excludePunctuation: true, passwordLength: 40 },
    });
    acknowledgeNag(this.frontDoorToken, 'AwsSolutions-SMG4',
      'A shared marker between CloudFront and the functions, not a credential; rotating it means a redeploy of both, which `cdk deploy` does.');
    const originToken = this.frontDoorToken.secretValue.unsafeUnwrap();
    const environment = {
      GATEWAY_PROVIDER_SECRET_ARN: this.providerSecret.secretArn,
      GATEWAY_KMS_KEY_ID: this.vaultKey.key.keyArn,
      GATEWAY_FRONT_DOOR_TOKEN: originToken,
    };

    // Observability delivery: its queue, dead-letter queue and delivery function. Made before the functions that
    // run generations, whose environment names the queue (they queue each stored generation's deliveries).
    this.observability = new ObservabilityResources(this, 'Observability', {
      tableAccess,
      architecture: props.architecture,
      vaultKey: this.vaultKey,
      environment: { GATEWAY_KMS_KEY_ID: environment.GATEWAY_KMS_KEY_ID },
    });
    const generating = { ...environment, ...this.observability.environment };

    this.inference = new GatewayFunction(this, 'Inference', {
      entry: 'lambdas/handlers/inference.ts',
      description: 'Model gateway inference (/chat/completions, /responses, /messages), streamed',
      memorySize: props.memorySize,
      architecture: props.architecture,
      timeout: INFERENCE_TIMEOUT,
      tableAccess,
      environment: generating,
    });

    // AuthType NONE on purpose: every inference route authenticates the caller's bearer key in the
    // function (format check, hash lookup, disabled/expired/kind), as OpenAI-compatible clients expect;
    // IAM auth would require SigV4 signing that those clients cannot do. No AwsSolutions rule flags it.
    // Function URL CORS takes no OPTIONS method: the URL answers preflight requests itself.
    const inferenceMethods = new Set<string>(['POST', ...routesOf('inference').map((route) => route.method)]);
    this.inferenceUrl = this.inference.function.addFunctionUrl({
      authType: FunctionUrlAuthType.NONE,
      invokeMode: InvokeMode.RESPONSE_STREAM,
      cors: {
        allowedOrigins: ['*'],
        allowedMethods: [...inferenceMethods].map((method) => HttpMethod[method as keyof typeof HttpMethod]),
        allowedHeaders: [...CORS_ALLOWED_HEADERS],
        maxAge: Duration.hours(1),
      },
    });

    // Batches: their bucket, work queue, worker and steps functions and state machine. Both functions run
    // generations: the worker a shard's items, the steps a provider batch's answers (when collected).
    this.batches = new BatchResources(this, 'Batches', { tableAccess, architecture: props.architecture, memorySize: props.memorySize, environment: generating });

    this.management = new GatewayFunction(this, 'Management', {
      entry: 'lambdas/handlers/management.ts',
      description: 'Model gateway management API (keys, organization, OpenAPI, and all non-inference routes)',
      memorySize: props.memorySize,
      architecture: props.architecture,
      timeout: MANAGEMENT_TIMEOUT,
      tableAccess,
      environment: { ...environment, ...this.batches.environment },
    });
    this.batches.grantSubmit(this.management);

    this.managementApi = new ManagementApi(this, 'ManagementApi', {
      handler: this.management.function,
      routes: routesOf('management'),
      ...(props.throttle ? { throttle: props.throttle } : {}),
    });

    // Releases credit holds of invocations that ended without settling (crash, timeout); holds expire
    // after 20 minutes, beyond Lambda's 15-minute maximum.
    this.maintenance = new GatewayFunction(this, 'Maintenance', {
      entry: 'lambdas/handlers/maintenance.ts',
      description: 'Model gateway maintenance: releases expired credit holds (scheduled)',
      memorySize: 256,
      architecture: props.architecture,
      timeout: MAINTENANCE_TIMEOUT,
      tableAccess,
    });
    this.maintenanceSchedule = new Rule(this, 'MaintenanceSchedule', {
      description: 'Runs the model gateway maintenance function',
      schedule: Schedule.rate(Duration.minutes(5)),
      targets: [new LambdaFunction(this.maintenance.function, { retryAttempts: 0 })],
    });

    // Applies generation-record pages to the meters, fed by the table's stream. The event source grants the
    // stream read (DescribeStream, GetRecords, GetShardIterator, ListStreams on the stream's ARN) and sending to
    // the failure queue; on the table it gets the same item actions as the other functions (TABLE_ACTIONS).
    this.aggregator = new GatewayFunction(this, 'Aggregator', {
      entry: 'lambdas/handlers/aggregator.ts',
      description: 'Model gateway meter aggregator: applies generation-record pages from the table stream',
      memorySize: 512,
      architecture: props.architecture,
      timeout: AGGREGATOR_TIMEOUT,
      tableAccess,
    });
    this.aggregatorFailures = new Queue(this, 'AggregatorFailures', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // The most SQS allows: the failure reports wait for an operator, nothing else reads them.
      retentionPeriod: Duration.days(14),
    });
    acknowledgeNag(this.aggregatorFailures, 'AwsSolutions-SQS3',
      'This queue is itself a dead-letter destination: the on-failure destination of the aggregator\'s event source mapping. Nothing consumes it automatically; operators read it.');
    this.aggregatorSource = new DynamoEventSource(this.table.table, {
      // A new stream starts empty, and every page in it must be applied: from the oldest record kept.
      startingPosition: StartingPosition.TRIM_HORIZON,
      // Batch size and window chosen for a lag under 1 s: see PAGE_STREAM_SETTINGS.
      batchSize: PAGE_STREAM_SETTINGS.batchSize,
      maxBatchingWindow: Duration.seconds(PAGE_STREAM_SETTINGS.maxBatchingWindowSeconds),
      bisectBatchOnError: true,
      reportBatchItemFailures: true,
      retryAttempts: PAGE_STREAM_SETTINGS.retryAttempts,
      onFailure: new SqsDlq(this.aggregatorFailures),
      filters: [FilterCriteria.filter(PAGE_FILTER_PATTERN)],
    });
    this.aggregator.function.addEventSource(this.aggregatorSource);
    // Readers before the writer: CloudFormation updates functions in parallel unless told otherwise. The
    // aggregator and the management function (GET /generation) read the pages the inference function writes,
    // so a release that changes how pages are stored reaches them first (they also read every older form).
    this.inference.function.node.addDependency(this.aggregator.function, this.management.function);
    // Likewise the delivery function, the reader of the delivery messages the functions that run generations
    // write (a message it does not understand is dropped).
    for (const fn of [this.inference, this.batches.worker, this.batches.steps]) fn.function.node.addDependency(this.observability.worker.function);

    // The batch worker runs items through the inference core: provider credentials and BYOK as inference; the
    // steps function reads and writes the table, the bucket and the queue only.
    // The batch steps function polls and collects providers' batch services with the gateway's credentials.
    for (const fn of [this.inference, this.management, this.batches.worker, this.batches.steps]) this.providerSecret.grantRead(fn.function);
    // The vault, BYOK and observability-destination routes (management) and BYOK credentials in upstream calls (inference, batch items);
    // not maintenance or the aggregator. The delivery function only opens observability data keys (ObservabilityResources).
    for (const fn of [this.inference, this.management, this.batches.worker]) this.vaultKey.grantDataKeys(fn.role);
    // Every function that runs generations queues their deliveries to observability destinations. Not management:
    // its connectivity test sends to the destination itself.
    for (const fn of [this.inference, this.batches.worker, this.batches.steps]) this.observability.grantSend(fn);
    for (const fn of [this.inference, this.management, this.maintenance, this.aggregator, this.batches.worker, this.batches.steps, this.observability.worker]) {
      acknowledgeNag(fn.function, 'AwsSolutions-L1', RUNTIME_PINNED);
    }

    this.frontDoor = new FrontDoor(this, 'FrontDoor', {
      inferenceUrl: this.inferenceUrl,
      managementApi: this.managementApi.httpApi,
      inferenceRoutes: routesOf('inference'),
      originToken,
    });

    new CfnOutput(this, 'BaseUrl', {
      description: 'The one base URL of the API (CloudFront): inference and management, e.g. <this>/chat/completions, <this>/keys',
      value: `https://${this.frontDoor.distribution.distributionDomainName}${API_PREFIX}`,
    });
    new CfnOutput(this, 'InferenceBaseUrl', {
      description: `Base URL of the inference routes (Function URL, streaming): POST <this>/chat/completions …`,
      value: `${this.inferenceUrl.url}${API_PREFIX.slice(1)}`,
    });
    new CfnOutput(this, 'ManagementBaseUrl', {
      description: `Base URL of the management routes (HTTP API): <this>/keys …; /health is at the API root`,
      value: `${this.managementApi.url}${API_PREFIX.slice(1)}`,
    });
    new CfnOutput(this, 'InferenceFunctionUrl', { description: 'Function URL of the inference function', value: this.inferenceUrl.url });
    new CfnOutput(this, 'ManagementApiUrl', { description: 'Root URL of the management HTTP API', value: this.managementApi.url });
    new CfnOutput(this, 'TableName', { description: 'The gateway DynamoDB table', value: this.table.table.tableName });
    new CfnOutput(this, 'VaultKeyArn', { description: 'KMS key of the vault and BYOK envelope encryption', value: this.vaultKey.key.keyArn });
    new CfnOutput(this, 'BatchBucketName', { description: 'Bucket of batch inputs and results files (batches/<id>/…)', value: this.batches.bucket.bucketName });
    new CfnOutput(this, 'BatchStateMachineArn', { description: 'State machine that runs each batch (an execution per batch, named after it)', value: this.batches.stateMachine.stateMachineArn });
    new CfnOutput(this, 'BatchDeadLetterQueueUrl', { description: 'Shards of batch items that failed every delivery', value: this.batches.deadLetters.queueUrl });
    new CfnOutput(this, 'ObservabilityDeadLetterQueueUrl', { description: 'Observability deliveries that failed every attempt (one message per generation and destination)', value: this.observability.deadLetters.queueUrl });
    new CfnOutput(this, 'ProviderSecretArn', { description: 'Secret holding provider credentials (JSON object of names to values)', value: this.providerSecret.secretArn });
  }
}
