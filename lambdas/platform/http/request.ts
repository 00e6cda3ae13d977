// The gateway's view of an HTTP request, built from a Function URL / API Gateway v2 event.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { Invocation } from '../invocation.js';

export interface GatewayRequest {
  method: string;
  /** Path as received, e.g. /api/v1/keys. */
  path: string;
  headers: Record<string, string>;
  query: Record<string, string>;
  body: Buffer | undefined;
  requestId: string;
  sourceIp: string;
  host: string;
  /** Set by the inference handler: the invocation being accounted for (infrastructure cost). */
  invocation?: Invocation;
  /** Set by the inference handler: aborted when the client goes away before its reply is written. */
  signal?: AbortSignal;
}

export function fromLambdaEvent(event: APIGatewayProxyEventV2): GatewayRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (value !== undefined) headers[name.toLowerCase()] = value;
  }
  const query: Record<string, string> = {};
  // rawQueryString keeps the first value of a repeated parameter, as API Gateway's map does not.
  if (event.rawQueryString) {
    for (const [name, value] of new URLSearchParams(event.rawQueryString)) {
      // Own names only: `constructor` is a parameter like any other, `__proto__` none.
      if (!Object.hasOwn(query, name) && name !== '__proto__') query[name] = value;
    }
  }
  const raw = event.body;
  const body = raw === undefined || raw === null || raw === ''
    ? undefined
    : Buffer.from(raw, event.isBase64Encoded ? 'base64' : 'utf8');
  return {
    method: event.requestContext?.http?.method?.toUpperCase() ?? 'GET',
    path: normalizePath(event.rawPath ?? '/'),
    headers,
    query,
    body,
    requestId: event.requestContext?.requestId ?? 'unknown',
    sourceIp: event.requestContext?.http?.sourceIp ?? '',
    host: headers.host ?? event.requestContext?.domainName ?? '',
  };
}

function normalizePath(path: string): string {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return trimmed || '/';
}
