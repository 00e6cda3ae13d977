// The CDK stack as synthesized: cdk-nag findings, the table, the functions, the Function URL, the
// HTTP API routes generated from the route table, the aggregator's stream mapping, IAM, context settings,
// and the bundles themselves.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CfnResource } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { createGatewayApp, type GatewayAppOptions } from '../../lib/app.js';
import { ConfigError } from '../../lib/config.js';
import type { GatewayStack } from '../../lib/gateway-stack.js';
import { CORS_ALLOWED_HEADERS } from '../../lambdas/platform/http/cors.js';
import { TABLE_ACTIONS } from '../../lib/gateway-function.js';
import { routesOf } from '../../lambdas/app/routes.js';
import { fullPath } from '../../lambdas/platform/http/router.js';
import { TABLE_SCHEMA } from '../../lambdas/platform/dynamo/table-schema.js';
import { matchesFilterPattern, matchesPageFilter, PAGE_FILTER_PATTERN, PAGE_STREAM_SETTINGS, type FilterPattern } from '../../lambdas/billing/page-stream.js';
import type { DynamoDBRecord } from 'aws-lambda';
import { batchStateMachineDefinition } from '../../lambdas/batches/state-machine.js';

interface ValidationReport {
  pluginReports: {
    pluginName: string;
    conclusion: string;
    violations: { ruleName: string; severity: string }[];
    suppressedViolations?: { ruleName: string; reason: string; acknowledgedAt: string; violatingConstructs: { constructPath: string }[] }[];
  }[];
}

interface Synthesized {
  stack: GatewayStack;
  template: Template;
  resources: Record<string, { Type: string; Properties: Record<string, any>; DeletionPolicy?: string; DependsOn?: string[] }>;
  report: ValidationReport;
  outdir: string;
}

const outdirs: string[] = [];

/** One synthesis: `app.synth()` throws if cdk-nag reports an unacknowledged error. */
function synthesize(context: GatewayAppOptions['context']): Synthesized {
  const outdir = mkdtempSync(join(tmpdir(), 'gateway-cdk-'));
  outdirs.push(outdir);
  const { app, stack } = createGatewayApp({ context, outdir, env: {} });
  const assembly = app.synth();
  const report = JSON.parse(readFileSync(join(assembly.directory, 'validation-report.json'), 'utf8')) as ValidationReport;
  const template = Template.fromStack(stack);
  return { stack, template, resources: template.toJSON().Resources, report, outdir };
}

function logicalId(stack: GatewayStack, construct: { node: { defaultChild?: unknown } }): string {
  return stack.getLogicalId(construct.node.defaultChild as CfnResource);
}

let base: Synthesized;
let variant: Synthesized;

beforeAll(() => {
  base = synthesize({});
  // The variant skips esbuild (CDK's own switch for `cdk deploy --exclusively`): only properties differ.
  variant = synthesize({ memory: '2048', architecture: 'x86_64', region: 'eu-west-1', stage: 'dev', 'aws:cdk:bundling-stacks': [] });
}, 120_000);

afterAll(() => {
  for (const dir of outdirs) rmSync(dir, { recursive: true, force: true });
});

describe('cdk-nag (AwsSolutions)', () => {
  it('reports no unacknowledged errors or warnings', () => {
    const nag = base.report.pluginReports.find((report) => report.pluginName === 'AwsSolutions');
    expect(nag).toBeDefined();
    expect(nag?.violations).toEqual([]);
    expect(nag?.conclusion).toBe('success');
  });

  it('acknowledges only the expected findings, each with a reason', () => {
    const nag = base.report.pluginReports.find((report) => report.pluginName === 'AwsSolutions');
    const acknowledged = (nag?.suppressedViolations ?? []).map((finding) => ({ rule: finding.ruleName, at: finding.acknowledgedAt }));
    expect(acknowledged).toEqual(expect.arrayContaining([
      { rule: 'AwsSolutions-L1', at: 'ModelGatewayStack/Inference/Function' },
      { rule: 'AwsSolutions-L1', at: 'ModelGatewayStack/Management/Function' },
      { rule: 'AwsSolutions-APIG4', at: 'ModelGatewayStack/ManagementApi/HttpApi' },
      { rule: 'AwsSolutions-SMG4', at: 'ModelGatewayStack/ProviderCredentials' },
      { rule: 'AwsSolutions-L1', at: 'ModelGatewayStack/Aggregator/Function' },
      { rule: 'AwsSolutions-SQS3', at: 'ModelGatewayStack/AggregatorFailures' },
      ...['CFR1', 'CFR2', 'CFR3', 'CFR4'].map((rule) => ({ rule: `AwsSolutions-${rule}`, at: 'ModelGatewayStack/FrontDoor/Distribution' })),
      { rule: 'AwsSolutions-L1', at: 'ModelGatewayStack/Batches/Worker/Function' },
      { rule: 'AwsSolutions-L1', at: 'ModelGatewayStack/Batches/Steps/Function' },
      { rule: 'AwsSolutions-S1', at: 'ModelGatewayStack/Batches/Bucket' },
      { rule: 'AwsSolutions-SF1', at: 'ModelGatewayStack/Batches/StateMachine' },
      { rule: 'AwsSolutions-SF2', at: 'ModelGatewayStack/Batches/StateMachine' },
    ]));
    expect(new Set(acknowledged.map((finding) => finding.rule.replace(/\[.*$/, '')))).toEqual(new Set([
      'AwsSolutions-L1', 'AwsSolutions-APIG4', 'AwsSolutions-SMG4', 'AwsSolutions-SQS3', 'AwsSolutions-CFR1', 'AwsSolutions-CFR2', 'AwsSolutions-CFR3', 'AwsSolutions-CFR4',
      'AwsSolutions-S1', 'AwsSolutions-SF1', 'AwsSolutions-SF2', 'AwsSolutions-IAM5',
    ]));
    // The wildcards: S3 object keys under the batch prefix, for the four roles that touch batch objects (Bedrock's
    // batch jobs' among them), and the Bedrock batch actions of the steps function (jobs Bedrock names, models
    // the catalog names, and the one action that takes no resource).
    const bucketId = logicalId(base.stack, base.stack.batches.bucket);
    const wildcards = (nag?.suppressedViolations ?? []).filter((finding) => finding.ruleName.startsWith('AwsSolutions-IAM5'));
    const bedrock = 'arn:<AWS::Partition>:bedrock:us-east-1';
    expect(wildcards.map((finding) => [finding.ruleName, finding.acknowledgedAt]).sort()).toEqual([
      ...['ModelGatewayStack/Batches/BedrockBatchRole', 'ModelGatewayStack/Batches/Steps/Role', 'ModelGatewayStack/Batches/Worker/Role', 'ModelGatewayStack/Management/Role']
        .map((at) => [`AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/batches/*]`, at]),
      ...[`${bedrock}:<AWS::AccountId>:model-invocation-job/*`, `${bedrock}::foundation-model/*`, `${bedrock}:<AWS::AccountId>:inference-profile/*`, '*']
        .map((resource) => [`AwsSolutions-IAM5[Resource::${resource}]`, 'ModelGatewayStack/Batches/Steps/Role']),
    ].sort());
    for (const finding of nag?.suppressedViolations ?? []) expect(finding.reason.length).toBeGreaterThan(40);
  });

  it('leaves no CDK warnings or errors on the stack', () => {
    const annotations = Annotations.fromStack(base.stack);
    expect(annotations.findError('*', Match.anyValue())).toEqual([]);
    expect(annotations.findWarning('*', Match.anyValue())).toEqual([]);
  });

  it('holds every plugin report to success (variant included)', () => {
    for (const { report } of [base, variant]) {
      for (const plugin of report.pluginReports) expect({ plugin: plugin.pluginName, violations: plugin.violations }).toEqual({ plugin: plugin.pluginName, violations: [] });
    }
  });
});

describe('table', () => {
  it('is an on-demand, encrypted, PITR-protected global table keyed as TABLE_SCHEMA says', () => {
    base.template.resourceCountIs('AWS::DynamoDB::GlobalTable', 1);
    base.template.hasResource('AWS::DynamoDB::GlobalTable', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: Match.objectLike({
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [
          { AttributeName: TABLE_SCHEMA.partitionKey, KeyType: 'HASH' },
          { AttributeName: TABLE_SCHEMA.sortKey, KeyType: 'RANGE' },
        ],
        AttributeDefinitions: Match.arrayWith([
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
          { AttributeName: 'gsi1pk', AttributeType: 'S' },
          { AttributeName: 'gsi1sk', AttributeType: 'S' },
        ]),
        TimeToLiveSpecification: { AttributeName: TABLE_SCHEMA.ttlAttribute, Enabled: true },
        StreamSpecification: { StreamViewType: 'NEW_IMAGE' },
        SSESpecification: { SSEEnabled: true, SSEType: 'KMS' },
        GlobalSecondaryIndexes: [{
          IndexName: 'gsi1',
          KeySchema: [
            { AttributeName: 'gsi1pk', KeyType: 'HASH' },
            { AttributeName: 'gsi1sk', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        }],
        Replicas: [Match.objectLike({
          Region: 'us-east-1',
          DeletionProtectionEnabled: true,
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        })],
      }),
    });
  });

  it('lives in the region the context names', () => {
    variant.template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      Replicas: [Match.objectLike({ Region: 'eu-west-1' })],
    });
    expect(variant.stack.stackName).toBe('ModelGatewayStack-dev');
    expect(variant.stack.region).toBe('eu-west-1');
  });
});

describe('functions', () => {
  it('runs inference on nodejs22.x, arm64, 1024 MB, 15 min, with the table name and source maps', () => {
    const fn = base.resources[logicalId(base.stack, base.stack.inference.function)];
    expect(fn?.Type).toBe('AWS::Lambda::Function');
    expect(fn?.Properties).toMatchObject({
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      MemorySize: 1024,
      Timeout: 900,
      Handler: 'index.handler',
      Environment: {
        Variables: {
          TABLE_NAME: { Ref: logicalId(base.stack, base.stack.table.table) },
          NODE_OPTIONS: '--enable-source-maps',
        },
      },
    });
  });

  it('runs management on nodejs22.x, arm64, 1024 MB, within API Gateway\'s 30 s', () => {
    const fn = base.resources[logicalId(base.stack, base.stack.management.function)];
    expect(fn?.Properties).toMatchObject({
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      MemorySize: 1024,
      Timeout: 29,
      Environment: { Variables: { TABLE_NAME: { Ref: logicalId(base.stack, base.stack.table.table) } } },
    });
  });

  it('runs maintenance every 5 minutes with 256 MB, the table and nothing else', () => {
    const fnId = logicalId(base.stack, base.stack.maintenance.function);
    expect(base.resources[fnId]?.Properties).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'], MemorySize: 256, Timeout: 240 });
    expect(base.resources[fnId]?.Properties.Environment.Variables.GATEWAY_PROVIDER_SECRET_ARN).toBeUndefined();
    const rule = base.resources[logicalId(base.stack, base.stack.maintenanceSchedule)];
    expect(rule?.Properties).toMatchObject({ ScheduleExpression: 'rate(5 minutes)', State: 'ENABLED' });
    expect(rule?.Properties.Targets).toEqual([expect.objectContaining({ Arn: { 'Fn::GetAtt': [fnId, 'Arn'] }, RetryPolicy: { MaximumRetryAttempts: 0 } })]);
  });

  it('logs each function to its own log group with a retention', () => {
    for (const gatewayFunction of [base.stack.inference, base.stack.management, base.stack.maintenance, base.stack.aggregator]) {
      const fn = base.resources[logicalId(base.stack, gatewayFunction.function)];
      const logGroupId = logicalId(base.stack, gatewayFunction.logGroup);
      expect(fn?.Properties.LoggingConfig).toEqual({ LogGroup: { Ref: logGroupId } });
      expect(base.resources[logGroupId]?.Properties.RetentionInDays).toBe(30);
    }
  });

  it('takes memory and architecture from the context', () => {
    for (const gatewayFunction of [variant.stack.inference, variant.stack.management]) {
      const fn = variant.resources[logicalId(variant.stack, gatewayFunction.function)];
      expect(fn?.Properties).toMatchObject({ MemorySize: 2048, Architectures: ['x86_64'], Runtime: 'nodejs22.x' });
    }
  });

  it('serves inference from a streaming Function URL that authenticates nothing itself, with CORS for POST', () => {
    base.template.resourceCountIs('AWS::Lambda::Url', 1);
    base.template.hasResourceProperties('AWS::Lambda::Url', {
      TargetFunctionArn: { 'Fn::GetAtt': [logicalId(base.stack, base.stack.inference.function), 'Arn'] },
      InvokeMode: 'RESPONSE_STREAM',
      AuthType: 'NONE',
      Cors: {
        AllowOrigins: ['*'],
        AllowMethods: ['POST'],
        AllowHeaders: [...CORS_ALLOWED_HEADERS],
        MaxAge: 3600,
      },
    });
  });

  it('exposes the base URLs as stack outputs', () => {
    base.template.hasOutput('InferenceBaseUrl', {
      Value: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [Match.stringLikeRegexp('^InferenceFunctionFunctionUrl'), 'FunctionUrl'] }, 'api/v1']] },
    });
    base.template.hasOutput('ManagementBaseUrl', {
      Value: { 'Fn::Join': ['', Match.arrayWith([{ Ref: logicalId(base.stack, base.stack.managementApi.httpApi) }, '/api/v1'])] },
    });
  });
});

describe('meter aggregator', () => {
  // The table stream's mapping (the batch queue's is the batch worker's: see "batches").
  const mappings = () => Object.values(base.template.findResources('AWS::Lambda::EventSourceMapping')).filter((mapping) => JSON.stringify(mapping.Properties.EventSourceArn).includes('StreamArn'));

  it('runs on nodejs22.x with the table and no provider secret or vault key', () => {
    const fn = base.resources[logicalId(base.stack, base.stack.aggregator.function)]!;
    expect(fn.Properties).toMatchObject({ Runtime: 'nodejs22.x', Architectures: ['arm64'], MemorySize: 512, Timeout: 60, Handler: 'index.handler' });
    expect(fn.Properties.Environment.Variables).toEqual({ TABLE_NAME: { Ref: logicalId(base.stack, base.stack.table.table) }, NODE_OPTIONS: '--enable-source-maps' });
  });

  it('is updated before the inference function, as is management: the readers of pages before their writer', () => {
    const inference = base.resources[logicalId(base.stack, base.stack.inference.function)]!;
    expect(inference.DependsOn).toEqual(expect.arrayContaining([
      logicalId(base.stack, base.stack.aggregator.function), logicalId(base.stack, base.stack.management.function),
    ]));
  });

  it('is fed by the table\'s stream with the shared batching, bisection, partial failures, bounded retries and a failure queue', () => {
    expect(mappings()).toHaveLength(1);
    expect(mappings()[0]!.Properties).toEqual(expect.objectContaining({
      FunctionName: { Ref: logicalId(base.stack, base.stack.aggregator.function) },
      EventSourceArn: { 'Fn::GetAtt': [logicalId(base.stack, base.stack.table.table), 'StreamArn'] },
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: PAGE_STREAM_SETTINGS.batchSize,
      MaximumBatchingWindowInSeconds: PAGE_STREAM_SETTINGS.maxBatchingWindowSeconds,
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      MaximumRetryAttempts: PAGE_STREAM_SETTINGS.retryAttempts,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [logicalId(base.stack, base.stack.aggregatorFailures), 'Arn'] } } },
    }));
    // Spelled out, so a change to the deployed mapping is a visible change to this test.
    expect(PAGE_STREAM_SETTINGS).toEqual({ batchSize: 100, maxBatchingWindowSeconds: 0, retryAttempts: 100 });
  });

  it('deploys the filter npm start applies, and both decide sample records alike', () => {
    const patterns = (mappings()[0]!.Properties.FilterCriteria.Filters as Array<{ Pattern: string }>).map((filter) => filter.Pattern);
    expect(patterns).toEqual(['{"eventName":["INSERT"],"dynamodb":{"Keys":{"pk":{"S":[{"prefix":"GENS#"}]},"sk":{"S":[{"prefix":"P#"}]}}}}']);
    expect(JSON.parse(patterns[0]!)).toEqual(PAGE_FILTER_PATTERN);
    const deployed = JSON.parse(patterns[0]!) as FilterPattern;
    const record = (eventName: 'INSERT' | 'MODIFY' | 'REMOVE', pk: string, sk: string): DynamoDBRecord => ({
      eventName, eventSource: 'aws:dynamodb', dynamodb: { Keys: { pk: { S: pk }, sk: { S: sk } }, SequenceNumber: '1', StreamViewType: 'NEW_IMAGE' },
    });
    const samples: Array<[DynamoDBRecord, boolean]> = [
      [record('INSERT', 'GENS#0001', 'P#0001'), true],
      [record('INSERT', 'GENS#0001', 'APPLIED'), false],
      [record('MODIFY', 'GENS#0001', 'P#0001'), false],
      [record('REMOVE', 'GENS#0001', 'P#0001'), false],
      [record('INSERT', 'GEN#abc', 'GEN'), false],
      [record('INSERT', 'ORG#o1', 'P#0001'), false],
      [record('INSERT', 'gens#0001', 'P#0001'), false],
      [{ eventName: 'INSERT', dynamodb: { Keys: { pk: { S: 'GENS#0001' } } } }, false],
    ];
    for (const [sample, expected] of samples) {
      expect({ sample, deployed: matchesFilterPattern(deployed, sample), local: matchesPageFilter(sample) }).toEqual({ sample, deployed: expected, local: expected });
    }
  });

  it('reports pages it gives up on to an encrypted queue that refuses plain HTTP', () => {
    const queueId = logicalId(base.stack, base.stack.aggregatorFailures);
    expect(base.resources[queueId]!.Properties).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 });
    base.template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      Queues: [{ Ref: queueId }],
      PolicyDocument: { Statement: [Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })] },
    });
  });
});

describe('management HTTP API', () => {
  it('has one route per management route of the route table, plus $default', () => {
    const routeKeys = Object.values(base.template.findResources('AWS::ApiGatewayV2::Route')).map((route) => route.Properties.RouteKey as string);
    const expected = routesOf('management').map((route) => `${route.method} ${fullPath(route)}`);
    expect(routeKeys.sort()).toEqual([...expected, '$default'].sort());
    // API Gateway's path-parameter syntax is the route table's.
    expect(routeKeys).toEqual(expect.arrayContaining(['GET /api/v1/keys/{hash}', 'DELETE /api/v1/keys/{hash}', 'GET /health']));
  });

  it('sends every route, $default included, to the management function with payload 2.0', () => {
    const managementArn = { 'Fn::GetAtt': [logicalId(base.stack, base.stack.management.function), 'Arn'] };
    const integrations = base.template.findResources('AWS::ApiGatewayV2::Integration');
    expect(Object.keys(integrations).length).toBeGreaterThan(0);
    for (const integration of Object.values(integrations)) {
      expect(integration.Properties).toMatchObject({ IntegrationType: 'AWS_PROXY', PayloadFormatVersion: '2.0', IntegrationUri: managementArn });
    }
    for (const route of Object.values(base.template.findResources('AWS::ApiGatewayV2::Route'))) {
      const target = JSON.stringify(route.Properties.Target);
      expect(Object.keys(integrations).some((id) => target.includes(`"${id}"`))).toBe(true);
      expect(route.Properties.AuthorizationType ?? 'NONE').toBe('NONE');
    }
  });

  it('lets API Gateway invoke the function through a fixed number of permissions, scoped to this API', () => {
    const apiId = logicalId(base.stack, base.stack.managementApi.httpApi);
    const permissions = Object.values(base.template.findResources('AWS::Lambda::Permission', {
      Properties: { Principal: 'apigateway.amazonaws.com' },
    }));
    expect(permissions).toHaveLength(2);
    for (const permission of permissions) {
      expect(permission.Properties.FunctionName).toEqual({ 'Fn::GetAtt': [logicalId(base.stack, base.stack.management.function), 'Arn'] });
      expect(JSON.stringify(permission.Properties.SourceArn)).toContain(`{"Ref":"${apiId}"}`);
    }
  });

  it('deploys a $default stage with access logs (retained) and throttling', () => {
    const accessLogsId = logicalId(base.stack, base.stack.managementApi.accessLogGroup);
    base.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      AccessLogSettings: {
        DestinationArn: { 'Fn::GetAtt': [accessLogsId, 'Arn'] },
        Format: Match.stringLikeRegexp('\\$context\\.requestId'),
      },
      DefaultRouteSettings: { ThrottlingRateLimit: 500, ThrottlingBurstLimit: 1000 },
    });
    expect(base.resources[accessLogsId]?.Properties.RetentionInDays).toBe(90);
    const format = JSON.stringify(base.template.findResources('AWS::ApiGatewayV2::Stage'));
    expect(format.toLowerCase()).not.toContain('authorization');
  });
});

describe('IAM', () => {
  const policies = () => Object.values(base.template.findResources('AWS::IAM::Policy'));
  const statementsOf = (policy: { [key: string]: any }) =>
    policy.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown; Effect: string }[];

  it('grants each function exactly the listed DynamoDB actions on the table and its gsi1 index ARN', () => {
    const tableId = logicalId(base.stack, base.stack.table.table);
    for (const gatewayFunction of [base.stack.inference, base.stack.management, base.stack.maintenance, base.stack.aggregator]) {
      const roleId = logicalId(base.stack, gatewayFunction.role);
      const policy = policies().find((candidate) => JSON.stringify(candidate.Properties.Roles) === JSON.stringify([{ Ref: roleId }]));
      expect(policy).toBeDefined();
      const dynamo = statementsOf(policy!).filter((statement) => [statement.Action].flat().some((action) => action.startsWith('dynamodb:'))
        && JSON.stringify(statement.Resource) !== JSON.stringify({ 'Fn::GetAtt': [tableId, 'StreamArn'] }));
      expect(dynamo).toHaveLength(1);
      expect([dynamo[0]!.Action].flat().sort()).toEqual([...TABLE_ACTIONS].sort());
      // Spelled out, so a change to the granted actions is a visible change to this test.
      expect([dynamo[0]!.Action].flat().sort()).toEqual([
        'dynamodb:ConditionCheckItem', 'dynamodb:DeleteItem',
        'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem',
      ]);
      expect(dynamo[0]!.Resource).toEqual([
        { 'Fn::GetAtt': [tableId, 'Arn'] },
        { 'Fn::Join': ['', [{ 'Fn::GetAtt': [tableId, 'Arn'] }, `/index/${TABLE_SCHEMA.globalIndexes[0].indexName}`]] },
      ]);
    }
  });

  it('lets only the aggregator read the table\'s stream, and only that stream', () => {
    const tableId = logicalId(base.stack, base.stack.table.table);
    const stream = { 'Fn::GetAtt': [tableId, 'StreamArn'] };
    const streamActionsOf = (gatewayFunction: GatewayStack['aggregator']) => {
      const roleId = logicalId(base.stack, gatewayFunction.role);
      const policy = policies().find((candidate) => JSON.stringify(candidate.Properties.Roles) === JSON.stringify([{ Ref: roleId }]));
      return statementsOf(policy!).filter((statement) => JSON.stringify(statement.Resource) === JSON.stringify(stream));
    };
    const aggregator = streamActionsOf(base.stack.aggregator);
    expect(aggregator.every((statement) => statement.Effect === 'Allow')).toBe(true);
    expect(aggregator.flatMap((statement) => [statement.Action].flat()).sort()).toEqual([
      'dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams',
    ]);
    for (const gatewayFunction of [base.stack.inference, base.stack.management, base.stack.maintenance]) expect(streamActionsOf(gatewayFunction)).toEqual([]);
  });

  it('lets the aggregator send to its failure queue and nothing else of SQS', () => {
    const roleId = logicalId(base.stack, base.stack.aggregator.role);
    const policy = policies().find((candidate) => JSON.stringify(candidate.Properties.Roles) === JSON.stringify([{ Ref: roleId }]));
    const sqs = statementsOf(policy!).filter((statement) => [statement.Action].flat().some((action) => action.startsWith('sqs:')));
    expect(sqs).toHaveLength(1);
    expect([sqs[0]!.Action].flat().sort()).toEqual(['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage']);
    expect(sqs[0]!.Resource).toEqual({ 'Fn::GetAtt': [logicalId(base.stack, base.stack.aggregatorFailures), 'Arn'] });
  });

  it('has no wildcard action or resource anywhere but the batch objects\' key prefix of the batch bucket and Bedrock\'s batch jobs', () => {
    const bucketId = logicalId(base.stack, base.stack.batches.bucket);
    const batchObjects = JSON.stringify({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucketId, 'Arn'] }, '/batches/*']] });
    const bedrockJobs = new Set(['bedrock:CreateModelInvocationJob', 'bedrock:GetModelInvocationJob', 'bedrock:StopModelInvocationJob', 'bedrock:ListModelInvocationJobs']);
    for (const policy of policies()) {
      for (const statement of statementsOf(policy)) {
        for (const action of [statement.Action].flat()) expect(action).not.toContain('*');
        const resource = JSON.stringify(statement.Resource);
        if (resource === batchObjects) expect([statement.Action].flat().every((action) => action.startsWith('s3:'))).toBe(true);
        else if ([statement.Action].flat().every((action) => bedrockJobs.has(action))) expect(resource).toMatch(/model-invocation-job\/\*|^"\*"$/);
        else expect(resource).not.toMatch(/"\*"|:\*"|\/\*"/);
      }
    }
  });

  it('writes logs only to the function\'s own log group, without AWS managed policies', () => {
    for (const gatewayFunction of [base.stack.inference, base.stack.management]) {
      const roleId = logicalId(base.stack, gatewayFunction.role);
      expect(base.resources[roleId]?.Properties.ManagedPolicyArns).toBeUndefined();
      const policy = policies().find((candidate) => JSON.stringify(candidate.Properties.Roles) === JSON.stringify([{ Ref: roleId }]));
      const logs = statementsOf(policy!).filter((statement) => [statement.Action].flat().some((action) => action.startsWith('logs:')));
      expect(logs).toEqual([expect.objectContaining({
        Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        Resource: { 'Fn::GetAtt': [logicalId(base.stack, gatewayFunction.logGroup), 'Arn'] },
      })]);
    }
  });
});

describe('batches', () => {
  const roleStatements = (role: { node: { defaultChild?: unknown } }) => {
    const roleId = logicalId(base.stack, role);
    const policy = Object.values(base.template.findResources('AWS::IAM::Policy')).find((candidate) => JSON.stringify(candidate.Properties.Roles) === JSON.stringify([{ Ref: roleId }]));
    return (policy?.Properties.PolicyDocument.Statement ?? []) as Array<{ Sid?: string; Action: string | string[]; Resource: unknown }>;
  };
  const objectsOf = () => ({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [logicalId(base.stack, base.stack.batches.bucket), 'Arn'] }, '/batches/*']] });

  it('keeps inputs and results in an encrypted, private, TLS-only bucket that expires them', () => {
    const bucketId = logicalId(base.stack, base.stack.batches.bucket);
    const bucket = base.resources[bucketId]!;
    expect(bucket.DeletionPolicy).toBe('Retain');
    expect(bucket.Properties).toMatchObject({
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      LifecycleConfiguration: { Rules: [{ Prefix: 'batches/', ExpirationInDays: 30, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' }] },
    });
    base.template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: bucketId },
      PolicyDocument: { Statement: [Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })] },
    });
  });

  it('queues shards on an encrypted queue with a dead-letter queue, to the worker one shard per invocation with partial failures', () => {
    const queue = base.resources[logicalId(base.stack, base.stack.batches.queue)]!.Properties;
    expect(queue).toMatchObject({
      SqsManagedSseEnabled: true,
      VisibilityTimeout: 6 * 600,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [logicalId(base.stack, base.stack.batches.deadLetters), 'Arn'] }, maxReceiveCount: 5 },
    });
    expect(base.resources[logicalId(base.stack, base.stack.batches.deadLetters)]!.Properties).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 });
    const mapping = Object.values(base.template.findResources('AWS::Lambda::EventSourceMapping')).find((candidate) => JSON.stringify(candidate.Properties.EventSourceArn).includes(logicalId(base.stack, base.stack.batches.queue)));
    expect(mapping?.Properties).toEqual(expect.objectContaining({
      FunctionName: { Ref: logicalId(base.stack, base.stack.batches.worker.function) },
      BatchSize: 1,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 20 },
    }));
    const worker = base.resources[logicalId(base.stack, base.stack.batches.worker.function)]!.Properties;
    expect(worker.Timeout).toBe(600);
  });

  it('lets only Bedrock\'s batch jobs of this account assume the Bedrock batch role, which reads and writes only batch objects', () => {
    const { batches } = base.stack;
    const role = base.resources[logicalId(base.stack, batches.bedrockBatchRole)]!.Properties;
    expect(role.AssumeRolePolicyDocument.Statement).toEqual([expect.objectContaining({
      Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'bedrock.amazonaws.com' },
      Condition: {
        StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
        ArnLike: { 'aws:SourceArn': { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':bedrock:us-east-1:', { Ref: 'AWS::AccountId' }, ':model-invocation-job/*']] } },
      },
    })]);
    expect(roleStatements(batches.bedrockBatchRole)).toEqual([
      expect.objectContaining({ Sid: 'BatchJobObjects', Action: ['s3:GetObject', 's3:PutObject'], Resource: objectsOf() }),
      expect.objectContaining({ Sid: 'ListBatchJobObjects', Action: 's3:ListBucket', Resource: { 'Fn::GetAtt': [logicalId(base.stack, batches.bucket), 'Arn'] } }),
    ]);
  });

  it('deploys the state machine definition npm start runs, calling only the steps function', () => {
    const machine = Object.values(base.template.findResources('AWS::StepFunctions::StateMachine'))[0]!.Properties;
    const stepsId = logicalId(base.stack, base.stack.batches.steps.function);
    expect(machine.DefinitionSubstitutions).toEqual({ BatchStepsFunctionArn: { 'Fn::GetAtt': [stepsId, 'Arn'] } });
    expect(JSON.parse(machine.DefinitionString as string)).toEqual(batchStateMachineDefinition());
    const invoke = roleStatements(base.stack.batches.stateMachine.role as never).filter((statement) => [statement.Action].flat().includes('lambda:InvokeFunction'));
    expect(invoke).toEqual([expect.objectContaining({ Resource: { 'Fn::GetAtt': [stepsId, 'Arn'] } })]);
  });

  it('gives each function exactly the batch access it uses', () => {
    const { batches } = base.stack;
    const s3Of = (fn: GatewayStack['inference']) => roleStatements(fn.role).filter((statement) => [statement.Action].flat().some((action) => action.startsWith('s3:')));
    expect(s3Of(batches.worker)).toEqual([expect.objectContaining({ Action: 's3:GetObject', Resource: objectsOf() })]);
    expect(s3Of(batches.steps)).toEqual([
      expect.objectContaining({ Action: ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload'], Resource: objectsOf() }),
      // A Bedrock job's missing output reads as missing (NoSuchKey), not as forbidden.
      expect.objectContaining({ Sid: 'ListBatchObjects', Action: 's3:ListBucket', Resource: { 'Fn::GetAtt': [logicalId(base.stack, batches.bucket), 'Arn'] } }),
    ]);
    expect(s3Of(base.stack.management)).toEqual([expect.objectContaining({ Action: ['s3:PutObject', 's3:GetObject', 's3:DeleteObject'], Resource: objectsOf() })]);
    for (const fn of [base.stack.inference, base.stack.maintenance, base.stack.aggregator]) expect(s3Of(fn)).toEqual([]);
    const starts = roleStatements(base.stack.management.role).filter((statement) => [statement.Action].flat().includes('states:StartExecution'));
    expect(starts).toEqual([expect.objectContaining({ Resource: { Ref: logicalId(base.stack, base.stack.batches.stateMachine) } })]);
    const sends = roleStatements(batches.steps.role).filter((statement) => [statement.Action].flat().includes('sqs:SendMessage'));
    // Shards to the work queue; and, as it runs provider batches' answers through the inference core, their
    // observability deliveries (see "observability delivery").
    expect(sends).toEqual([
      expect.objectContaining({ Sid: 'QueueShards', Resource: { 'Fn::GetAtt': [logicalId(base.stack, batches.queue), 'Arn'] } }),
      expect.objectContaining({ Sid: 'QueueObservabilityDeliveries', Resource: { 'Fn::GetAtt': [logicalId(base.stack, base.stack.observability.queue), 'Arn'] } }),
    ]);
    // Only the steps create Bedrock batch jobs, pass Bedrock its role, and know the role.
    const bedrockOf = (fn: GatewayStack['inference']) => roleStatements(fn.role).filter((statement) => [statement.Action].flat().some((action) => action.startsWith('bedrock:') || action === 'iam:PassRole'));
    const roleArn = { 'Fn::GetAtt': [logicalId(base.stack, batches.bedrockBatchRole), 'Arn'] };
    expect(bedrockOf(batches.steps)).toEqual([
      expect.objectContaining({ Sid: 'BedrockBatchJobs', Action: ['bedrock:CreateModelInvocationJob', 'bedrock:GetModelInvocationJob', 'bedrock:StopModelInvocationJob'] }),
      expect.objectContaining({ Sid: 'FindBedrockBatchJobs', Action: 'bedrock:ListModelInvocationJobs', Resource: '*' }),
      expect.objectContaining({ Sid: 'PassBedrockBatchRole', Action: 'iam:PassRole', Resource: roleArn, Condition: { StringEquals: { 'iam:PassedToService': 'bedrock.amazonaws.com' } } }),
    ]);
    for (const fn of [base.stack.inference, base.stack.management, batches.worker, base.stack.maintenance, base.stack.aggregator]) expect(bedrockOf(fn)).toEqual([]);
    expect(base.resources[logicalId(base.stack, batches.steps.function)]!.Properties.Environment.Variables.GATEWAY_BEDROCK_BATCH_ROLE_ARN).toEqual(roleArn);
    const management = base.resources[logicalId(base.stack, base.stack.management.function)]!.Properties.Environment.Variables;
    expect(management.GATEWAY_BEDROCK_BATCH_ROLE_ARN).toBeUndefined();
    expect(management).toMatchObject({
      GATEWAY_BATCH_BUCKET: { Ref: logicalId(base.stack, batches.bucket) },
      GATEWAY_BATCH_QUEUE_URL: { Ref: logicalId(base.stack, batches.queue) },
      GATEWAY_BATCH_STATE_MACHINE_ARN: { Ref: logicalId(base.stack, batches.stateMachine) },
    });
  });
});

describe('bundles', () => {
  function bundleDir(synthesized: Synthesized, gatewayFunction: GatewayStack['inference']): string {
    const code = synthesized.resources[logicalId(synthesized.stack, gatewayFunction.function)]?.Properties.Code as { S3Key: string };
    return join(synthesized.outdir, `asset.${code.S3Key.replace(/\.zip$/, '')}`);
  }

  /** Runs a script as an ES module in a fresh Node process, as the Lambda runtime would load the bundle. */
  function runModule(script: string): string {
    return execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      env: { PATH: process.env.PATH, TABLE_NAME: 'gateway-test', AWS_REGION: 'us-east-1', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
      encoding: 'utf8',
      timeout: 20_000,
    });
  }

  it('are minified ESM with a createRequire banner and a source map', () => {
    for (const gatewayFunction of [base.stack.inference, base.stack.management, base.stack.aggregator, base.stack.observability.worker]) {
      const dir = bundleDir(base, gatewayFunction);
      const code = readFileSync(join(dir, 'index.mjs'), 'utf8');
      expect(code.startsWith("import { createRequire as __gatewayCreateRequire } from 'node:module';")).toBe(true);
      expect(existsSync(join(dir, 'index.mjs.map'))).toBe(true);
      // Minified: long lines, not source layout.
      expect(code.length / code.split('\n').length).toBeGreaterThan(1000);
      expect(code.trimEnd().endsWith('//# sourceMappingURL=index.mjs.map')).toBe(true);
    }
  });

  it('load in Node and export a handler; the management bundle answers /health and a JSON 404 envelope', () => {
    const inference = join(bundleDir(base, base.stack.inference), 'index.mjs');
    const management = join(bundleDir(base, base.stack.management), 'index.mjs');
    const maintenance = join(bundleDir(base, base.stack.maintenance), 'index.mjs');
    const aggregator = join(bundleDir(base, base.stack.aggregator), 'index.mjs');
    const delivery = join(bundleDir(base, base.stack.observability.worker), 'index.mjs');
    const output = runModule(`
      globalThis.awslambda = { streamifyResponse: (handler) => handler, HttpResponseStream: { from: (stream) => stream } };
      const inference = await import(${JSON.stringify(inference)});
      const management = await import(${JSON.stringify(management)});
      const maintenance = await import(${JSON.stringify(maintenance)});
      const aggregator = await import(${JSON.stringify(aggregator)});
      const delivery = await import(${JSON.stringify(delivery)});
      const event = (method, path) => ({
        version: '2.0', routeKey: '$default', rawPath: path, rawQueryString: '', headers: {}, isBase64Encoded: false,
        requestContext: { http: { method, path, protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'test' },
          requestId: 'req-1', stage: '$default', accountId: '123456789012', apiId: 'api', domainName: 'example.com',
          domainPrefix: 'example', routeKey: '$default', time: '', timeEpoch: 0 },
      });
      const health = await management.handler(event('GET', '/health'), {});
      const missing = await management.handler(event('GET', '/api/v1/no-such-route'), {});
      // An empty batch needs no table: the handler answers that nothing failed.
      const pages = await aggregator.handler({ Records: [] }, {});
      const deliveries = await delivery.handler({ Records: [] }, {});
      console.log(JSON.stringify({ inference: typeof inference.handler, maintenance: typeof maintenance.handler, health: health.statusCode, missing: missing.statusCode, body: JSON.parse(missing.body), pages, deliveries }));
    `);
    const result = JSON.parse(output.trim().split('\n').at(-1)!);
    expect(result).toMatchObject({ inference: 'function', maintenance: 'function', health: 200, missing: 404, body: { error: { code: 404 } }, pages: { batchItemFailures: [] }, deliveries: { batchItemFailures: [] } });
  });
});

describe('context validation', () => {
  it.each([
    [{ memory: 'lots' }, /"memory".*got "lots"/],
    [{ memory: 64 }, /"memory".*128 to 10240/],
    [{ memory: '20000' }, /"memory"/],
    [{ architecture: 'arm' }, /"architecture" must be "arm64" or "x86_64"/],
    [{ region: 'mars' }, /Region must look like "us-east-1"/],
    [{ stage: 'Prod_1' }, /"stage"/],
  ])('rejects %j with a message naming the setting', (context, message) => {
    let error: unknown;
    try {
      createGatewayApp({ context, env: {} });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
  });

  it('takes the region from CDK_DEFAULT_REGION when the context has none', () => {
    const { config } = createGatewayApp({
      context: { 'aws:cdk:bundling-stacks': [] },
      env: { CDK_DEFAULT_REGION: 'ap-southeast-2', CDK_DEFAULT_ACCOUNT: '123456789012' },
      nag: false,
    });
    expect(config).toMatchObject({ region: 'ap-southeast-2', account: '123456789012', memorySize: 1024, architecture: 'arm64', stackName: 'ModelGatewayStack' });
  });
});

describe('provider credentials', () => {
  const policies = () => Object.values(base.template.findResources('AWS::IAM::Policy'));
  const statementsOf = (policy: { [key: string]: any }) =>
    policy.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown; Effect: string }[];

  it('keeps them in one Secrets Manager secret that only the two functions may read, named in their environment', () => {
    // Two secrets: the provider credentials, and the front-door token (checked under "vault key").
    base.template.resourceCountIs('AWS::SecretsManager::Secret', 2);
    const secretId = logicalId(base.stack, base.stack.providerSecret);
    for (const gatewayFunction of [base.stack.inference, base.stack.management]) {
      const fn = base.template.findResources('AWS::Lambda::Function')[logicalId(base.stack, gatewayFunction.function)]!;
      expect(fn.Properties.Environment.Variables.GATEWAY_PROVIDER_SECRET_ARN).toEqual({ Ref: secretId });
      const roleId = logicalId(base.stack, gatewayFunction.role);
      const policy = policies().find((candidate) => JSON.stringify(candidate.Properties.Roles) === JSON.stringify([{ Ref: roleId }]));
      const secretStatements = statementsOf(policy!).filter((statement) => [statement.Action].flat().some((action) => action.startsWith('secretsmanager:')));
      expect(secretStatements).toHaveLength(1);
      expect([secretStatements[0]!.Action].flat().sort()).toEqual(['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue']);
      expect(secretStatements[0]!.Resource).toEqual({ Ref: secretId });
    }
  });
});

describe('management API CORS', () => {
  it('answers browser preflights for bearer-key calls from any origin', () => {
    base.template.hasResourceProperties('AWS::ApiGatewayV2::Api', {
      CorsConfiguration: {
        AllowOrigins: ['*'],
        AllowMethods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
        AllowHeaders: [...CORS_ALLOWED_HEADERS],
        MaxAge: 3600,
      },
    });
  });
});

describe('front door', () => {
  const CACHING_DISABLED = '4135ea2d-6df8-44a3-9df3-4b5a84be39ad';
  const ALL_VIEWER_EXCEPT_HOST_HEADER = 'b689b0a8-53d0-40ab-baf2-68738e2966ac';

  it('sends the inference routes to the streaming Function URL and everything else to the HTTP API, uncached, headers intact', () => {
    const distributions = Object.values(base.template.findResources('AWS::CloudFront::Distribution'));
    expect(distributions).toHaveLength(1);
    const config = distributions[0]!.Properties.DistributionConfig;
    const origins = config.Origins as Array<{ Id: string; DomainName: unknown }>;
    const originOf = (id: string) => JSON.stringify(origins.find((origin) => origin.Id === id)!.DomainName);
    const behaviors = config.CacheBehaviors as Array<{ PathPattern: string; TargetOriginId: string; CachePolicyId: string; OriginRequestPolicyId: string; AllowedMethods: string[] }>;
    expect(behaviors.map((behavior) => behavior.PathPattern).sort()).toEqual(routesOf('inference').map(fullPath).sort());
    for (const behavior of [...behaviors, config.DefaultCacheBehavior]) {
      expect(behavior.CachePolicyId).toBe(CACHING_DISABLED);
      expect(behavior.OriginRequestPolicyId).toBe(ALL_VIEWER_EXCEPT_HOST_HEADER);
      expect(behavior.AllowedMethods).toEqual(expect.arrayContaining(['GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'OPTIONS']));
    }
    const urlId = logicalId(base.stack, base.stack.inferenceUrl);
    for (const behavior of behaviors) expect(originOf(behavior.TargetOriginId)).toContain(urlId);
    const apiId = logicalId(base.stack, base.stack.managementApi.httpApi);
    expect(originOf(config.DefaultCacheBehavior.TargetOriginId)).toContain(apiId);
  });
});

describe('vault key', () => {
  const policies = () => Object.values(base.template.findResources('AWS::IAM::Policy'));

  it('is a rotating customer-managed key that refuses data-key operations without the gateway\'s encryption context', () => {
    const keyId = logicalId(base.stack, base.stack.vaultKey.key);
    const key = base.resources[keyId]!;
    expect(key.Properties).toMatchObject({ EnableKeyRotation: true });
    expect(key.DeletionPolicy).toBe('Retain');
    const statements = key.Properties.KeyPolicy.Statement as Array<{ Sid?: string; Effect: string; Action: string | string[]; Condition?: Record<string, unknown>; Principal: unknown }>;
    const deny = statements.find((statement) => statement.Sid === 'RequireGatewayEncryptionContext')!;
    expect(deny).toMatchObject({ Effect: 'Deny', Principal: { AWS: '*' }, Condition: { Null: { 'kms:EncryptionContext:purpose': 'true' } } });
    expect([deny.Action].flat()).toEqual(expect.arrayContaining(['kms:Decrypt', 'kms:GenerateDataKey', 'kms:Encrypt']));
  });

  it('lets only the inference and management functions make and open data keys, with the full context', () => {
    const keyId = logicalId(base.stack, base.stack.vaultKey.key);
    const withKms = (gatewayFunction: GatewayStack['inference']) => {
      const roleId = logicalId(base.stack, gatewayFunction.role);
      const policy = policies().find((candidate) => JSON.stringify(candidate.Properties.Roles) === JSON.stringify([{ Ref: roleId }]));
      return (policy!.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown; Condition?: Record<string, any> }>)
        .filter((statement) => [statement.Action].flat().some((action) => action.startsWith('kms:')));
    };
    for (const gatewayFunction of [base.stack.inference, base.stack.management]) {
      const [statement, ...rest] = withKms(gatewayFunction);
      expect(rest).toEqual([]);
      expect([statement!.Action].flat().sort()).toEqual(['kms:Decrypt', 'kms:GenerateDataKey']);
      expect(statement!.Resource).toEqual({ 'Fn::GetAtt': [keyId, 'Arn'] });
      expect(statement!.Condition!['ForAllValues:StringEquals']).toEqual({ 'kms:EncryptionContextKeys': ['organization', 'workspace', 'intern', 'purpose'] });
      expect(statement!.Condition!.Null).toEqual({
        'kms:EncryptionContext:organization': 'false', 'kms:EncryptionContext:workspace': 'false', 'kms:EncryptionContext:intern': 'false', 'kms:EncryptionContext:purpose': 'false',
      });
      const fn = base.resources[logicalId(base.stack, gatewayFunction.function)]!;
      expect(fn.Properties.Environment.Variables.GATEWAY_KMS_KEY_ID).toEqual({ 'Fn::GetAtt': [keyId, 'Arn'] });
    }
    expect(withKms(base.stack.maintenance)).toEqual([]);
    expect(withKms(base.stack.aggregator)).toEqual([]);
    expect(base.resources[logicalId(base.stack, base.stack.maintenance.function)]!.Properties.Environment.Variables.GATEWAY_KMS_KEY_ID).toBeUndefined();
  });

  it('marks requests through the front door with a generated secret the functions also get', () => {
    const config = Object.values(base.template.findResources('AWS::CloudFront::Distribution'))[0]!.Properties.DistributionConfig;
    const secretId = logicalId(base.stack, base.stack.frontDoorToken);
    const resolved = { 'Fn::Join': ['', ['{{resolve:secretsmanager:', { Ref: secretId }, ':SecretString:::}}']] };
    for (const origin of config.Origins as Array<{ OriginCustomHeaders?: Array<{ HeaderName: string; HeaderValue: unknown }> }>) {
      expect(origin.OriginCustomHeaders).toEqual([{ HeaderName: 'x-gateway-front-door', HeaderValue: resolved }]);
    }
    for (const gatewayFunction of [base.stack.inference, base.stack.management]) {
      expect(base.resources[logicalId(base.stack, gatewayFunction.function)]!.Properties.Environment.Variables.GATEWAY_FRONT_DOOR_TOKEN).toEqual(resolved);
    }
    expect(base.resources[secretId]!.Properties.GenerateSecretString).toMatchObject({ ExcludePunctuation: true, PasswordLength: 40 });
  });
});
