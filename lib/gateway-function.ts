// One gateway Lambda function: bundled locally by esbuild as ESM, with its own log group, and a role
// that may write only to that log group and call only the listed DynamoDB actions on the table.
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Effect, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import type { ArchitectureName } from './config.js';
import { ESM_REQUIRE_BANNER, LAMBDA_BUNDLING } from '../bin/bundle-options.js';

/** The repository root: entry points, package-lock.json and tsconfig.json are resolved from here. */
export const PROJECT_ROOT = fileURLToPath(new URL('../', import.meta.url));

export const LAMBDA_RUNTIME = Runtime.NODEJS_22_X;

/**
 * DynamoDB actions the gateway's code issues. TransactWriteItems has no IAM action of its own: DynamoDB
 * authorizes each Put/Update/Delete/ConditionCheck inside the transaction against these.
 */
export const TABLE_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:Query',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:ConditionCheckItem',
] as const;

/** The banner and every other bundling option live in bin/bundle-options.ts, shared with `npm run build` and the bench. */
export { ESM_REQUIRE_BANNER };

export interface TableAccess {
  table: ITableV2;
  /** Names of the global secondary indexes the function queries; each is granted by its exact ARN. */
  indexNames: readonly string[];
}

export interface GatewayFunctionProps {
  /** Entry file, relative to the project root (e.g. `lambdas/handlers/inference.ts`). */
  entry: string;
  description: string;
  memorySize: number;
  architecture: ArchitectureName;
  timeout: Duration;
  tableAccess: TableAccess;
  logRetention?: RetentionDays;
  environment?: Record<string, string>;
}

export class GatewayFunction extends Construct {
  readonly function: NodejsFunction;
  readonly role: Role;
  readonly logGroup: LogGroup;
  readonly tablePolicy: PolicyStatement;

  constructor(scope: Construct, id: string, props: GatewayFunctionProps) {
    super(scope, id);

    this.logGroup = new LogGroup(this, 'LogGroup', {
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    // An own role instead of AWSLambdaBasicExecutionRole, whose log permissions cover every log group.
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `${props.description} (execution role)`,
    });
    this.role.addToPrincipalPolicy(new PolicyStatement({
      sid: 'WriteOwnLogGroup',
      effect: Effect.ALLOW,
      actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
      resources: [this.logGroup.logGroupArn],
    }));

    const { table, indexNames } = props.tableAccess;
    this.tablePolicy = new PolicyStatement({
      sid: 'GatewayTable',
      effect: Effect.ALLOW,
      actions: [...TABLE_ACTIONS],
      resources: [table.tableArn, ...indexNames.map((indexName) => `${table.tableArn}/index/${indexName}`)],
    });
    this.role.addToPrincipalPolicy(this.tablePolicy);

    this.function = new NodejsFunction(this, 'Function', {
      entry: `${PROJECT_ROOT}${props.entry}`,
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: `${PROJECT_ROOT}package-lock.json`,
      description: props.description,
      runtime: LAMBDA_RUNTIME,
      architecture: props.architecture === 'x86_64' ? Architecture.X86_64 : Architecture.ARM_64,
      memorySize: props.memorySize,
      timeout: props.timeout,
      role: this.role,
      logGroup: this.logGroup,
      environment: {
        NODE_OPTIONS: '--enable-source-maps',
        TABLE_NAME: table.tableName,
        ...props.environment,
      },
      bundling: {
        ...LAMBDA_BUNDLING,
        format: LAMBDA_BUNDLING.format === 'esm' ? OutputFormat.ESM : OutputFormat.CJS,
        mainFields: [...LAMBDA_BUNDLING.mainFields],
        externalModules: [...LAMBDA_BUNDLING.externalModules],
      },
    });
  }
}
