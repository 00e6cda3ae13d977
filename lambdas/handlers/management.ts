// Management Lambda (API Gateway HTTP API, payload v2): keys, organization settings, OpenAPI, and every
// non-inference route of the route table.
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { createRouter } from '../platform/http/router.js';
import { routesOf } from '../app/routes.js';
import { dispatch } from '../platform/http/dispatch.js';
import { dispatchDepsOf } from '../app/dispatch-deps.js';
import { fromLambdaEvent } from '../platform/http/request.js';
import { defaultDeps, type GatewayDeps } from '../app/deps.js';
import { NO_SNIFF, toErrorReply } from '../platform/http/errors.js';
import { managementOperationsOf } from '../app/management-operations.js';

const match = createRouter(routesOf('management'));

export async function handleManagement(event: APIGatewayProxyEventV2, deps: GatewayDeps): Promise<APIGatewayProxyStructuredResultV2> {
  const request = fromLambdaEvent(event);
  const result = await dispatch(request, match, managementOperationsOf(deps), dispatchDepsOf(deps));
  const headers = { 'content-type': 'application/json', 'x-request-id': request.requestId, ...result.headers, ...NO_SNIFF };
  if (result.kind === 'stream') {
    // Management routes answer JSON; a streamed body here is a programming error, reported as a 500 envelope.
    const reply = toErrorReply(new Error('stream result on a buffered route'), request.requestId, deps.log);
    return { statusCode: reply.status, headers, body: JSON.stringify(reply.body) };
  }
  if (result.status === 204) {
    const { 'content-type': _type, ...rest } = headers;
    return { statusCode: 204, headers: rest, body: '' };
  }
  const body = result.kind === 'text' ? result.body : JSON.stringify(result.body);
  // HEAD: the headers GET would send, its length among them, and no body.
  if (request.method === 'HEAD') return { statusCode: result.status ?? 200, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, body: '' };
  return { statusCode: result.status ?? 200, headers, body };
}

export const handler = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Error, Context>()
  .handler(async (event) => {
    let deps: GatewayDeps;
    try {
      deps = await defaultDeps();
    } catch (err) {
      // Start-up failed (configuration, the provider secret): the envelope, with the cause in the logs only.
      const error = toErrorReply(err, event.requestContext?.requestId ?? 'unknown');
      return { statusCode: error.status, headers: { 'content-type': 'application/json', ...NO_SNIFF }, body: JSON.stringify(error.body) };
    }
    return handleManagement(event, deps);
  });
