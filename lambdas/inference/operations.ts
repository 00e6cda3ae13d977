// POST /chat/completions and POST /responses: translate the request, run it through the pipeline
// (run-generation.ts, which owns the hold), and reply as JSON or as an SSE stream. Streams commit to 200
// only once the first upstream event arrives (or the keep-alive window passes); before that, failures are
// real HTTP errors, after it they are error events.
import { Readable } from 'node:stream';
import type { InferenceOperations } from './routes.js';
import type { OperationResult } from '../platform/http/route.js';
import { HttpError, httpErrorOf } from '../platform/http/errors.js';
import type { Principal } from '../platform/http/auth.js';
import type { GatewayRequest } from '../platform/http/request.js';
import { DomainError } from '../platform/errors.js';
import type { Invocation } from '../billing/infrastructure.js';
import type { Caller, EngineDeps } from './engine.js';
import { runGeneration, type Defer, type GenerationOutcome, type GenerationRun, type GenerationStream, type RunGenerationOptions, type StreamEnd, type StreamStart } from './run-generation.js';
import { serviceMetadata } from './service-metadata.js';
import { shuttingDownError } from '../platform/shutdown.js';
import type { RouteTrace } from './trace.js';
import type { InferenceRequest } from './inference-request.js';
import { fromChat } from './formats/from-chat.js';
import { fromResponses } from './formats/from-responses.js';
import { chatCompletion, chatUsage, ChatStreamWriter, type ReplyIdentity } from './formats/to-chat.js';
import { responseResult, responsesUsage, ResponsesStreamWriter } from './formats/to-responses.js';
import { fromMessages } from './formats/from-messages.js';
import { messagesResult, messagesUsage, MessagesStreamWriter } from './formats/to-messages.js';
import { estimatePromptTokens } from './estimate.js';
import { embeddingsReply, embeddingsUsage, fromEmbeddings } from './formats/embeddings.js';
import type { StreamEvent } from '../providers/types.js';
import { SSE_DONE, SSE_KEEPALIVE } from './formats/sse.js';
import type { Candidate } from './routing.js';
import { resolvePreset } from './presets.js';
import { fromSpeech } from './formats/speech.js';
import { speechUsage } from '../providers/speech/audio-stream.js';
import { computeCost } from '../billing/cost.js';
import { nanosToUsd } from '../platform/money.js';

const nextTick = () => new Promise<void>((resolve) => process.nextTick(resolve));
/**
 * How long frames of events that arrived together may wait for each other before they are written. Each
 * write is a system call (about 40 µs on a busy machine) and a packet: a burst of events (a provider that
 * sends many at once, or a stream resuming after a stall) goes out in a few writes instead of one a frame,
 * and no frame waits for the rest of its burst longer than this plus one event's handling. An event that
 * arrives alone is written as soon as the next one is awaited.
 */
const FRAME_BATCH_MS = 0.25;

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
  return Object.assign({}, request, { sessionId: header });
}

/** The status a failure is answered (and recorded) with: the HTTP error map's. */
function errorStatus(error: DomainError): number {
  return httpErrorOf(error).status;
}

/** A failure as the HttpError it is answered with (the error map's; a 5xx log still names the domain error). */
function asHttpError(err: unknown): unknown {
  return err instanceof DomainError ? httpErrorOf(err) : err;
}

/** A failure after planning: its reply names the generation and, when asked for, what routing did. */
function withGeneration(err: unknown, trace: RouteTrace, withMetadata: boolean, engine: EngineDeps): unknown {
  const error = asHttpError(err);
  if (error instanceof HttpError) {
    error.envelope = { ...error.envelope, ...(withMetadata ? { service_metadata: serviceMetadata(trace, undefined, engine) } : {}) };
    error.headers = { ...error.headers, 'x-generation-id': trace.generationId };
  }
  return error;
}

/**
 * Where the pipeline's settlement and release go: the invocation's defer, or without one a list awaited
 * (drain) where the reply ends, so that the reply still waits for them. With the invocation's defer there
 * is nothing to drain (no `drain`, no await).
 */
function deferralOf(defer: Defer | undefined): { defer: Defer; drain: (() => Promise<unknown>) | undefined } {
  if (defer) return { defer, drain: undefined };
  const pending: Promise<unknown>[] = [];
  return { defer: (work) => { pending.push(work); }, drain: () => Promise.all(pending.splice(0)) };
}

async function run(inference: InferenceRequest, principal: Principal | null, http: GatewayRequest, engine: EngineDeps, defer: Defer | undefined): Promise<OperationResult> {
  // A process shutting down takes no new work (also before the request is looked at).
  if (engine.shutdown.triggered) throw shuttingDownError();
  const caller = callerOf(principal);
  const request = withSession(inference.preset ? await resolvePreset(inference, caller, engine.presets) : inference, http);
  const withMetadata = metadataEnabled(http.headers);
  const deferral = deferralOf(defer);
  const options: Omit<RunGenerationOptions, 'stream'> = { request, caller, deps: engine, signal: http.signal, defer: deferral.defer, invocation: http.invocation, errorStatus };
  if (request.stream) {
    const generation = runGeneration(Object.assign(options, { stream: true as const }));
    return streamReply({ generation, request, engine, withMetadata, deferral, defer, invocation: http.invocation });
  }
  const { generationId, body } = await bufferedReply(runGeneration(Object.assign(options, { stream: false as const })), request, engine, withMetadata, deferral.drain);
  return { status: 200, headers: { 'x-generation-id': generationId }, body };
}

/** A finished generation as its format's reply: a chat completion or a Responses result. */
function replyBody(trace: RouteTrace, request: InferenceRequest, outcome: GenerationOutcome, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const identity = identityOf(trace, outcome.candidate, outcome.result.service_tier);
  const body = request.format === 'chat'
    ? chatCompletion(identity, outcome.result, chatUsage(outcome.usage, outcome.cost, outcome.isByok), extra)
    : request.format === 'embeddings'
      ? embeddingsReply(identity, outcome.result, embeddingsUsage(outcome.usage, outcome.cost, outcome.isByok), request.echo.encoding_format, extra)
    : request.format === 'messages'
      ? messagesResult(identity, outcome.result, messagesUsage(outcome.usage, outcome.cost, outcome.isByok), extra)
      : responseResult(identity, request.echo, outcome.result, responsesUsage(outcome.usage, outcome.cost, outcome.isByok), Math.floor(Date.now() / 1000), extra);
  return body as unknown as Record<string, unknown>;
}

/** A stream's frames in the request's format. */
interface FormatWriter {
  start(): string;
  event(event: StreamEvent): string;
  /** The last frames of a stream that ended well (its usage and cost; `metadata`: service_metadata, if asked for). */
  end(end: StreamEnd, metadata: Record<string, unknown>): string;
  /** A failure as the stream's error frame, preceded by the stream's first frames if none was written yet. */
  error(failure: HttpError, metadata: Record<string, unknown>): string;
  /** debug.echo_upstream_body: the body sent upstream, as the stream's first frame (chat completions, Responses). */
  debug?(upstreamBody: unknown): string;
}

function streamWriter(request: InferenceRequest, identity: ReplyIdentity): FormatWriter {
  switch (request.format) {
    case 'chat': {
      const writer = new ChatStreamWriter(identity);
      return {
        start: () => writer.start(),
        event: (event) => writer.event(event),
        end: (end, metadata) => writer.usage(chatUsage(end.usage, end.cost, end.isByok), metadata) + SSE_DONE,
        error: (failure) => writer.error(failure.status, failure.message, failure.metadata),
        debug: (upstreamBody) => writer.debug(upstreamBody),
      };
    }
    case 'messages': {
      const prompt = estimatePromptTokens(request.params);
      const writer = new MessagesStreamWriter(identity, prompt.text + prompt.images);
      return {
        start: () => writer.start(),
        event: (event) => writer.event(event),
        end: (end, metadata) => writer.end(messagesUsage(end.usage, end.cost, end.isByok), metadata),
        error: (failure) => writer.error(failure.status, failure.message, failure.metadata),
      };
    }
    case 'embeddings': throw new Error('embeddings do not stream');
    case 'speech': throw new Error('speech is written as audio, not as events');
    case 'responses': {
      const writer = new ResponsesStreamWriter(identity, request.echo);
      let started = false;
      return {
        start: () => { started = true; return writer.start(); },
        event: (event) => writer.event(event),
        end: (end, metadata) => writer.finish(end.result.finish_reason, responsesUsage(end.usage, end.cost, end.isByok), Math.floor(Date.now() / 1000), metadata) + SSE_DONE,
        error: (failure, metadata) => (started ? '' : (started = true, writer.start())) + writer.error(failure.status, failure.message, metadata),
        debug: (upstreamBody) => writer.debug(upstreamBody),
      };
    }
  }
}

/** A non-streamed generation's reply body (chat completion or Responses result), or its failure as an HttpError. */
async function bufferedReply(
  generation: GenerationRun<GenerationOutcome>, request: InferenceRequest, engine: EngineDeps, withMetadata: boolean, drain: (() => Promise<unknown>) | undefined,
): Promise<{ generationId: string; body: Record<string, unknown> }> {
  const { trace } = generation;
  try {
    const outcome = await generation.result;
    const extra = withMetadata ? { service_metadata: serviceMetadata(trace, outcome.candidate, engine) } : {};
    const body = replyBody(trace, request, outcome, extra);
    if (drain) await drain();
    return { generationId: trace.generationId, body };
  } catch (err) {
    if (drain) await drain();
    throw withGeneration(err, trace, withMetadata, engine);
  }
}

/**
 * One request run to its end without HTTP (a batch item): the reply body as the live route would send it, or
 * the HttpError it would answer with; and `settled`, the settlement or release handed on (not awaited here:
 * a batch writes an item's record together with its result, so the record waits for the result).
 */
export async function generateDeferred(inference: InferenceRequest, caller: Caller, engine: EngineDeps, signal?: AbortSignal): Promise<{
  generationId: string | undefined;
  outcome: { body: Record<string, unknown> } | { error: HttpError };
  settled: Promise<unknown>;
}> {
  const request = Object.assign({}, inference, { stream: false });
  const pending: Promise<unknown>[] = [];
  const defer: Defer = (work) => { pending.push(work); };
  let generation: GenerationRun<GenerationOutcome>;
  try {
    if (engine.shutdown.triggered) throw shuttingDownError();
    const resolved = request.preset ? await resolvePreset(request, caller, engine.presets) : request;
    generation = runGeneration({ request: resolved, caller, deps: engine, stream: false, signal, defer, errorStatus });
  } catch (err) {
    const error = asHttpError(err);
    if (!(error instanceof HttpError)) throw err;
    return { generationId: undefined, outcome: { error }, settled: Promise.resolve() };
  }
  const { trace } = generation;
  const settled = () => Promise.all(pending.splice(0));
  try {
    const outcome = await generation.result;
    return { generationId: trace.generationId, outcome: { body: replyBody(trace, request, outcome) }, settled: settled() };
  } catch (err) {
    const error = withGeneration(err, trace, false, engine);
    if (!(error instanceof HttpError)) throw err;
    return { generationId: trace.generationId, outcome: { error }, settled: settled() };
  }
}

interface StreamReplyOptions {
  generation: GenerationRun<GenerationStream>;
  request: InferenceRequest;
  engine: EngineDeps;
  withMetadata: boolean;
  deferral: ReturnType<typeof deferralOf>;
  /** The invocation's own defer: the stream's producer is handed to it. */
  defer: Defer | undefined;
  invocation: Invocation | undefined;
}

type Started = { kind: 'started'; start: StreamStart } | { kind: 'failed'; error: unknown };

async function streamReply(options: StreamReplyOptions): Promise<OperationResult> {
  const { generation, engine, deferral } = options;
  const { trace } = generation;
  let stream: GenerationStream;
  let first: Started | { kind: 'waiting' };
  let started: Promise<Started>;
  try {
    stream = await generation.result;
    started = stream.next().then(
      (next): Started => (!next.done && next.value.type === 'start' ? { kind: 'started', start: next.value } : { kind: 'failed', error: new Error('stream began without its start event') }),
      (error: unknown): Started => ({ kind: 'failed', error }),
    );
    let waitTimer: NodeJS.Timeout | undefined;
    first = await Promise.race([
      started,
      new Promise<{ kind: 'waiting' }>((resolve) => { waitTimer = setTimeout(() => resolve({ kind: 'waiting' }), engine.config.keepAliveMs); }),
    ]);
    clearTimeout(waitTimer);
    if (first.kind === 'failed') throw first.error;
  } catch (err) {
    if (deferral.drain) await deferral.drain();
    throw withGeneration(err, trace, options.withMetadata, engine);
  }

  const body = new Readable({
    // Frames are text and stay text on their way to the response (which encodes them as it writes): without
    // an encoding, every push() copied its frame into a Buffer first.
    encoding: 'utf8',
    read() { /* frames are pushed as they are produced */ },
    destroy(error, callback) {
      // The client went away (or the response stream failed): stop the upstream call now. A body destroyed
      // after its end (the stream finished) has nothing left to stop.
      if (error || !this.readableEnded) generation.abort(new Error('client disconnected'));
      callback(error);
    },
  });
  const produced = writeStream(Object.assign(options, { body, stream, started, waited: first.kind === 'waiting' }))
    .catch((err: unknown) => {
      // A bug past the first byte must not take the process down: log it and cut the stream, which the
      // client sees as an incomplete reply rather than a clean end.
      engine.log.error('stream producer failed', { generation_id: trace.generationId, error: String(err) });
      if (!body.destroyed) body.destroy(err instanceof Error ? err : new Error(String(err)));
    });
  options.defer?.(produced);
  return {
    kind: 'stream',
    status: 200,
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no', 'x-generation-id': trace.generationId },
    body,
  };
}

/** A failure written as a stream's error event: what the caller would have been answered with, or a bare 500. */
function asStreamError(err: unknown): HttpError {
  const error = asHttpError(err);
  return error instanceof HttpError ? error : new HttpError(500, 'Internal server error');
}

async function writeStream(options: StreamReplyOptions & { body: Readable; stream: GenerationStream; started: Promise<Started>; waited: boolean }): Promise<void> {
  const { body, request, engine, invocation, withMetadata, deferral } = options;
  const { trace } = options.generation;
  let keepAlive: NodeJS.Timeout | undefined;
  /**
   * When the oldest frame pushed since the last flush of ours was pushed (a wait for the upstream may have
   * written it already: the next check then flushes at once, which costs a tick and no write).
   */
  let unwrittenSince: number | undefined;
  const push = (frame: string) => {
    if (!frame || body.destroyed) return;
    if (invocation) invocation.responseBytes += Buffer.byteLength(frame);
    body.push(frame);
    unwrittenSince ??= performance.now();
    armKeepAlive();
  };
  // One timer for the whole stream, restarted by each frame (refresh() allocates nothing, where a new timer
  // per frame cost a Timeout object per chunk).
  const armKeepAlive = () => {
    if (keepAlive) keepAlive.refresh();
    else keepAlive = setTimeout(() => push(SSE_KEEPALIVE), engine.config.keepAliveMs);
  };
  armKeepAlive();
  if (options.waited) push(SSE_KEEPALIVE);

  const outcome = await options.started;
  if (outcome.kind === 'failed') {
    // Committed to 200 while waiting: the failure becomes an error event (the pipeline released the hold).
    const error = asStreamError(outcome.error);
    const identity: ReplyIdentity = { id: trace.generationId, model: request.models[0] ?? '', provider: '', created: Math.floor(Date.now() / 1000), serviceTier: null };
    const metadata = withMetadata ? { service_metadata: serviceMetadata(trace, undefined, engine) } : {};
    push(streamWriter(request, identity).error(error, metadata));
    clearTimeout(keepAlive);
    if (deferral.drain) await deferral.drain();
    if (!body.destroyed) body.push(null);
    return;
  }

  const { stream } = options;
  try {
    const { candidate } = outcome.start;
    const identity = identityOf(trace, candidate, undefined);
    const writer = streamWriter(request, identity);
    if (request.echoUpstreamBody && trace.upstreamBody !== undefined && writer.debug) push(writer.debug(trace.upstreamBody));
    push(writer.start());
    // The first bytes go out at once: the client's time to first byte does not wait for a burst.
    await nextTick();
    unwrittenSince = undefined;
    let step = await stream.next();
    while (!step.done) {
      const event = step.value;
      if (event.type === 'end') {
        // Cancelled (the client went away): nothing more to write.
        if (event.status !== 'cancelled') {
          const metadata = withMetadata ? { service_metadata: serviceMetadata(trace, candidate, engine) } : {};
          push(event.failure ? writer.error(asStreamError(event.failure), metadata) : writer.end(event, metadata));
        }
      } else if (event.type !== 'start') {
        try {
          push(writer.event(event));
        } catch (err) {
          // An event that cannot be written fails the stream as an upstream failure mid-way does: the
          // pipeline closes the upstream call, settles it as an error, and its end event carries the error.
          step = await stream.throw(err);
          continue;
        }
        // Let the response stream write what was pushed before more upstream events are handled: when a
        // provider's events arrive together, a promise chain alone would hold every frame back until the
        // last. Frames of one burst share a write for up to FRAME_BATCH_MS.
        if (unwrittenSince !== undefined && performance.now() - unwrittenSince >= FRAME_BATCH_MS) {
          await nextTick();
          unwrittenSince = undefined;
        }
      }
      step = await stream.next();
    }
  } catch (err) {
    // A failure of the reply itself: the stream still ends (its hold settled, the request's listeners
    // removed) before the failure cuts the reply, as it did before the pipeline existed.
    await stream.return(undefined).catch(() => undefined);
    if (deferral.drain) await deferral.drain().catch((failure: unknown) => engine.log.error('stream settlement failed', { generation_id: trace.generationId, error: String(failure) }));
    throw err;
  } finally {
    clearTimeout(keepAlive);
  }
  if (deferral.drain) await deferral.drain();
  if (!body.destroyed) body.push(null);
}

/**
 * POST /audio/speech: the audio written as the provider produces it. Until the provider answers, failures
 * are real HTTP errors (retries and fallbacks happen in the pipeline); after the first byte, raw audio has
 * no error frame, so a failure cuts the reply, which the client sees as incomplete. The price is per input
 * character, so the cost is known before the first byte and goes out in the headers.
 */
async function speechReply(inference: InferenceRequest, principal: Principal | null, http: GatewayRequest, engine: EngineDeps, defer: Defer | undefined): Promise<OperationResult> {
  if (engine.shutdown.triggered) throw shuttingDownError();
  const caller = callerOf(principal);
  const request = withSession(inference, http);
  const deferral = deferralOf(defer);
  const generation = runGeneration({ request, caller, deps: engine, stream: true, signal: http.signal, defer: deferral.defer, invocation: http.invocation, errorStatus });
  const { trace } = generation;
  let stream: GenerationStream;
  let start: StreamStart;
  try {
    stream = await generation.result;
    const first = await stream.next();
    if (first.done || first.value.type !== 'start') throw new Error('stream began without its start event');
    start = first.value;
  } catch (err) {
    if (deferral.drain) await deferral.drain();
    throw withGeneration(err, trace, false, engine);
  }
  // What the provider is sent, a guardrail's redactions included, is what is charged.
  const speech = generation.request().params.speech!;
  const cost = computeCost(speechUsage(speech), start.candidate.endpoint.pricing);
  const flow = new AudioFlow();
  const body = new Readable({
    read() { flow.resume(); },
    destroy(error, callback) {
      // The client went away: stop the upstream call now (what was produced is settled as cancelled).
      if (error || !this.readableEnded) generation.abort(new Error('client disconnected'));
      flow.resume();
      callback(error);
    },
  });
  const produced = writeAudio(stream, body, flow, http.invocation, deferral).catch((err: unknown) => {
    engine.log.error('speech producer failed', { generation_id: trace.generationId, error: String(err) });
    if (!body.destroyed) body.destroy(err instanceof Error ? err : new Error(String(err)));
  });
  defer?.(produced);
  return {
    kind: 'stream',
    status: 200,
    headers: {
      'content-type': speech.format === 'mp3' ? 'audio/mpeg' : 'audio/pcm',
      ...(speech.format === 'pcm' ? { 'x-audio-sample-rate': String(PCM_SAMPLE_RATE), 'x-audio-sample-format': 's16le' } : {}),
      'cache-control': 'no-cache',
      'x-generation-id': trace.generationId,
      'x-usage-characters': String(speech.input.length),
      'x-usage-cost': String(nanosToUsd(cost.total)),
    },
    body,
  };
}

/** Both speech adapters ask for 24 kHz PCM (OpenAI's only rate; ElevenLabs' pcm_24000). */
const PCM_SAMPLE_RATE = 24_000;

/**
 * Backpressure for a speech reply: when the client reads slower than the provider speaks, the next upstream
 * chunk is not pulled until the reply's buffer has room (the provider's socket then fills, and TCP slows it),
 * so a slow client does not make the gateway hold the whole audio.
 */
class AudioFlow {
  private waiting: (() => void) | undefined;

  /** Resolves when the reply wants more (or is gone). */
  wait(): Promise<void> {
    return new Promise((resolve) => { this.waiting = resolve; });
  }

  resume(): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.();
  }
}

async function writeAudio(stream: GenerationStream, body: Readable, flow: AudioFlow, invocation: Invocation | undefined, deferral: ReturnType<typeof deferralOf>): Promise<void> {
  try {
    for (let step = await stream.next(); !step.done; step = await stream.next()) {
      const event = step.value;
      if (event.type === 'audio') {
        if (body.destroyed) continue;
        if (invocation) invocation.responseBytes += event.data.length;
        if (!body.push(event.data) && !body.destroyed) await flow.wait();
      } else if (event.type === 'end' && event.failure && event.status !== 'cancelled' && !body.destroyed) {
        if (deferral.drain) await deferral.drain();
        body.destroy(new Error(`speech stream failed: ${event.failure.message}`));
        return;
      }
    }
  } catch (err) {
    await stream.return(undefined).catch(() => undefined);
    if (deferral.drain) await deferral.drain().catch(() => undefined);
    throw err;
  }
  if (deferral.drain) await deferral.drain();
  if (!body.destroyed) body.push(null);
}

export function createInferenceOperations({ engine }: { engine: EngineDeps }): InferenceOperations {
  return {
    async chatCompletions({ body, principal, request, defer }) {
      return run(fromChat(body), principal, request, engine, defer);
    },
    async createResponse({ body, principal, request, defer }) {
      return run(fromResponses(body), principal, request, engine, defer);
    },
    async createMessage({ body, principal, request, defer }) {
      return run(fromMessages(body), principal, request, engine, defer);
    },
    async createEmbeddings({ body, principal, request, defer }) {
      return run(fromEmbeddings(body), principal, request, engine, defer);
    },
    async createSpeech({ body, principal, request, defer }) {
      return speechReply(fromSpeech(body), principal, request, engine, defer);
    },
  };
}
