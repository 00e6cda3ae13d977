// Observability delivery as synthesized: the delivery queue and its dead-letter queue, the delivery function and
// its SQS mapping, who may queue deliveries (every function that runs generations, and only those), and the
// vault key access of the delivery function. Bundling is skipped (gateway-stack.test.ts loads the bundles).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CfnResource } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { createGatewayApp } from '../../lib/app.js';
import type { GatewayStack } from '../../lib/gateway-stack.js';
import { DELIVERY_MAX_RECEIVES } from '../../lambdas/observability/queue-settings.js';

interface Statement { Sid?: string; Effect: string; Action: string | string[]; Resource: unknown; Condition?: Record<string, any>; Principal?: unknown }

let outdir: string;
let stack: GatewayStack;
let template: Template;
let resources: Record<string, { Type: string; Properties: Record<string, any>; DependsOn?: string[] }>;
let nagReport: { conclusion: string; violations: unknown[]; suppressedViolations?: { ruleName: string; acknowledgedAt: string }[] };

beforeAll(() => {
  outdir = mkdtempSync(join(tmpdir(), 'gateway-cdk-observability-'));
  const app = createGatewayApp({ context: { 'aws:cdk:bundling-stacks': [] }, outdir, env: {} });
  stack = app.stack;
  const assembly = app.app.synth();
  const report = JSON.parse(readFileSync(join(assembly.directory, 'validation-report.json'), 'utf8')) as { pluginReports: Array<typeof nagReport & { pluginName: string }> };
  nagReport = report.pluginReports.find((plugin) => plugin.pluginName === 'AwsSolutions')!;
  template = Template.fromStack(stack);
  resources = template.toJSON().Resources;
}, 120_000);

afterAll(() => {
  rmSync(outdir, { recursive: true, force: true });
});

const idOf = (construct: { node: { defaultChild?: unknown } }) => stack.getLogicalId(construct.node.defaultChild as CfnResource);
const arnOf = (construct: { node: { defaultChild?: unknown } }) => ({ 'Fn::GetAtt': [idOf(construct), 'Arn'] });
const fnOf = (gatewayFunction: GatewayStack['inference']) => resources[idOf(gatewayFunction.function)]!;
const statementsOf = (gatewayFunction: GatewayStack['inference']): Statement[] => {
  const roles = JSON.stringify([{ Ref: idOf(gatewayFunction.role) }]);
  const policy = Object.values(template.findResources('AWS::IAM::Policy')).find((candidate) => JSON.stringify(candidate.Properties.Roles) === roles);
  return (policy?.Properties.PolicyDocument.Statement ?? []) as Statement[];
};
const actionsOf = (statement: Statement) => [statement.Action].flat();
/** Statements of a role on the delivery queue. */
const onDeliveryQueue = (gatewayFunction: GatewayStack['inference']) =>
  statementsOf(gatewayFunction).filter((statement) => JSON.stringify(statement.Resource) === JSON.stringify(arnOf(stack.observability.queue)));

const generating = () => [stack.inference, stack.batches.worker, stack.batches.steps];
const notGenerating = () => [stack.management, stack.maintenance, stack.aggregator];

describe('observability delivery queue', () => {
  it('sends a message to the dead-letter queue after DELIVERY_MAX_RECEIVES (6) receives, hidden 6 × the function timeout', () => {
    expect(DELIVERY_MAX_RECEIVES).toBe(6);
    expect(resources[idOf(stack.observability.queue)]!.Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      VisibilityTimeout: 6 * 60,
      MessageRetentionPeriod: 4 * 24 * 3600,
      RedrivePolicy: { deadLetterTargetArn: arnOf(stack.observability.deadLetters), maxReceiveCount: 6 },
    });
    expect(fnOf(stack.observability.worker).Properties.Timeout).toBe(60);
  });

  it('keeps failed deliveries 14 days in an encrypted dead-letter queue, given as a stack output', () => {
    expect(resources[idOf(stack.observability.deadLetters)]!.Properties).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 });
    template.hasOutput('ObservabilityDeadLetterQueueUrl', { Value: { Ref: idOf(stack.observability.deadLetters) } });
  });

  it('refuses plain HTTP on both queues', () => {
    for (const queue of [stack.observability.queue, stack.observability.deadLetters]) {
      template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: idOf(queue) }],
        PolicyDocument: { Statement: [Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })] },
      });
    }
  });
});

describe('observability delivery function', () => {
  it('is fed by the delivery queue ten messages at a time, with partial batch failures and bounded concurrency', () => {
    const mapping = Object.values(template.findResources('AWS::Lambda::EventSourceMapping'))
      .find((candidate) => JSON.stringify(candidate.Properties.EventSourceArn) === JSON.stringify(arnOf(stack.observability.queue)));
    expect(mapping?.Properties).toEqual(expect.objectContaining({
      FunctionName: { Ref: idOf(stack.observability.worker.function) },
      BatchSize: 10,
      MaximumBatchingWindowInSeconds: 1,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 10 },
    }));
  });

  it('runs on nodejs22.x, arm64, 512 MB with the table, the vault key and the queue, and no provider credentials', () => {
    const fn = fnOf(stack.observability.worker).Properties;
    expect(fn).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'], MemorySize: 512, Handler: 'index.handler' });
    expect(fn.Environment.Variables).toEqual({
      NODE_OPTIONS: '--enable-source-maps',
      TABLE_NAME: { Ref: idOf(stack.table.table) },
      GATEWAY_KMS_KEY_ID: arnOf(stack.vaultKey.key),
      GATEWAY_OBSERVABILITY_QUEUE_URL: { Ref: idOf(stack.observability.queue) },
      GATEWAY_OBSERVABILITY_DLQ_URL: { Ref: idOf(stack.observability.deadLetters) },
    });
    expect(statementsOf(stack.observability.worker).filter((statement) => actionsOf(statement).some((action) => action.startsWith('secretsmanager:')))).toEqual([]);
  });

  it('consumes its queue (ChangeMessageVisibility for the backoff included) and sends only to its dead-letter queue', () => {
    const actions = onDeliveryQueue(stack.observability.worker).flatMap(actionsOf);
    expect(actions).toEqual(expect.arrayContaining(['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility']));
    const sqs = statementsOf(stack.observability.worker).filter((statement) => actionsOf(statement).some((action) => action.startsWith('sqs:')));
    const sending = sqs.filter((statement) => actionsOf(statement).includes('sqs:SendMessage'));
    expect(sending).toEqual([expect.objectContaining({ Sid: 'DeadLetterRefusedDeliveries', Action: 'sqs:SendMessage', Resource: arnOf(stack.observability.deadLetters) })]);
    expect(sqs.filter((statement) => !sending.includes(statement)).every((statement) => JSON.stringify(statement.Resource) === JSON.stringify(arnOf(stack.observability.queue)))).toBe(true);
  });

  it('may only decrypt data keys of observability vaults, with the full encryption context, in its policy and the key\'s', () => {
    const kms = statementsOf(stack.observability.worker).filter((statement) => actionsOf(statement).some((action) => action.startsWith('kms:')));
    expect(kms).toEqual([expect.objectContaining({ Sid: 'VaultOpenDataKeys', Effect: 'Allow', Action: 'kms:Decrypt', Resource: arnOf(stack.vaultKey.key) })]);
    expect(kms[0]!.Condition).toEqual({
      'ForAllValues:StringEquals': { 'kms:EncryptionContextKeys': ['organization', 'workspace', 'intern', 'purpose'] },
      Null: { 'kms:EncryptionContext:organization': 'false', 'kms:EncryptionContext:workspace': 'false', 'kms:EncryptionContext:intern': 'false', 'kms:EncryptionContext:purpose': 'false' },
      StringEquals: { 'kms:EncryptionContext:purpose': ['observability'] },
    });
    const keyPolicy = resources[idOf(stack.vaultKey.key)]!.Properties.KeyPolicy.Statement as Statement[];
    const forWorker = keyPolicy.filter((statement) => JSON.stringify(statement.Principal) === JSON.stringify({ AWS: arnOf(stack.observability.worker.role) }));
    expect(forWorker).toEqual([expect.objectContaining({ Effect: 'Allow', Action: 'kms:Decrypt', Resource: '*', Condition: kms[0]!.Condition })]);
  });

  it('is updated before the functions that write delivery messages, and its runtime pin is acknowledged', () => {
    for (const writer of generating()) expect(fnOf(writer).DependsOn).toEqual(expect.arrayContaining([idOf(stack.observability.worker.function)]));
    expect(nagReport.violations).toEqual([]);
    expect(nagReport.suppressedViolations?.map((finding) => [finding.ruleName, finding.acknowledgedAt]))
      .toEqual(expect.arrayContaining([['AwsSolutions-L1', 'ModelGatewayStack/Observability/Worker/Function']]));
  });
});

describe('queueing deliveries', () => {
  it('names the delivery queue to every function that runs generations (inference, batch worker, batch steps), and lets each send to it', () => {
    for (const fn of generating()) {
      expect(fnOf(fn).Properties.Environment.Variables.GATEWAY_OBSERVABILITY_QUEUE_URL).toEqual({ Ref: idOf(stack.observability.queue) });
      expect(onDeliveryQueue(fn)).toEqual([{ Sid: 'QueueObservabilityDeliveries', Effect: 'Allow', Action: 'sqs:SendMessage', Resource: arnOf(stack.observability.queue) }]);
    }
  });

  it('gives the functions that run no generation neither the queue nor access to it', () => {
    for (const fn of notGenerating()) {
      expect(fnOf(fn).Properties.Environment.Variables.GATEWAY_OBSERVABILITY_QUEUE_URL).toBeUndefined();
      expect(onDeliveryQueue(fn)).toEqual([]);
    }
  });
});

describe('vault key purposes', () => {
  it('lets the functions that make data keys make them for observability destinations\' secrets too (management stores them)', () => {
    for (const fn of [stack.inference, stack.management, stack.batches.worker]) {
      const dataKeys = statementsOf(fn).find((statement) => statement.Sid === 'VaultDataKeys');
      expect(dataKeys?.Condition?.StringEquals).toEqual({ 'kms:EncryptionContext:purpose': ['vault', 'byok', 'observability', 'private-endpoint'] });
    }
  });
});
