// The inference pipeline, callable without HTTP: plan → middleware (BYOK first) → reserve → provider call
// with retries and fallbacks → settle, or release. The only way anything runs inference, and the sole owner
// of the hold: on every path (success, provider failure, client gone, shutdown, a middleware that throws,
// a stream consumer that stops early) the hold is settled or released exactly once.
import type { Hold } from '../billing/ledger.js';
import type { Invocation } from '../billing/infrastructure.js';
import type { DomainError } from '../platform/errors.js';
import { Abort } from '../platform/abort.js';
import { ProviderError } from '../providers/provider-error.js';
import type { GenerationResult, StreamEvent } from '../providers/types.js';
import { generate, startStream, type AttemptOptions, type Generated, type Streaming } from './attempts.js';
import type { Caller, EngineDeps } from './engine.js';
import type { InferenceRequest } from './inference-request.js';
import { chainOf, wrappedGenerate, wrappedStream, type GenerationCall, type GenerationMiddleware, type GenerationParams, type MiddlewareChain } from './middleware.js';
import { byokMiddleware } from './middleware/byok.js';
import { guardrailMiddleware } from './middleware/guardrails.js';
import { privateEndpointMiddleware } from './middleware/private-endpoints.js';
import { abortedError, upstreamError } from './provider-failure.js';
import type { Candidate } from './routing.js';
import { complete, journalProvisional, release, releaseOrCharge, reserve, type Accounted, type Completion } from './settlement.js';
import { isShuttingDown, shuttingDownError } from '../platform/shutdown.js';
import { gather, newStreamState, resultFromState } from './stream-state.js';
import { startTrace, type RouteTrace } from './trace.js';

/** Hands work that may outlive the reply (settlement, release) to whoever waits for it. */
export type Defer = (work: Promise<unknown>) => void;

export const DEFAULT_MIDDLEWARE: readonly GenerationMiddleware[] = [privateEndpointMiddleware, guardrailMiddleware, byokMiddleware];

export interface RunGenerationOptions {
  request: InferenceRequest;
  caller: Caller;
  deps: EngineDeps;
  /** A buffered result, or a stream of events. */
  stream: boolean;
  /** The caller's own cancellation (its client gone); the gateway's shutdown is always watched besides it. */
  signal?: AbortSignal | undefined;
  /** Takes the settlement or release; without it they are awaited before the result (or the stream's last event). */
  defer?: Defer | undefined;
  /** The Lambda invocation serving the request, for the infrastructure cost. */
  invocation?: Invocation | undefined;
  /** Around the provider call, the first outermost; BYOK alone by default. */
  middleware?: readonly GenerationMiddleware[];
  /** The status a mid-stream failure is recorded with: the one its caller is told (the caller's error map). */
  errorStatus: (error: DomainError) => number;
}

export interface GenerationOutcome extends Accounted {
  candidate: Candidate;
  result: GenerationResult;
  firstTokenMs: number;
}

/** How a stream ended, after its hold was settled: what to tell the consumer's client, if anything. */
export interface StreamEnd extends Accounted {
  type: 'end';
  status: Completion['status'];
  /** Set when the stream failed (also when cancelled by the client: its error is recorded, never shown). */
  failure: DomainError | undefined;
  result: GenerationResult;
}

/** The stream's first event: an endpoint answered, failing over is over. */
export interface StreamStart {
  type: 'start';
  candidate: Candidate;
  firstTokenMs: number;
}

export type GenerationEvent = StreamStart | StreamEvent | StreamEnd;

export interface GenerationRun<T> {
  /** The generation id and routing so far: known before anything is reserved (for replies and errors). */
  readonly trace: RouteTrace;
  /** The outcome, or the stream once the hold is reserved; rejects with the failure once the hold is released. */
  readonly result: Promise<T>;
  /** Stops the generation (the client went away): what was produced is settled as cancelled. */
  abort(reason: unknown): void;
  /** The request as it runs: after the middleware (a guardrail may have redacted it). */
  request(): InferenceRequest;
}

/**
 * Starts one generation. Planning happens at once: its errors (unknown model, nothing fits the request, the
 * gateway shutting down) are thrown here, before there is a trace; everything later rejects `result`.
 */
export function runGeneration(options: RunGenerationOptions & { stream: true }): GenerationRun<GenerationStream>;
export function runGeneration(options: RunGenerationOptions & { stream: false }): GenerationRun<GenerationOutcome>;
export function runGeneration(options: RunGenerationOptions): GenerationRun<GenerationOutcome | GenerationStream> {
  const { deps, caller } = options;
  // A process shutting down takes no new work: refused before anything is reserved.
  if (deps.shutdown.triggered) throw shuttingDownError();
  const trace = startTrace(options.request, caller, deps);
  const run = new Run(options, trace);
  return { trace, result: options.stream ? streamed(run) : buffered(run), abort: (reason) => run.abort(reason), request: () => run.request };
}

/** One generation's state: its call, its abort signal and whether its hold has ended. */
class Run {
  readonly call: GenerationCall;
  readonly chain: MiddlewareChain;
  readonly controller = new Abort();
  /** The consumer stopped the generation (not the shutdown, not the caller's signal). */
  stopped = false;
  /** The hold is settled or released (or that has begun): never a second time. */
  ended = false;
  /** Listening to the shutdown and the caller's signal. */
  private linked = false;

  constructor(readonly options: RunGenerationOptions, trace: RouteTrace) {
    this.chain = chainOf(options.middleware ?? DEFAULT_MIDDLEWARE);
    this.call = {
      type: options.stream ? 'stream' : 'generate',
      params: { request: options.request, candidates: trace.plan.candidates },
      caller: options.caller,
      trace,
      deps: options.deps,
    };
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get request(): InferenceRequest {
    return this.call.params.request;
  }

  abort(reason: unknown): void {
    this.stopped = true;
    this.controller.abort(reason);
  }

  /**
   * Hooks the request's signal to the gateway's shutdown and the caller's signal (whichever comes first
   * gives the reason), once the hold is taken; `dispose` unhooks it, so the process-wide shutdown signal
   * does not collect a listener per request. The run is itself the listener (`handleEvent`): no closures.
   */
  link(): void {
    const shutdown = this.options.deps.shutdown.signal;
    const client = this.options.signal;
    if (shutdown.aborted || client?.aborted) {
      this.handleEvent();
      return;
    }
    this.linked = true;
    shutdown.addEventListener('abort', this);
    client?.addEventListener('abort', this);
  }

  /** The shutdown or the caller's signal aborted: the first of them that did gives the reason. */
  handleEvent(): void {
    const shutdown = this.options.deps.shutdown.signal;
    this.controller.abort(shutdown.aborted ? shutdown.reason : this.options.signal?.reason);
  }

  dispose(): void {
    if (!this.linked) return;
    this.linked = false;
    this.options.deps.shutdown.signal.removeEventListener('abort', this);
    this.options.signal?.removeEventListener('abort', this);
  }

  /**
   * Work that may finish after the reply: handed to the caller's defer (nothing to await then, so the
   * caller skips the await), or returned for the caller to await.
   */
  later(work: Promise<unknown>): Promise<unknown> | undefined {
    if (!this.options.defer) return work;
    this.options.defer(work);
    return undefined;
  }

  async reserve(): Promise<Hold> {
    const hold = await reserve({ request: this.request, caller: this.call.caller, trace: this.call.trace, deps: this.call.deps });
    // Reserving may have cut the plan to the organization's own keys (credits could not cover the rest): the
    // middleware that wrap the provider call see the same candidates the attempts try.
    if (this.call.params.candidates !== this.call.trace.plan.candidates) this.call.params = { request: this.call.params.request, candidates: this.call.trace.plan.candidates };
    return hold;
  }

  /** The request failed before any of its reply: release (or charge the prompt of an abandoned attempt). */
  fail(hold: Hold): Promise<unknown> {
    if (this.ended) return Promise.resolve();
    this.ended = true;
    return this.later(releaseOrCharge({
      request: this.request, caller: this.call.caller, trace: this.call.trace, deps: this.call.deps,
      hold, signal: this.signal, streamed: this.options.stream, invocation: this.options.invocation,
    })) ?? Promise.resolve();
  }

  /**
   * A middleware threw after it called the provider: the call may have been served (and billed by the
   * provider) or still be running. Stops it if it runs, and gives what it served, if anything.
   */
  async served<T>(provider: Promise<T> | undefined): Promise<T | undefined> {
    if (!provider) return undefined;
    // An abort also makes a call cut short here charge its prompt (releaseOrCharge), as a client gone would.
    if (!this.signal.aborted) this.controller.abort(new Error('middleware failed after the provider call'));
    return provider.catch(() => undefined);
  }

  /**
   * Under npm start (a page journal), what the request is charged should the process die while an attempt is
   * upstream: a provisional record as each attempt goes (settlement.ts journalProvisional), withdrawn when it
   * fails at the provider. Never a reason for the request to fail. Undefined without a journal.
   */
  attemptWatch(hold: Hold): AttemptOptions['onAttempt'] {
    const { deps, trace } = this.call;
    if (!deps.pages.journaled) return undefined;
    return (candidate) => {
      try {
        if (candidate) journalProvisional({ request: this.request, caller: this.call.caller, trace, deps, candidate, hold, streamed: this.options.stream });
        else deps.pages.withdraw(trace.generationId);
      } catch (err) {
        deps.log.warn('provisional record not journaled', { generation_id: trace.generationId, error: String(err) });
      }
    };
  }

  /**
   * Settles at the generation's cost. Should accounting throw before the ledger's settle began, the hold
   * is released instead; complete() throws nothing once it began (so a hold is never both settled and released).
   */
  settle(hold: Hold, candidate: Candidate, completion: Completion): Accounted & { persisted: Promise<unknown> } {
    if (this.ended) throw new Error(`the hold of ${this.call.trace.generationId} has ended already`);
    this.ended = true;
    try {
      return complete({ request: this.request, caller: this.call.caller, trace: this.call.trace, deps: this.call.deps, candidate, completion, hold, invocation: this.options.invocation });
    } catch (err) {
      const { deps, trace } = this.call;
      const released = release(hold, deps).catch((failure: unknown) => deps.log.error('hold not released', { generation_id: trace.generationId, error: String(failure) }));
      this.later(released);
      throw err;
    }
  }
}

/**
 * Plans with the middleware: a promise only when a middleware returned one (BYOK without a source costs
 * nothing). Nothing is held yet, so a middleware that refuses the request leaves nothing to release.
 */
function transform(run: Run): Promise<void> | undefined {
  const { call } = run;
  const transforms = run.chain.transforms;
  for (let index = 0; index < transforms.length; index += 1) {
    const params = transforms[index]!.transformParams!(call);
    // Any thenable, not only a native promise: a middleware may return another library's.
    if (typeof (params as { then?: unknown } | undefined)?.then === 'function') {
      warmOrganization(call);
      return finishTransform(run, params as PromiseLike<GenerationParams>, index);
    }
    call.params = params as GenerationParams;
  }
  call.trace.plan.candidates = call.params.candidates;
  return undefined;
}

/**
 * A middleware waits for a read (its cache is cold: a new function instance, or an organization idle for
 * longer than the caches keep it): what the later steps read of the organization (its private endpoints,
 * guardrails, BYOK credentials and the key's workspace) is read beside it, not after it, so that a cold
 * request waits for one round trip after its key instead of four. Costs nothing when all are cached, and
 * reads nothing twice: the steps find the reads under way (RecordCache.warm).
 */
function warmOrganization({ caller, deps }: GenerationCall): void {
  const { orgId } = caller;
  deps.privateEndpoints?.warm?.(orgId);
  deps.guardrails?.warm?.(orgId);
  deps.byok?.warm(orgId);
  deps.ledger.warmWorkspace(orgId, caller.workspaceId, caller);
}

async function finishTransform(run: Run, pending: PromiseLike<GenerationParams>, index: number): Promise<void> {
  const { call } = run;
  const transforms = run.chain.transforms;
  call.params = await pending;
  for (let next = index + 1; next < transforms.length; next += 1) call.params = await transforms[next]!.transformParams!(call);
  call.trace.plan.candidates = call.params.candidates;
}

async function buffered(run: Run): Promise<GenerationOutcome> {
  const transformed = transform(run);
  if (transformed) await transformed;
  const hold = await run.reserve();
  run.link();
  const { call } = run;
  let generated: Generated;
  let provider: Promise<Generated> | undefined;
  try {
    generated = await wrappedGenerate(run.chain, call, () => (provider = generate({ request: run.request, caller: call.caller, trace: call.trace, deps: call.deps, signal: run.signal, onAttempt: run.attemptWatch(hold) })));
  } catch (err) {
    // A middleware that failed after the provider served: the provider billed it, so it is charged
    // (cancelled: the reply never went out, which says nothing about the endpoint).
    const served = provider === undefined || run.chain.generateWrappers.length === 0 ? undefined : await run.served(provider);
    if (served) {
      run.dispose();
      const pending = run.later(run.settle(hold, served.candidate, { status: 'cancelled', result: served.result, firstTokenMs: served.firstTokenMs, streamed: false }).persisted);
      if (pending) await pending;
      throw err;
    }
    // Also when the client went away (its reply is never written) or the gateway is shutting down.
    await run.fail(hold);
    throw err;
  } finally {
    run.dispose();
  }
  const accounted = run.settle(hold, generated.candidate, {
    status: generated.result.finish_reason === 'length' ? 'incomplete' : 'completed',
    result: generated.result,
    firstTokenMs: generated.firstTokenMs,
    streamed: false,
    // A provider that counts no tokens (Gemini's and Cohere's embeddings): the record says the usage is estimated.
    ...(generated.result.usage_estimated ? { usageEstimated: true } : {}),
  });
  const pending = run.later(accounted.persisted);
  if (pending) await pending;
  return { candidate: generated.candidate, result: generated.result, firstTokenMs: generated.firstTokenMs, usage: accounted.usage, cost: accounted.cost, isByok: accounted.isByok };
}

async function streamed(run: Run): Promise<GenerationStream> {
  const transformed = transform(run);
  if (transformed) await transformed;
  const hold = await run.reserve();
  run.link();
  return new GenerationStream(run, hold);
}

/**
 * The events of a streamed generation: `start` once an endpoint answered (a failure before it is thrown
 * by `next()`, the hold released), the provider's events, then `end` once the hold is settled. Iterate
 * it to the end or stop it with `return()` (a `for await` that breaks does): what was produced until then
 * is settled as cancelled and the upstream call closed.
 */
export class GenerationStream implements AsyncIterableIterator<GenerationEvent> {
  private readonly events: AsyncGenerator<GenerationEvent>;
  private started = false;

  constructor(private readonly run: Run, private readonly hold: Hold) {
    this.events = produce(run, hold);
  }

  next(): Promise<IteratorResult<GenerationEvent>> {
    this.started = true;
    return this.events.next();
  }

  /** Stops the stream: what was produced is settled as cancelled (a stream never read gives its hold back). */
  return(value?: unknown): Promise<IteratorResult<GenerationEvent>> {
    if (this.started) return this.events.return(value as undefined);
    // Closed before anything awaits: a next() that follows at once must find nothing to start.
    const closed = this.events.return(value as undefined);
    return this.abandon().then(() => closed);
  }

  /**
   * Fails the stream with `error` where it stands: after its start event, the stream ends as a
   * mid-stream failure would (upstream closed, settled as an error, the end event carries the failure).
   */
  throw(error?: unknown): Promise<IteratorResult<GenerationEvent>> {
    if (this.started) return this.events.throw(error);
    const thrown = this.events.throw(error);
    // Handled here: it rejects (with `error`) before the release is done, and is returned after it.
    thrown.catch(() => undefined);
    return this.abandon().then(() => thrown);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** Stopped before the first next(): nothing was sent upstream, so the hold goes back. */
  private abandon(): Promise<unknown> {
    this.started = true;
    // Nothing may start upstream from here: the generation is over.
    this.run.abort(new Error('stream stopped before it was read'));
    this.run.dispose();
    return this.run.fail(this.hold);
  }
}

async function* produce(run: Run, hold: Hold): AsyncGenerator<GenerationEvent> {
  const { call } = run;
  let streaming: Streaming;
  let provider: Promise<Streaming> | undefined;
  try {
    streaming = await wrappedStream(run.chain, call, () => (provider = startStream({ request: run.request, caller: call.caller, trace: call.trace, deps: call.deps, signal: run.signal, onAttempt: run.attemptWatch(hold) })));
  } catch (err) {
    // A middleware that failed after the provider answered: the upstream call is closed, and the aborted
    // run makes fail() charge the prompt the provider billed, as a stream cut before its first event is.
    const served = provider === undefined || run.chain.streamWrappers.length === 0 ? undefined : await run.served(provider);
    if (served) await served.events.return(undefined).catch(() => undefined);
    run.dispose();
    await run.fail(hold);
    throw err;
  }
  const state = newStreamState();
  try {
    yield { type: 'start', candidate: streaming.candidate, firstTokenMs: streaming.firstTokenMs };
    let failure: DomainError | undefined;
    try {
      for await (const event of streaming.events) {
        gather(state, event);
        yield event;
      }
    } catch (err) {
      const error = err instanceof ProviderError ? err
        : new ProviderError({ provider: streaming.candidate.endpoint.provider, kind: 'network', status: 502, message: (err as Error)?.message ?? String(err), cause: err });
      // Aborted by the shutdown: reported as such; by the client: recorded, never shown.
      failure = run.signal.aborted ? abortedError(run.signal) : upstreamError(error, call.trace);
    }
    const cancelled = (run.signal.aborted && !isShuttingDown(run.signal.reason)) || run.stopped;
    const result = resultFromState(state, run.request);
    const status: Completion['status'] = cancelled ? 'cancelled' : failure ? 'error' : result.finish_reason === 'length' ? 'incomplete' : 'completed';
    const accounted = run.settle(hold, streaming.candidate, streamCompletion(result, run, streaming, status, failure));
    // Handed over (or awaited) before the end event: a consumer may stop at it without another next().
    run.dispose();
    const pending = run.later(accounted.persisted);
    if (pending) await pending;
    yield { type: 'end', status, failure, result, usage: accounted.usage, cost: accounted.cost, isByok: accounted.isByok };
  } finally {
    if (!run.ended) {
      // The consumer stopped early: close the upstream call and settle what was produced as cancelled.
      run.stopped = true;
      await streaming.events.return(undefined).catch(() => undefined);
      run.dispose();
      const pending = run.later(run.settle(hold, streaming.candidate, streamCompletion(resultFromState(state, run.request), run, streaming, 'cancelled', undefined)).persisted);
      if (pending) await pending;
    } else run.dispose();
  }
}

function streamCompletion(result: ReturnType<typeof resultFromState>, run: Run, streaming: Streaming, status: Completion['status'], failure: DomainError | undefined): Completion {
  return {
    status,
    result,
    firstTokenMs: streaming.firstTokenMs,
    streamed: true,
    usageEstimated: result.usageEstimated,
    ...(failure ? { error: { status: run.options.errorStatus(failure), message: failure.message } } : {}),
  };
}
