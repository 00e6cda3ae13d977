// One base URL for the whole API: a CloudFront distribution that sends the inference routes to the
// streaming Function URL and everything else to the management HTTP API. Nothing is cached.
import { Duration } from 'aws-cdk-lib';
import {
  AllowedMethods, CachePolicy, Distribution, OriginProtocolPolicy, OriginRequestPolicy, PriceClass, ViewerProtocolPolicy,
  type BehaviorOptions,
} from 'aws-cdk-lib/aws-cloudfront';
import { FunctionUrlOrigin, HttpOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { FRONT_DOOR_HEADER } from '../lambdas/vault/front-door-header.js';
import type { IFunctionUrl } from 'aws-cdk-lib/aws-lambda';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { Construct } from 'constructs';
import { fullPath } from '../lambdas/platform/http/router.js';
import type { RouteDef } from '../lambdas/platform/http/route.js';
import { acknowledgeNag } from './nag.js';

export interface FrontDoorProps {
  inferenceUrl: IFunctionUrl;
  managementApi: HttpApi;
  inferenceRoutes: readonly RouteDef[];
  /** Sent to the origins in FRONT_DOOR_HEADER: the functions trust the global hostname only with it. */
  originToken: string;
}

export class FrontDoor extends Construct {
  readonly distribution: Distribution;

  constructor(scope: Construct, id: string, props: FrontDoorProps) {
    super(scope, id);
    const passThrough = {
      allowedMethods: AllowedMethods.ALLOW_ALL,
      cachePolicy: CachePolicy.CACHING_DISABLED,
      // Every viewer header but Host reaches the origin: Authorization, X-Service-Metadata, x-session-id …
      originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
      compress: false,
    } satisfies Partial<BehaviorOptions>;
    // Streams stay open between SSE keep-alive comments (10 s by default), well inside the read timeout.
    // The origins see their own regional hostnames; this header, carrying a per-deployment secret, tells
    // them a request came through the global front door (the vault refuses regional hostnames).
    const customHeaders = { [FRONT_DOOR_HEADER]: props.originToken };
    const inference = new FunctionUrlOrigin(props.inferenceUrl, { readTimeout: Duration.seconds(60), keepaliveTimeout: Duration.seconds(60), customHeaders });
    const management = new HttpOrigin(`${props.managementApi.apiId}.execute-api.${props.managementApi.stack.region}.amazonaws.com`, {
      protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
      readTimeout: Duration.seconds(30),
      customHeaders,
    });
    const additionalBehaviors: Record<string, BehaviorOptions> = {};
    for (const route of props.inferenceRoutes) additionalBehaviors[fullPath(route)] = { origin: inference, ...passThrough };
    this.distribution = new Distribution(this, 'Distribution', {
      comment: 'Model gateway: one base URL for inference and management',
      defaultBehavior: { origin: management, ...passThrough },
      additionalBehaviors,
      priceClass: PriceClass.PRICE_CLASS_100,
      enableIpv6: true,
    });
    acknowledgeNag(this.distribution, 'AwsSolutions-CFR1',
      'An API for programmatic clients worldwide; callers are authenticated by API key, and geo restrictions are a per-deployment policy choice.');
    acknowledgeNag(this.distribution, 'AwsSolutions-CFR2',
      'No WAF web ACL by default: every request is authenticated by API key in the functions, and a WAF ACL (with its monthly cost) is attached by deployments that want one.');
    acknowledgeNag(this.distribution, 'AwsSolutions-CFR3',
      'Requests are logged by the HTTP API access log and the functions (with request ids); CloudFront standard logs would need an ACL-enabled S3 bucket only to duplicate them.');
    acknowledgeNag(this.distribution, 'AwsSolutions-CFR4',
      'The default *.cloudfront.net certificate cannot set a minimum TLS version; deployments with a custom domain set TLSv1.2_2021 on their own certificate.');
  }
}
