// Inference Lambda behind a Function URL in RESPONSE_STREAM mode: bytes reach the client as they are
// written. Serves the route table's inference routes (/responses, /chat/completions, /audio/speech).
import middy from '@middy/core';
import type { Readable } from 'node:stream';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { createRouter } from '../http/router.js';
import { routesOf } from '../http/route-table.js';
import { dispatch } from '../http/dispatch.js';
import { fromLambdaEvent } from '../http/request.js';
import { defaultDeps, type GatewayDeps } from '../http/deps.js';
import { inferenceOperations } from '../inference/operations.js';

export { inferenceOperations };

const match = createRouter(routesOf('inference'));

export interface StreamingReply {
  statusCode: number;
  headers: Record<string, string>;
  body: string | Readable;
}

/**
 * @param defer where work that may outlive the reply goes (the Lambda handler drains it after the response
 *   stream ends); without it, operations finish such work before their reply ends.
 */
export async function handleInference(event: APIGatewayProxyEventV2, deps: GatewayDeps, defer?: (work: Promise<unknown>) => void): Promise<StreamingReply> {
  const request = fromLambdaEvent(event);
  const result = await dispatch(request, match, inferenceOperations, deps, defer);
  if (result.kind === 'stream') {
    return { statusCode: result.status ?? 200, headers: { 'x-request-id': request.requestId, ...result.headers }, body: result.body };
  }
  return {
    statusCode: result.status ?? 200,
    headers: { 'content-type': 'application/json', 'x-request-id': request.requestId, ...result.headers },
    body: JSON.stringify(result.body),
  };
}

const deferred = new WeakMap<object, Promise<unknown>[]>();

export const handler = middy<APIGatewayProxyEventV2, StreamingReply, Error, Context>({
  streamifyResponse: true,
  // Runs after the response stream has ended: the client has its reply; the invocation finishes the rest.
  requestEnd: async (request) => {
    const work = deferred.get(request.event as object);
    if (work) await Promise.allSettled(work);
  },
}).handler((event) => handleInference(event, defaultDeps(), (work) => {
  const list = deferred.get(event);
  if (list) list.push(work);
  else deferred.set(event, [work]);
}));
