// Builds API Gateway v2 / Function URL events the way AWS delivers them, for handler-level tests.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { randomUUID } from 'node:crypto';

export interface EventInput {
  method: string;
  path: string;
  key?: string;
  headers?: Record<string, string>;
  body?: unknown;
  rawBody?: string;
  query?: Record<string, string>;
}

export function httpEvent(input: EventInput): APIGatewayProxyEventV2 {
  const headers: Record<string, string> = { host: 'gateway.test', ...input.headers };
  if (input.key !== undefined) headers.authorization = `Bearer ${input.key}`;
  const body = input.rawBody ?? (input.body === undefined ? undefined : JSON.stringify(input.body));
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const rawQueryString = new URLSearchParams(input.query ?? {}).toString();
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: input.path,
    rawQueryString,
    headers,
    queryStringParameters: input.query,
    requestContext: {
      accountId: 'test', apiId: 'test', domainName: 'gateway.test', domainPrefix: 'gateway',
      http: { method: input.method, path: input.path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'jest' },
      requestId: randomUUID(), routeKey: '$default', stage: '$default', time: new Date().toUTCString(), timeEpoch: Date.now(),
    },
    body,
    isBase64Encoded: false,
  };
}
