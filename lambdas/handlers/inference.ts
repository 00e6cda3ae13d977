// Inference Lambda behind a Function URL in RESPONSE_STREAM mode: bytes reach the client as they are
// written. Serves the route table's inference routes (POST /chat/completions and POST /responses).
import type { Readable } from 'node:stream';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { createRouter } from '../platform/http/router.js';
import { inferenceRoutes } from '../inference/routes.js';
import { dispatch } from '../platform/http/dispatch.js';
import { dispatchDepsOf } from '../app/dispatch-deps.js';
import { fromLambdaEvent } from '../platform/http/request.js';
import { defaultDeps, type GatewayDeps } from '../app/deps.js';
import { inferenceOperationsOf } from '../app/inference-operations.js';
import { toErrorReply } from '../platform/http/errors.js';
import { startInvocation, type Invocation } from '../billing/infrastructure.js';
import { consoleLogger, type Logger } from '../platform/logger.js';
import { Abort } from '../platform/abort.js';
import { prematureClose, pump } from '../platform/http/pump.js';

// The inference function's routes from their own module: the whole table (app/routes.ts, whose routesOf
// ('inference') is exactly these: test/unit/router.test.ts) would bring every management route's schemas
// into this bundle.
const match = createRouter(inferenceRoutes);
/** Invocations running in this process: one at a time on Lambda, many under npm start's server. */
let running = 0;
/** Where a failed start-up (no deps yet) is logged. */
const STARTUP_LOG = consoleLogger('stderr');
const NOSNIFF = { 'x-content-type-options': 'nosniff' };

export interface StreamingReply {
  statusCode: number;
  headers: Record<string, string>;
  body: string | Readable;
}

/**
 * @param defer where work that may outlive the reply goes (the Lambda handler drains it after the response
 *   stream ends); without it, operations finish such work before their reply ends.
 */
export async function handleInference(
  event: APIGatewayProxyEventV2,
  deps: GatewayDeps,
  defer?: (work: Promise<unknown>) => void,
  invocation?: Invocation,
  signal?: AbortSignal,
): Promise<StreamingReply> {
  const request = fromLambdaEvent(event);
  if (invocation) request.invocation = invocation;
  if (signal) request.signal = signal;
  const result = await dispatch(request, match, inferenceOperationsOf(deps), dispatchDepsOf(deps), defer);
  if (result.kind === 'stream') {
    return { statusCode: result.status ?? 200, headers: { 'x-request-id': request.requestId, ...result.headers }, body: result.body };
  }
  if (result.kind === 'text') return { statusCode: result.status ?? 200, headers: { 'x-request-id': request.requestId, ...result.headers }, body: result.body };
  return {
    statusCode: result.status ?? 200,
    headers: { 'content-type': 'application/json', 'x-request-id': request.requestId, ...result.headers },
    // Every inference route is a POST: a HEAD gets its 405 without a body.
    body: request.method === 'HEAD' ? '' : JSON.stringify(result.body),
  };
}

/**
 * The runtime's streamifyResponse directly rather than middy's streaming mode: a JSON reply is written in one
 * call instead of through Readable.from + pipeline (~45 µs per request), and work deferred past the reply
 * (generation records) is awaited after it, also when the client went away mid-stream.
 *
 * The reply is written by `respond`, whose frame (the event, the reply, the response stream) is gone once it
 * has; only the deferred work is awaited after. A record waits for its page for milliseconds (14 ms p50,
 * 40-56 ms p90 at saturation under npm start), and the whole request is not kept for that long.
 */
export const handler = awslambda.streamifyResponse((event: APIGatewayProxyEventV2, responseStream, _context: Context) => {
  const invocation = startInvocation();
  running += 1;
  const deferred: Promise<unknown>[] = [];
  const started: { deps?: GatewayDeps } = {};
  const finish = () => finishInvocation(started.deps, deferred);
  // A failure of respond itself (its own error handling failing) still finishes the invocation, then goes
  // to the runtime as it did.
  return respond(event, responseStream, invocation, deferred, started).then(finish, (err: unknown) => finish().then(() => {
    throw err;
  }));
});

async function respond(event: APIGatewayProxyEventV2, responseStream: awslambda.HttpResponseStream, invocation: Invocation, deferred: Promise<unknown>[], started: { deps?: GatewayDeps }): Promise<void> {
  // The response stream closing (or failing) before the reply was written means the client went away: the
  // request is aborted, so its upstream call stops and its hold is settled (at the estimated prompt, once
  // something was sent upstream) or released (a stream's body does the same).
  const client = new Abort();
  const gone = () => {
    if (!responseStream.writableFinished) client.abort(new Error('client disconnected'));
  };
  responseStream.once('close', gone);
  responseStream.on('error', gone);
  let reply: StreamingReply;
  let log: Logger = STARTUP_LOG;
  let deps: GatewayDeps | undefined;
  try {
    deps = await defaultDeps();
    started.deps = deps;
    log = deps.log;
    reply = await handleInference(event, deps, (work) => { deferred.push(work); }, invocation, client.signal);
  } catch (err) {
    // Only start-up can fail here (configuration, the provider secret): dispatch itself never throws.
    const error = toErrorReply(err, event.requestContext?.requestId ?? 'unknown', log);
    reply = { statusCode: error.status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(error.body) };
  }
  try {
    if (client.signal.aborted) {
      // Nobody is listening any more: nothing to write (a stream's body is destroyed, which ends its producer).
      if (typeof reply.body !== 'string') reply.body.destroy();
      return;
    }
    const stream = awslambda.HttpResponseStream.from(responseStream, { statusCode: reply.statusCode, headers: Object.assign({}, reply.headers, NOSNIFF) });
    if (typeof reply.body === 'string') {
      const body = reply.body;
      invocation.responseBytes += Buffer.byteLength(body);
      await new Promise<void>((resolve, reject) => {
        stream.once('error', reject);
        // A connection that closes before the reply is flushed (its write side already ended: the local
        // server answered bytes after the body that are not HTTP) says neither 'finish' nor 'error': a reply
        // that did not get out is reported as one, as pump() does for a stream.
        stream.once('close', () => (stream.writableFinished ? resolve() : reject(prematureClose())));
        stream.end(body, () => resolve());
      });
    } else {
      await pump(reply.body, stream);
    }
  } catch (err) {
    // The response stream failed: usually the client went away mid-stream.
    log.warn('response stream ended early', { request_id: event.requestContext?.requestId, error: String(err) });
  } finally {
    responseStream.off('close', gone);
    responseStream.off('error', gone);
  }
}

async function finishInvocation(deps: GatewayDeps | undefined, deferred: Promise<unknown>[]): Promise<void> {
  // The last invocation running writes what waits at once rather than after the page writer's short wait
  // for others: on Lambda an instance serves one request at a time, the wait would be billed, and a frozen
  // instance would not write it. Under npm start (pages.shared) records keep gathering into shared pages.
  running -= 1;
  const flushed = running === 0 && deps && !deps.engine.pages.shared ? deps.engine.pages.flush() : undefined;
  await Promise.allSettled([...deferred, flushed]);
}
