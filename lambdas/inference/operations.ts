// POST /chat/completions and POST /responses: translate the request, run the engine, and reply as JSON
// or as an SSE stream. Streams commit to 200 only once the first upstream event arrives (or the keep-alive
// window passes); before that, failures are real HTTP errors, after it they are error events.
import { Readable } from 'node:stream';
import type { InferenceOperations } from '../app/routes.js';
import type { OperationResult } from '../platform/http/route.js';
import { HttpError, httpErrorOf } from '../platform/http/errors.js';
import { DomainError } from '../platform/errors.js';
import type { GatewayDeps } from '../app/deps.js';
import type { Principal } from '../platform/http/auth.js';
import type { GatewayRequest } from '../platform/http/request.js';
import type { GenerationResult, StreamEvent, ToolCall } from '../providers/types.js';
import { ProviderError } from '../providers/provider-error.js';
import { abortedError, applyByok, complete, generate, release, reserve, serviceMetadata, startStream, startTrace, toHttpError, type Caller, type EngineDeps, type RouteTrace, type Streaming } from './engine.js';
import { isShuttingDown, shuttingDownError } from './shutdown.js';
import type { Hold } from '../billing/ledger.js';
import type { Invocation } from '../billing/infrastructure.js';
import { estimateUsage } from '../billing/estimate.js';
import type { InferenceRequest } from './inference-request.js';
import { fromChat } from './from-chat.js';
import { fromResponses } from './from-responses.js';
import { chatCompletion, chatUsage, ChatStreamWriter, type ReplyIdentity } from './to-chat.js';
import { responseResult, responsesUsage, ResponsesStreamWriter } from './to-responses.js';
import { SSE_DONE, SSE_KEEPALIVE } from './sse.js';
import type { Candidate } from './routing.js';
import { logLine } from '../platform/log-line.js';

const nextTick = () => new Promise<void>((resolve) => process.nextTick(resolve));

/** `X-Service-Metadata: enabled` (or the legacy X-Service-Experimental-Metadata) turns on service_metadata. */
export function metadataEnabled(headers: Record<string, string>): boolean {
  const value = (headers['x-service-metadata'] ?? headers['x-service-experimental-metadata'] ?? '').trim().toLowerCase();
  return value === 'enabled' || value === 'true' || value === '1';
}

function callerOf(principal: Principal | null): Caller {
  if (!principal) throw new Error('inference route declared without authentication');
  return { orgId: principal.key.org_id, workspaceId: principal.key.workspace_id, keyHash: principal.key.hash, key: principal.key, readUnits: principal.readUnits };
}

/**
 * The `format` of reasoning_details (OpenRouter's values only): whose signature scheme the reasoning
 * carries. On Bedrock that is Claude's for Claude models; others have no known format.
 */
function reasoningFormat(endpoint: Candidate['endpoint']): string {
  switch (endpoint.adapter) {
    case 'anthropic': return 'anthropic-claude-v1';
    case 'gemini': return 'google-gemini-v1';
    case 'openai-responses': return 'openai-responses-v1';
    case 'bedrock': return /claude/i.test(endpoint.upstream_model) ? 'anthropic-claude-v1' : 'unknown';
    default: return 'unknown';
  }
}

function identityOf(trace: RouteTrace, candidate: Candidate, serviceTier: string | null | undefined): ReplyIdentity {
  return {
    id: trace.generationId,
    model: candidate.endpoint.model,
    provider: candidate.endpoint.provider_name,
    created: Math.floor(Date.now() / 1000),
    serviceTier: serviceTier ?? candidate.serviceTier ?? null,
    reasoningFormat: reasoningFormat(candidate.endpoint),
  };
}

/** Body `session_id` wins over the x-session-id header. */
function withSession(request: InferenceRequest, http: GatewayRequest): InferenceRequest {
  if (request.sessionId !== undefined) return request;
  const header = http.headers['x-session-id'];
  if (header === undefined || header === '') return request;
  if (header.length > 256) throw new HttpError(400, 'Invalid x-session-id header: at most 256 characters');
  return { ...request, sessionId: header };
}

type Defer = ((work: Promise<unknown>) => void) | undefined;

/**
 * The abort signal of one request's upstream work: aborted when its client goes away or the gateway shuts
 * down (whichever comes first gives the reason). `dispose` unhooks it from both once the work is over, so
 * the process-wide shutdown signal does not collect a listener per request.
 */
function requestAbort(client: AbortSignal | undefined, shutdown: AbortSignal): { controller: AbortController; dispose: () => void } {
  const controller = new AbortController();
  const removers: Array<() => void> = [];
  for (const source of client ? [shutdown, client] : [shutdown]) {
    if (source.aborted) {
      controller.abort(source.reason);
      break;
    }
    const listener = () => controller.abort(source.reason);
    source.addEventListener('abort', listener, { once: true });
    removers.push(() => source.removeEventListener('abort', listener));
  }
  return { controller, dispose: () => { for (const remove of removers) remove(); } };
}

/** Work that may finish after the reply (settlement, release): handed to the invocation, or awaited here. */
async function later(work: Promise<unknown>, defer: Defer): Promise<void> {
  if (defer) defer(work);
  else await work;
}

/**
 * Ends the accounting of a request that failed before any of its reply: the hold is given back, unless
 * the request was abandoned (its client went away or the gateway shut down: `signal` is aborted) after an
 * attempt was sent upstream. The provider has read, and billed, the prompt by then and may still finish
 * the generation, so the hold is settled at an estimate of the prompt with no output, as a stream cut
 * mid-way is (on the attempted candidate: BYOK usage when that was the customer's key); releasing it
 * would let a caller disconnect just before every reply and pay nothing. A provider error (no abort) or
 * an abort before anything was sent still releases.
 */
function releaseOrCharge(request: InferenceRequest, caller: Caller, trace: RouteTrace, engine: EngineDeps, hold: Hold, signal: AbortSignal, invocation: Invocation | undefined): Promise<unknown> {
  const attempted = trace.lastCandidate;
  if (!signal.aborted || attempted === undefined) return release(hold, engine);
  return complete(request, caller, trace, attempted, {
    status: 'cancelled',
    // As a stream cut before its first event reads: no finish of its own.
    result: { finish_reason: 'error', usage: estimateUsage(request.params, '') },
    firstTokenMs: null,
    streamed: request.stream,
    usageEstimated: true,
  }, engine, hold, invocation).persisted;
}

async function run(inference: InferenceRequest, principal: Principal | null, http: GatewayRequest, deps: GatewayDeps, defer: Defer): Promise<OperationResult> {
  const engine = deps.engine;
  // A process shutting down takes no new work: refused before anything is reserved.
  if (engine.shutdown.triggered) throw shuttingDownError();
  const caller = callerOf(principal);
  const request = withSession(inference, http);
  const withMetadata = metadataEnabled(http.headers);
  const trace = startTrace(request, caller, engine);
  const generationHeader = { 'x-generation-id': trace.generationId };
  try {
    await applyByok(request, caller, trace, engine);
    const hold = await reserve(request, caller, trace, engine);
    if (request.stream) return await streamReply(request, caller, trace, engine, withMetadata, generationHeader, defer, hold, http);
    let generated: Awaited<ReturnType<typeof generate>>;
    const abort = requestAbort(http.signal, engine.shutdown.signal);
    try {
      generated = await generate(request, caller, trace, engine, abort.controller.signal);
    } catch (err) {
      // Also when the client went away (its 499 is never written) or the gateway is shutting down (503).
      await later(releaseOrCharge(request, caller, trace, engine, hold, abort.controller.signal, http.invocation), defer);
      throw err;
    } finally {
      abort.dispose();
    }
    const accounted = complete(request, caller, trace, generated.candidate, {
      status: generated.result.finish_reason === 'length' ? 'incomplete' : 'completed',
      result: generated.result,
      firstTokenMs: generated.firstTokenMs,
      streamed: false,
    }, engine, hold, http.invocation);
    const identity = identityOf(trace, generated.candidate, generated.result.service_tier);
    const extra = withMetadata ? { service_metadata: serviceMetadata(trace, generated.candidate, engine) } : {};
    const body = request.format === 'chat'
      ? chatCompletion(identity, generated.result, chatUsage(accounted.usage, accounted.cost, accounted.isByok), extra)
      : responseResult(identity, request.echo, generated.result, responsesUsage(accounted.usage, accounted.cost, accounted.isByok), Math.floor(Date.now() / 1000), extra);
    await later(accounted.persisted, defer);
    return { status: 200, headers: generationHeader, body };
  } catch (thrown) {
    // Billing refuses in domain errors (billing/errors.ts): answered here, so that they carry the generation's headers.
    const err = thrown instanceof DomainError ? httpErrorOf(thrown) : thrown;
    if (err instanceof HttpError) {
      err.envelope = { ...err.envelope, ...(withMetadata ? { service_metadata: serviceMetadata(trace, undefined, engine) } : {}) };
      err.headers = { ...err.headers, ...generationHeader };
    }
    throw err;
  }
}

interface StreamState {
  text: string;
  reasoning: string;
  signature?: string;
  toolCalls: Map<number, ToolCall>;
  finish: Extract<StreamEvent, { type: 'finish' }> | undefined;
}

function resultFromState(state: StreamState, request: InferenceRequest): GenerationResult & { usageEstimated: boolean } {
  const reported = state.finish?.usage;
  const output = state.text + state.reasoning + [...state.toolCalls.values()].map((call) => call.name + call.arguments).join('');
  return {
    usageEstimated: reported === undefined,
    text: state.text,
    ...(state.reasoning ? { reasoning: state.reasoning } : {}),
    ...(state.signature ? { reasoning_signature: state.signature } : {}),
    tool_calls: [...state.toolCalls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call),
    finish_reason: state.finish?.finish_reason ?? 'error',
    ...(state.finish?.native_finish_reason ? { native_finish_reason: state.finish.native_finish_reason } : {}),
    usage: reported ?? estimateUsage(request.params, output),
    ...(state.finish?.provider_id ? { provider_id: state.finish.provider_id } : {}),
    ...(state.finish?.service_tier ? { service_tier: state.finish.service_tier } : {}),
  };
}

async function streamReply(
  request: InferenceRequest,
  caller: Caller,
  trace: RouteTrace,
  engine: EngineDeps,
  withMetadata: boolean,
  generationHeader: Record<string, string>,
  defer: Defer,
  hold: Hold,
  http: GatewayRequest,
): Promise<OperationResult> {
  const invocation = http.invocation;
  const { controller, dispose } = requestAbort(http.signal, engine.shutdown.signal);
  const body = new Readable({
    read() { /* frames are pushed as they are produced */ },
    destroy(error, callback) {
      // The client went away (or the response stream failed): stop the upstream call now.
      controller.abort(new Error('client disconnected'));
      callback(error);
    },
  });
  const started = startStream(request, caller, trace, engine, controller.signal)
    .then((streaming) => ({ kind: 'started' as const, streaming }), (error: unknown) => ({ kind: 'failed' as const, error }));
  let waitTimer: NodeJS.Timeout | undefined;
  const first = await Promise.race([
    started,
    new Promise<{ kind: 'waiting' }>((resolve) => { waitTimer = setTimeout(() => resolve({ kind: 'waiting' }), engine.config.keepAliveMs); }),
  ]);
  clearTimeout(waitTimer);
  if (first.kind === 'failed') {
    dispose();
    await later(releaseOrCharge(request, caller, trace, engine, hold, controller.signal, invocation), defer);
    throw first.error;
  }

  const produced = produce(body, started, request, caller, trace, engine, withMetadata, controller.signal, first.kind === 'waiting', defer, hold, invocation)
    .finally(dispose)
    .catch((err: unknown) => {
      // A bug past the first byte must not take the process down: log it and cut the stream, which the
      // client sees as an incomplete reply rather than a clean end.
      engine.log(logLine('error', 'stream producer failed', { generation_id: trace.generationId, error: String(err) }));
      if (!body.destroyed) body.destroy(err instanceof Error ? err : new Error(String(err)));
    });
  defer?.(produced);
  return {
    kind: 'stream',
    status: 200,
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no', ...generationHeader },
    body,
  };
}

async function produce(
  body: Readable,
  started: Promise<{ kind: 'started'; streaming: Streaming } | { kind: 'failed'; error: unknown }>,
  request: InferenceRequest,
  caller: Caller,
  trace: RouteTrace,
  engine: EngineDeps,
  withMetadata: boolean,
  signal: AbortSignal,
  waited: boolean,
  defer: Defer,
  hold: Hold,
  invocation: Invocation | undefined,
): Promise<void> {
  let keepAlive: NodeJS.Timeout | undefined;
  const push = (frame: string) => {
    if (!frame || body.destroyed) return;
    if (invocation) invocation.responseBytes += Buffer.byteLength(frame);
    body.push(frame);
    armKeepAlive();
  };
  const armKeepAlive = () => {
    clearTimeout(keepAlive);
    keepAlive = setTimeout(() => push(SSE_KEEPALIVE), engine.config.keepAliveMs);
  };
  armKeepAlive();
  if (waited) push(SSE_KEEPALIVE);

  const outcome = await started;
  if (outcome.kind === 'failed') {
    // Committed to 200 while waiting: the failure becomes an error event.
    const error = outcome.error instanceof HttpError ? outcome.error : new HttpError(500, 'Internal server error');
    const identity: ReplyIdentity = { id: trace.generationId, model: request.models[0] ?? '', provider: '', created: Math.floor(Date.now() / 1000), serviceTier: null };
    const metadata = withMetadata ? { service_metadata: serviceMetadata(trace, undefined, engine) } : {};
    if (request.format === 'chat') push(new ChatStreamWriter(identity).error(error.status, error.message, error.metadata));
    else {
      const writer = new ResponsesStreamWriter(identity, request.echo);
      push(writer.start() + writer.error(error.status, error.message, metadata));
    }
    clearTimeout(keepAlive);
    await later(releaseOrCharge(request, caller, trace, engine, hold, signal, invocation), defer);
    if (!body.destroyed) body.push(null);
    return;
  }

  const { streaming } = outcome;
  const identity = identityOf(trace, streaming.candidate, undefined);
  const chat = request.format === 'chat' ? new ChatStreamWriter(identity) : undefined;
  const responses = request.format === 'responses' ? new ResponsesStreamWriter(identity, request.echo) : undefined;
  const state: StreamState = { text: '', reasoning: '', toolCalls: new Map(), finish: undefined };
  push(chat ? chat.start() : responses!.start());
  let failure: HttpError | undefined;
  try {
    for await (const event of streaming.events) {
      if (event.type === 'text-delta') state.text += event.delta;
      else if (event.type === 'reasoning-delta') state.reasoning += event.delta;
      else if (event.type === 'reasoning-signature') state.signature = event.signature;
      else if (event.type === 'tool-call-delta') {
        const call = state.toolCalls.get(event.index) ?? { id: event.id ?? '', name: event.name ?? '', arguments: '' };
        if (event.id && !call.id) call.id = event.id;
        if (event.name && !call.name) call.name = event.name;
        call.arguments += event.arguments_delta;
        state.toolCalls.set(event.index, call);
      } else state.finish = event;
      push(chat ? chat.event(event) : responses!.event(event));
      // Let the response stream write what was pushed before the next upstream event is handled: when a
      // provider's events arrive together, a promise chain alone would hold every frame back until the last.
      await nextTick();
    }
  } catch (err) {
    const error = err instanceof ProviderError ? err
      : new ProviderError({ provider: streaming.candidate.endpoint.provider, kind: 'network', status: 502, message: (err as Error)?.message ?? String(err), cause: err });
    // Aborted by the shutdown: a 503 error event; by the client: nothing more to write.
    failure = signal.aborted ? abortedError(signal) : toHttpError(error, trace);
  }

  const cancelled = (signal.aborted && !isShuttingDown(signal.reason)) || body.destroyed;
  const result = resultFromState(state, request);
  const accounted = complete(request, caller, trace, streaming.candidate, {
    status: cancelled ? 'cancelled' : failure ? 'error' : result.finish_reason === 'length' ? 'incomplete' : 'completed',
    result,
    firstTokenMs: streaming.firstTokenMs,
    streamed: true,
    usageEstimated: result.usageEstimated,
    ...(failure ? { error: { status: failure.status, message: failure.message } } : {}),
  }, engine, hold, invocation);
  const metadata = withMetadata ? { service_metadata: serviceMetadata(trace, streaming.candidate, engine) } : {};
  if (!cancelled) {
    if (failure) {
      push(chat ? chat.error(failure.status, failure.message, failure.metadata) : responses!.error(failure.status, failure.message, metadata));
    } else if (chat) {
      push(chat.usage(chatUsage(accounted.usage, accounted.cost, accounted.isByok), metadata) + SSE_DONE);
    } else {
      push(responses!.finish(result.finish_reason, responsesUsage(accounted.usage, accounted.cost, accounted.isByok), Math.floor(Date.now() / 1000), metadata) + SSE_DONE);
    }
  }
  clearTimeout(keepAlive);
  await later(accounted.persisted, defer);
  if (!body.destroyed) body.push(null);
}

export const inferenceOperations: InferenceOperations = {
  async chatCompletions({ body, principal, request, deps, defer }) {
    return run(fromChat(body), principal, request, deps, defer);
  },
  async createResponse({ body, principal, request, deps, defer }) {
    return run(fromResponses(body), principal, request, deps, defer);
  },
};
