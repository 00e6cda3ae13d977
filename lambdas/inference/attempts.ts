// The provider call with retries and fallbacks: each candidate in the plan's order, retried after a
// retryable failure (honouring Retry-After), all within the request's deadline; a stream may fail over
// until its first event, never after, and is then watched by an idle timer.
import { Abort } from '../platform/abort.js';
import { ProviderError } from '../providers/provider-error.js';
import { abortError, wasUnsent } from '../providers/http-client.js';
import type { CallOptions, GenerationResult, StreamEvent } from '../providers/types.js';
import type { Caller, EngineDeps } from './engine.js';
import type { InferenceRequest } from './inference-request.js';
import { abortedError, asProviderError, upstreamError } from './provider-failure.js';
import { retryDelayMs } from './retry-policy.js';
import { requestFor, type Candidate } from './routing.js';
import { hashedUser, type RouteTrace } from './trace.js';

/** One request's provider call: what to send, for whom, and what stops it. */
export interface AttemptOptions {
  request: InferenceRequest;
  caller: Caller;
  trace: RouteTrace;
  deps: EngineDeps;
  signal: AbortSignal;
  /**
   * Told of each attempt as it goes upstream (its candidate), and when it failed at the provider, which bills
   * nothing for it (undefined): what a request would be charged, should the process die now, follows it.
   */
  onAttempt?: ((candidate: Candidate | undefined) => void) | undefined;
}

export interface Generated {
  trace: RouteTrace;
  candidate: Candidate;
  result: GenerationResult;
  firstTokenMs: number;
}

/** A stream's events: iterated once, and closed early with return() (an async generator is one). */
export interface StreamEvents extends AsyncIterableIterator<StreamEvent> {
  return(value?: unknown): Promise<IteratorResult<StreamEvent>>;
}

export interface Streaming {
  trace: RouteTrace;
  candidate: Candidate;
  /** Every event after the first has arrived; failures after this point are mid-stream errors. */
  events: StreamEvents;
  firstTokenMs: number;
}

/** For callers that never cancel (a buffered reply): no listener is registered on it. */
export const NEVER_ABORTED: AbortSignal = new Abort().signal;

function timeoutError(message: string): DOMException {
  return new DOMException(message, 'TimeoutError');
}

/**
 * One attempt's cancellation: aborted with the request's reason when the request's signal aborts, or with a
 * TimeoutError when no first byte came within `waitMs`. The attempt is its own listener on the request's
 * signal (`handleEvent`) and its timer's argument, so an attempt makes no closures.
 */
export class Attempt extends Abort {
  private timer: NodeJS.Timeout | undefined;
  private watched: AbortSignal | undefined;

  constructor(signal: AbortSignal, private readonly waitMs: number, private readonly deadlineMs: number | undefined) {
    super();
    if (signal !== NEVER_ABORTED) {
      this.watched = signal;
      signal.addEventListener('abort', this);
    }
    this.timer = setTimeout(timedOut, waitMs, this);
  }

  /** The request's signal aborted. */
  handleEvent(): void {
    this.abort(this.watched?.reason);
  }

  timeOut(): void {
    this.timer = undefined;
    this.abort(timeoutError(this.deadlineMs === undefined ? `no reply within ${this.waitMs} ms` : `no reply within the request deadline of ${this.deadlineMs} ms`));
  }

  /** Only the first-byte timer is cleared on success: the request's abort must still reach a running stream. */
  clearTimer(): void {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Unhooks the attempt from the request's signal, once the attempt is over. */
  detach(): void {
    this.watched?.removeEventListener('abort', this);
    this.watched = undefined;
  }
}

function timedOut(attempt: Attempt): void {
  attempt.timeOut();
}

/** How many models' worth of attempts (the policy's maxAttempts each) one request makes at most. */
const MODELS_FULLY_TRIED = 3;

/** The attempts made so far at one model (a loop: nothing allocated on a request's first try). */
function attemptsOf(trace: RouteTrace, model: string): number {
  let count = 0;
  for (const attempt of trace.attempts) if (attempt.model === model) count += 1;
  return count;
}

/**
 * Tries the candidates in order: each may be tried again after a retryable failure (honouring
 * Retry-After), then the next candidate; the candidates of one model share the policy's maxAttempts, and
 * then the next model's are tried. Non-retryable failures end the search at once. All of it happens
 * within the request's deadline: each attempt waits at most what is left of it, and no retry or fallback
 * starts with less than `minAttemptMs` left (the last failure is the reply then; a timeout when it timed out).
 * The caller calls the returned attempt's `detach` once the attempt is over.
 */
async function withFallbacks<T>(
  trace: RouteTrace,
  deps: EngineDeps,
  signal: AbortSignal,
  onAttempt: AttemptOptions['onAttempt'],
  call: (candidate: Candidate, attempt: Attempt) => Promise<T>,
): Promise<{ value: T; candidate: Candidate; attempt: Attempt }> {
  const { retry: policy, requestTimeoutMs, firstByteTimeoutMs, minAttemptMs } = deps.config;
  const deadline = trace.startedAt + requestTimeoutMs;
  let lastError: ProviderError | undefined;
  // Tries per model: a model's endpoints and credentials (several BYOK keys, then the gateway's own) share
  // maxAttempts, so that the fallback models of `models` are still tried when the first model's candidates
  // have used theirs up; and the request as a whole makes at most MODELS_FULLY_TRIED times as many (a
  // list of 64 models must not make hundreds of calls to providers that are refusing them).
  outer: for (const candidate of trace.plan.candidates) {
    let tries = 0;
    for (;;) {
      if (trace.attempts.length >= policy.maxAttempts * MODELS_FULLY_TRIED) break outer;
      if (attemptsOf(trace, candidate.endpoint.model) >= policy.maxAttempts) continue outer;
      if (signal.aborted) throw abortedError(signal);
      const left = deadline - deps.now();
      if (trace.attempts.length > 0 && left < minAttemptMs) break outer;
      tries += 1;
      const wait = Math.max(1, Math.min(firstByteTimeoutMs, Math.floor(left)));
      const attempt = new Attempt(signal, wait, wait < firstByteTimeoutMs ? requestTimeoutMs : undefined);
      try {
        const value = await call(candidate, attempt);
        trace.attempts.push({ model: candidate.endpoint.model, provider: candidate.endpoint.provider, status: 'ok' });
        return { value, candidate, attempt };
      } catch (err) {
        attempt.clearTimer();
        attempt.detach();
        const error = asProviderError(err, candidate.endpoint, attempt.signal);
        trace.attempts.push({ model: candidate.endpoint.model, provider: candidate.endpoint.provider, status: error.status, message: error.message });
        if (signal.aborted) {
          // Aborted before its request left the process: the provider never got it, and bills nothing.
          if (wasUnsent(err)) notUpstream(trace, onAttempt);
          throw abortedError(signal);
        }
        // This attempt failed at the provider (which bills nothing for it): an abort during the backoff that
        // follows has nothing in flight to pay for.
        notUpstream(trace, onAttempt);
        lastError = error;
        // A customer's own key that fails (revoked, out of quota …) falls through to the next credential or endpoint.
        if (!error.retryable && candidate.byok) continue outer;
        if (!error.retryable) throw upstreamError(error, trace);
        deps.health.recordFailure(candidate.key, deps.now());
        const delay = retryDelayMs(error, tries, policy, deps.random);
        if (delay === undefined) continue outer;
        // A backoff that would leave too little of the deadline for the retry: the next candidate instead.
        if (deadline - deps.now() - delay < minAttemptMs) continue outer;
        await deps.sleep(delay, signal);
      }
    }
  }
  throw upstreamError(lastError ?? new ProviderError({ provider: 'gateway', kind: 'http', status: 502, message: 'No provider could be tried' }), trace);
}

/** The adapter for an attempt: the gateway's credentials, or the customer's key opened from the vault. */
async function adapterFor(candidate: Candidate, trace: RouteTrace, deps: EngineDeps) {
  if (candidate.privateEndpoint) {
    if (!deps.privateEndpoints) throw new ProviderError({ provider: candidate.endpoint.provider, kind: 'http', status: 502, message: 'Private endpoints are not available' });
    const endpoint = candidate.privateEndpoint;
    let apiKey: string;
    try {
      apiKey = await deps.privateEndpoints.apiKey(endpoint);
    } catch (err) {
      throw new ProviderError({ provider: candidate.endpoint.provider, kind: 'http', status: 502, message: `The private endpoint's key could not be released: ${(err as Error).message}` });
    }
    return deps.adapters.get(candidate.endpoint, { id: `${endpoint.id}@${endpoint.updated_at}`, apiKey, publicOnly: deps.privateEndpoints.publicOnly });
  }
  if (!candidate.byok) return deps.adapters.get(candidate.endpoint);
  if (!deps.byok) throw new ProviderError({ provider: candidate.endpoint.provider, kind: 'http', status: 502, message: 'BYOK is not available' });
  const before = deps.byok.kmsCalls;
  const apiKey = await deps.byok.apiKey(candidate.byok);
  trace.kmsRequests += deps.byok.kmsCalls - before;
  return deps.adapters.get(candidate.endpoint, { id: `${candidate.byok.id}@${candidate.byok.updated_at}`, apiKey });
}

/** Each organization's account-level identity (a hash, the same for all its requests without a user): made once. */
const accountIdentities = new Map<string, string>();
const MAX_ACCOUNT_IDENTITIES = 10_000;

function accountIdentity(orgId: string): string {
  let identity = accountIdentities.get(orgId);
  if (identity === undefined) {
    if (accountIdentities.size >= MAX_ACCOUNT_IDENTITIES) accountIdentities.clear();
    identity = hashedUser(orgId, '\u0000account')!;
    accountIdentities.set(orgId, identity);
  }
  return identity;
}

/**
 * The end-user identity sent upstream for abuse isolation: the safety identifier (or user) hashed per
 * organization, never the raw value; without either, an account-level identity.
 */
/** The request with the hashed end user (or the account's identity) providers are told about. */
export function withUser(generation: ReturnType<typeof requestFor>, caller: Pick<Caller, 'orgId'>, request: Pick<InferenceRequest, 'user' | 'safetyIdentifier'>) {
  const user = request.safetyIdentifier ?? request.user;
  generation.user = user === undefined ? accountIdentity(caller.orgId) : hashedUser(caller.orgId, user)!;
  return generation;
}

/**
 * The attempt's request goes upstream now (its adapter is ready: BYOK and private-endpoint keys opened): a
 * client gone from here on is charged its prompt (settlement.ts releaseOrCharge), and under npm start a
 * provisional record says so should the process die (onAttempt).
 */
function goingUpstream(trace: RouteTrace, candidate: Candidate, onAttempt: AttemptOptions['onAttempt'], signal: AbortSignal): void {
  // Aborted while the adapter was made ready: nothing goes, nothing is charged (http-client.ts wasUnsent).
  if (signal.aborted) throw abortError(signal.reason, true);
  trace.lastCandidate = candidate;
  onAttempt?.(candidate);
}

/** Nothing of the request is upstream any more (or never was): a client gone now is charged nothing. */
function notUpstream(trace: RouteTrace, onAttempt: AttemptOptions['onAttempt']): void {
  trace.lastCandidate = undefined;
  onAttempt?.(undefined);
}

export async function generate({ request, caller, trace, deps, signal, onAttempt }: AttemptOptions): Promise<Generated> {
  const { value, candidate, attempt } = await withFallbacks(trace, deps, signal, onAttempt, async (candidate, attempt) => {
    try {
      const adapter = await adapterFor(candidate, trace, deps);
      goingUpstream(trace, candidate, onAttempt, attempt.signal);
      return await adapter.generate(withUser(requestFor(candidate, request.params), caller, request), { signal: attempt.signal });
    } finally {
      attempt.clearTimer();
    }
  });
  attempt.detach();
  return { trace, candidate, result: value, firstTokenMs: deps.now() - trace.startedAt };
}

/** Resolves once an endpoint has produced its first event; failing over is allowed until then, never after. */
export async function startStream({ request, caller, trace, deps, signal, onAttempt }: AttemptOptions): Promise<Streaming> {
  const { value, candidate, attempt } = await withFallbacks(trace, deps, signal, onAttempt, async (candidate, attempt) => {
    const adapter = await adapterFor(candidate, trace, deps);
    goingUpstream(trace, candidate, onAttempt, attempt.signal);
    const options: CallOptions = { signal: attempt.signal };
    if (request.echoUpstreamBody) options.onBody = (body) => { trace.upstreamBody = body; };
    const iterator = adapter.stream(withUser(requestFor(candidate, request.params), caller, request), options)[Symbol.asyncIterator]();
    try {
      const first = await iterator.next();
      if (first.done) throw new ProviderError({ provider: candidate.endpoint.provider, kind: 'invalid-response', status: 502, message: 'Upstream stream ended without any event' });
      return { iterator, first: first.value };
    } finally {
      // The first-byte timer is replaced by an idle timer below.
      attempt.clearTimer();
    }
  });
  const firstTokenMs = deps.now() - trace.startedAt;
  const endpoint = candidate.endpoint;
  // One idle timer for the whole stream, pushed back by each event; when it fires the upstream call is
  // aborted with a timeout, which the adapter reports as the stream's failure.
  const idle = setTimeout(() => {
    attempt.abort(new ProviderError({ provider: endpoint.provider, kind: 'timeout', status: 408, message: 'Upstream stream stalled' }));
  }, deps.config.streamIdleTimeoutMs);
  const events = new WatchedEvents(value.first, value.iterator, idle, attempt);
  return { trace, candidate, events, firstTokenMs };
}

/**
 * A stream's events after its first, each pushing the idle timer back; once the upstream's events end (done
 * or failed) or the stream is closed early, the timer is cleared and the attempt detached, and closing early
 * closes the upstream iterator too. A plain object that hands on the upstream's own promises (one `then`
 * per event), not an async generator, whose every event cost a promise for next(), an await and a yield's
 * await on top of the upstream's.
 */
class WatchedEvents implements StreamEvents {
  private first: StreamEvent | undefined;
  private over = false;
  private readonly onStep = (step: IteratorResult<StreamEvent>): IteratorResult<StreamEvent> => {
    if (step.done) this.finish();
    return step;
  };
  private readonly onFailure = (error: unknown): never => {
    this.finish();
    throw error;
  };

  constructor(
    first: StreamEvent,
    private readonly upstream: AsyncIterator<StreamEvent>,
    private readonly idle: NodeJS.Timeout,
    private readonly attempt: { detach(): void },
  ) {
    this.first = first;
  }

  next(): Promise<IteratorResult<StreamEvent>> {
    if (this.over) return Promise.resolve({ done: true, value: undefined });
    const first = this.first;
    if (first !== undefined) {
      this.first = undefined;
      return Promise.resolve({ done: false, value: first });
    }
    this.idle.refresh();
    return this.upstream.next().then(this.onStep, this.onFailure);
  }

  async return(value?: unknown): Promise<IteratorResult<StreamEvent>> {
    const open = !this.over;
    this.finish();
    if (open) await this.upstream.return?.(undefined).catch(() => undefined);
    return { done: true, value: value as undefined };
  }

  async throw(error?: unknown): Promise<IteratorResult<StreamEvent>> {
    await this.return();
    throw error;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private finish(): void {
    if (this.over) return;
    this.over = true;
    this.first = undefined;
    clearTimeout(this.idle);
    this.attempt.detach();
  }
}
