// The HTTP API in front of the management function: one API Gateway route per management route of
// the route table, and a $default route to the same function so unknown paths and methods get the
// gateway's own 404/405 envelope rather than API Gateway's.
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  CorsHttpMethod,
  HttpApi, HttpMethod, HttpStage, LogGroupLogDestination, PayloadFormatVersion, type HttpRoute,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import type { RouteDef } from '../lambdas/platform/http/route.js';
import { CORS_ALLOWED_HEADERS } from '../lambdas/platform/http/cors.js';
import { fullPath } from '../lambdas/platform/http/router.js';
import { acknowledgeNag } from './nag.js';

export interface ThrottleLimits {
  /** Steady-state requests per second across the stage. */
  rateLimit: number;
  /** Requests accepted in a burst above the steady rate. */
  burstLimit: number;
}

export const DEFAULT_THROTTLE: ThrottleLimits = { rateLimit: 500, burstLimit: 1000 };

export interface ManagementApiProps {
  handler: IFunction;
  /** Routes served by `handler`, straight from the route table. */
  routes: readonly RouteDef[];
  throttle?: ThrottleLimits;
  logRetention?: RetentionDays;
}

/**
 * Access log line: what is needed to trace a request to the Lambda's logs and to see throttling and
 * integration failures. Headers are left out on purpose: they carry bearer keys.
 */
const ACCESS_LOG_FORMAT = AccessLogFormat.custom(JSON.stringify({
  requestId: '$context.requestId',
  time: '$context.requestTimeEpoch',
  ip: '$context.identity.sourceIp',
  method: '$context.httpMethod',
  path: '$context.path',
  routeKey: '$context.routeKey',
  status: '$context.status',
  protocol: '$context.protocol',
  responseLength: '$context.responseLength',
  latencyMs: '$context.responseLatency',
  integrationStatus: '$context.integrationStatus',
  integrationLatencyMs: '$context.integrationLatency',
  integrationError: '$context.integrationErrorMessage',
  error: '$context.error.message',
}));

export class ManagementApi extends Construct {
  readonly httpApi: HttpApi;
  readonly stage: HttpStage;
  readonly accessLogGroup: LogGroup;
  readonly routes: HttpRoute[];

  constructor(scope: Construct, id: string, props: ManagementApiProps) {
    super(scope, id);

    // Two integrations, each with a single invoke permission: the $default one is scoped to `<api>/*/*`
    // (its source ARN is `<api>/<stage>/$default`), the table routes share one API-wide permission
    // instead of one per route, which would outgrow the function's 20 KB resource policy.
    const fallbackIntegration = new HttpLambdaIntegration('Fallback', props.handler, {
      payloadFormatVersion: PayloadFormatVersion.VERSION_2_0,
    });
    const routeIntegration = new HttpLambdaIntegration('Routes', props.handler, {
      payloadFormatVersion: PayloadFormatVersion.VERSION_2_0,
      scopePermissionToRoute: false,
    });

    this.httpApi = new HttpApi(this, 'HttpApi', {
      description: 'Model gateway management API (keys, organization, workspaces, models, credits, generations, analytics, vault, BYOK)',
      defaultIntegration: fallbackIntegration,
      createDefaultStage: false,
      // Browser clients (dashboards, playgrounds) call the API from other origins with bearer keys, no cookies.
      corsPreflight: {
        allowOrigins: ['*'],
        allowMethods: [CorsHttpMethod.GET, CorsHttpMethod.POST, CorsHttpMethod.PUT, CorsHttpMethod.PATCH, CorsHttpMethod.DELETE],
        allowHeaders: [...CORS_ALLOWED_HEADERS],
        maxAge: Duration.hours(1),
      },
    });

    this.routes = props.routes.flatMap((route) => this.httpApi.addRoutes({
      path: fullPath(route),
      methods: [HttpMethod[route.method]],
      integration: routeIntegration,
    }));

    this.accessLogGroup = new LogGroup(this, 'AccessLogs', {
      retention: props.logRetention ?? RetentionDays.THREE_MONTHS,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.stage = new HttpStage(this, 'DefaultStage', {
      httpApi: this.httpApi,
      stageName: '$default',
      autoDeploy: true,
      throttle: props.throttle ?? DEFAULT_THROTTLE,
      accessLogSettings: {
        destination: new LogGroupLogDestination(this.accessLogGroup),
        format: ACCESS_LOG_FORMAT,
      },
    });

    acknowledgeNag(this.httpApi, 'AwsSolutions-APIG4',
      'Callers authenticate with gateway API keys (Authorization: Bearer), which the management function verifies itself '
      + '(hash lookup in DynamoDB, disabled/expired/kind checks) on every route that needs one; /health and /openapi.json '
      + 'are public by design. An API Gateway authorizer would duplicate that check and add a second key store.');
  }

  /** Root URL of the default stage, ending in `/`. */
  get url(): string {
    return this.stage.url;
  }
}
