// Batches on AWS: the bucket of inputs and results files, the work queue (with its dead-letter queue) that
// carries shards of items to the worker function, and the state machine (batches/state-machine.ts, the very
// definition npm start runs) whose Tasks call the steps function. Each function gets only what it uses.
import { Duration, RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import { Effect, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { BlockPublicAccess, Bucket, BucketEncryption, type CfnBucket } from 'aws-cdk-lib/aws-s3';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { DefinitionBody, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { batchStateMachineDefinition } from '../lambdas/batches/state-machine.js';
import type { ArchitectureName } from './config.js';
import { GatewayFunction, type TableAccess } from './gateway-function.js';
import { acknowledgeNag } from './nag.js';

/** Where a batch's objects live in the bucket (batches/<id>/input.jsonl, results.jsonl). */
export const BATCH_PREFIX = 'batches/';
/** A shard is at most 100 items of at most a few minutes each, run 8 at a time. */
export const BATCH_WORKER_TIMEOUT = Duration.minutes(10);
/** Validating 200 MB takes seconds; writing a large results file, a minute or two. */
export const BATCH_STEPS_TIMEOUT = Duration.minutes(10);
/** Receives before a shard's message goes to the dead-letter queue. */
export const BATCH_MAX_RECEIVES = 5;
/** Worker invocations at once (the mapping's maximum concurrency): what one busy batch may take of the account's Lambda concurrency. */
export const BATCH_WORKER_CONCURRENCY = 20;
/** Days inputs and results files are kept. */
export const BATCH_OBJECT_DAYS = 30;

export interface BatchResourcesProps {
  tableAccess: TableAccess;
  architecture: ArchitectureName;
  memorySize: number;
  /** The functions' common environment (provider secret, vault key …). */
  environment: Record<string, string>;
}

export class BatchResources extends Construct {
  readonly bucket: Bucket;
  readonly queue: Queue;
  readonly deadLetters: Queue;
  readonly worker: GatewayFunction;
  readonly steps: GatewayFunction;
  readonly stateMachine: StateMachine;
  /** The service role Bedrock's batch inference jobs read their input and write their output with. */
  readonly bedrockBatchRole: Role;
  /** What the management function needs to submit, read and delete batches (bucket, state machine). */
  readonly environment: Record<string, string>;

  constructor(scope: Construct, id: string, props: BatchResourcesProps) {
    super(scope, id);

    this.bucket = new Bucket(this, 'Bucket', {
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      // Batch data belongs to the customers: kept if the stack goes.
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [{
        id: 'expire-batch-objects',
        prefix: BATCH_PREFIX,
        expiration: Duration.days(BATCH_OBJECT_DAYS),
        abortIncompleteMultipartUploadAfter: Duration.days(1),
      }],
    });
    acknowledgeNag(this.bucket, 'AwsSolutions-S1',
      'Only the gateway\'s own functions read and write this bucket, through their roles; API calls on it are in CloudTrail. A separate access-log bucket would hold only those same calls.');

    this.deadLetters = new Queue(this, 'DeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.queue = new Queue(this, 'Work', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // Lambda's advice for an SQS event source: six times the function's timeout.
      visibilityTimeout: Duration.seconds(BATCH_WORKER_TIMEOUT.toSeconds() * 6),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.deadLetters, maxReceiveCount: BATCH_MAX_RECEIVES },
    });

    const batchEnvironment = {
      GATEWAY_BATCH_BUCKET: this.bucket.bucketName,
      GATEWAY_BATCH_QUEUE_URL: this.queue.queueUrl,
    };
    this.worker = new GatewayFunction(this, 'Worker', {
      entry: 'lambdas/handlers/batch-worker.ts',
      description: 'Model gateway batch worker: runs the items of a shard through the inference core (SQS)',
      memorySize: props.memorySize,
      architecture: props.architecture,
      timeout: BATCH_WORKER_TIMEOUT,
      tableAccess: props.tableAccess,
      environment: { ...props.environment, ...batchEnvironment },
    });
    this.worker.function.addEventSource(new SqsEventSource(this.queue, {
      batchSize: 1,
      reportBatchItemFailures: true,
      maxConcurrency: BATCH_WORKER_CONCURRENCY,
    }));

    // Bedrock batch inference: a job reads its input (batches/<id>/bedrock/input.jsonl) and writes its output
    // beside it as this role, which only Bedrock's jobs of this account and region can assume.
    const { account, region, partition } = Stack.of(this);
    const jobArns = `arn:${partition}:bedrock:${region}:${account}:model-invocation-job/*`;
    this.bedrockBatchRole = new Role(this, 'BedrockBatchRole', {
      description: 'Model gateway: Bedrock batch inference jobs read and write the batch bucket',
      assumedBy: new ServicePrincipal('bedrock.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': account }, ArnLike: { 'aws:SourceArn': jobArns } },
      }),
    });
    this.bedrockBatchRole.addToPrincipalPolicy(new PolicyStatement({
      sid: 'BatchJobObjects', effect: Effect.ALLOW, actions: ['s3:GetObject', 's3:PutObject'], resources: [`${this.bucket.bucketArn}/${BATCH_PREFIX}*`],
    }));
    this.bedrockBatchRole.addToPrincipalPolicy(new PolicyStatement({
      sid: 'ListBatchJobObjects', effect: Effect.ALLOW, actions: ['s3:ListBucket'], resources: [this.bucket.bucketArn],
    }));
    this.acknowledgeObjectPattern(this.bedrockBatchRole);

    this.steps = new GatewayFunction(this, 'Steps', {
      entry: 'lambdas/handlers/batch-steps.ts',
      description: 'Model gateway batch steps: validate, check and finalize, fail (Tasks of the batch state machine)',
      memorySize: 1024,
      architecture: props.architecture,
      timeout: BATCH_STEPS_TIMEOUT,
      tableAccess: props.tableAccess,
      environment: { ...props.environment, ...batchEnvironment, GATEWAY_BEDROCK_BATCH_ROLE_ARN: this.bedrockBatchRole.roleArn },
    });

    this.stateMachine = new StateMachine(this, 'StateMachine', {
      stateMachineType: StateMachineType.STANDARD,
      definitionBody: DefinitionBody.fromString(JSON.stringify(batchStateMachineDefinition())),
      definitionSubstitutions: { BatchStepsFunctionArn: this.steps.function.functionArn },
      comment: 'Model gateway batch lifecycle',
      // The 24 h window, its last check, and room for the results file.
      timeout: Duration.hours(26),
    });
    // Exactly the steps function (CDK's grantInvoke would add every version of it, a wildcard).
    this.stateMachine.addToRolePolicy(new PolicyStatement({
      sid: 'InvokeBatchSteps',
      effect: Effect.ALLOW,
      actions: ['lambda:InvokeFunction'],
      resources: [this.steps.function.functionArn],
    }));
    acknowledgeNag(this.stateMachine, 'AwsSolutions-SF1',
      'Each batch\'s state, counts and error are kept on its table item and every step logs to the steps function\'s log group; Step Functions keeps each execution\'s history for 90 days. Vended logs would need a logs:* grant on every resource.');
    acknowledgeNag(this.stateMachine, 'AwsSolutions-SF2',
      'X-Ray tracing would need xray:PutTraceSegments on every resource; the functions it calls log each step with the batch id.');

    // Items' inputs, by byte range.
    this.grantObjects(this.worker, 'ReadBatchInputs', ['s3:GetObject']);
    // Validating (read), the results file (a multipart upload).
    this.grantObjects(this.steps, 'BatchObjects', ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload']);
    this.steps.role.addToPrincipalPolicy(new PolicyStatement({
      sid: 'QueueShards', effect: Effect.ALLOW, actions: ['sqs:SendMessage'], resources: [this.queue.queueArn],
    }));
    // A Bedrock job that ran nothing writes no output: with ListBucket on the bucket, reading it is a NoSuchKey
    // the steps understand, not S3's AccessDenied for a missing key (that check carries no s3:prefix to narrow it).
    this.steps.role.addToPrincipalPolicy(new PolicyStatement({
      sid: 'ListBatchObjects', effect: Effect.ALLOW, actions: ['s3:ListBucket'], resources: [this.bucket.bucketArn],
    }));
    // Batches of Bedrock models go to Bedrock's batch inference: the steps create, read, find and stop the
    // jobs, on the models the catalog names, as the role above.
    this.steps.role.addToPrincipalPolicy(new PolicyStatement({
      sid: 'BedrockBatchJobs', effect: Effect.ALLOW,
      actions: ['bedrock:CreateModelInvocationJob', 'bedrock:GetModelInvocationJob', 'bedrock:StopModelInvocationJob'],
      resources: [jobArns, `arn:${partition}:bedrock:${region}::foundation-model/*`, `arn:${partition}:bedrock:${region}:${account}:inference-profile/*`],
    }));
    this.steps.role.addToPrincipalPolicy(new PolicyStatement({
      sid: 'FindBedrockBatchJobs', effect: Effect.ALLOW, actions: ['bedrock:ListModelInvocationJobs'], resources: ['*'],
    }));
    this.steps.role.addToPrincipalPolicy(new PolicyStatement({
      sid: 'PassBedrockBatchRole', effect: Effect.ALLOW, actions: ['iam:PassRole'], resources: [this.bedrockBatchRole.roleArn],
      conditions: { StringEquals: { 'iam:PassedToService': 'bedrock.amazonaws.com' } },
    }));
    // cdk-nag names the findings with the template's values: a pseudo parameter, or the region the context gave.
    const named = (value: string, parameter: string) => (Token.isUnresolved(value) ? `<AWS::${parameter}>` : value);
    const bedrockArn = `arn:<AWS::Partition>:bedrock:${named(region, 'Region')}`;
    for (const finding of [
      `AwsSolutions-IAM5[Resource::${bedrockArn}:${named(account, 'AccountId')}:model-invocation-job/*]`,
      `AwsSolutions-IAM5[Resource::${bedrockArn}::foundation-model/*]`,
      `AwsSolutions-IAM5[Resource::${bedrockArn}:${named(account, 'AccountId')}:inference-profile/*]`,
      'AwsSolutions-IAM5[Resource::*]',
    ]) {
      acknowledgeNag(this.steps.role, finding,
        'Bedrock names batch jobs when it creates them, the models come from the catalog (a runtime setting), and ListModelInvocationJobs takes no resource: these cover only the Bedrock batch actions listed.');
    }

    this.environment = { ...batchEnvironment, GATEWAY_BATCH_STATE_MACHINE_ARN: this.stateMachine.stateMachineArn };
  }

  /**
   * S3 object actions on the batch objects of this bucket: a key pattern is the only way IAM names objects,
   * so this one wildcard (the batch prefix) is acknowledged to cdk-nag, for exactly this resource.
   */
  private grantObjects(fn: GatewayFunction, sid: string, actions: string[]): void {
    fn.role.addToPrincipalPolicy(new PolicyStatement({ sid, effect: Effect.ALLOW, actions, resources: [`${this.bucket.bucketArn}/${BATCH_PREFIX}*`] }));
    this.acknowledgeObjectPattern(fn.role);
  }

  private acknowledgeObjectPattern(role: Construct): void {
    const bucketId = Stack.of(this).resolve((this.bucket.node.defaultChild as CfnBucket).logicalId) as string;
    acknowledgeNag(role, `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${BATCH_PREFIX}*]`,
      'S3 object permissions name objects by key: these cover exactly the batch objects (batches/<id>/…) of this one bucket.');
  }

  /** The management function: stores inputs, links results files, deletes both, and starts executions. */
  grantSubmit(fn: GatewayFunction): void {
    this.grantObjects(fn, 'BatchObjects', ['s3:PutObject', 's3:GetObject', 's3:DeleteObject']);
    fn.role.addToPrincipalPolicy(new PolicyStatement({
      sid: 'StartBatches', effect: Effect.ALLOW, actions: ['states:StartExecution'], resources: [this.stateMachine.stateMachineArn],
    }));
  }
}
