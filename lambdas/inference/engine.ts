// The inference core: route the request, call providers with retries and fallbacks, then account for the
// result (cost, generation record, health, stickiness). The inference operations (inference/operations.ts,
// POST /chat/completions and POST /responses) sequence it: reserve, generate or stream, complete or release.
import { createHash, randomBytes } from 'node:crypto';
import { HttpError } from '../platform/http/errors.js';
import type { Catalog, CatalogEndpoint } from '../catalog/types.js';
import { ProviderError } from '../providers/provider-error.js';
import type { AdapterRegistry } from '../providers/registry.js';
import type { GenerationResult, StreamEvent, Usage } from '../providers/types.js';
import { emptyUsage } from '../providers/types.js';
import { generationToItem, type GenerationRecord, type GenerationRepository } from '../generations/generation-repository.js';
import type { Ledger, Hold } from '../billing/ledger.js';
import { affordableOutputTokens, reservationFor, reservedOutputTokens } from '../billing/estimate.js';
import { endedByShutdown, hourOf, rollupDelta } from '../billing/rollups.js';
import { FAILURE_SHARDS, type EndpointFailureRepository } from '../catalog/endpoint-failure-repository.js';
import type { ApiKey } from '../keys/types.js';
import type { Invocation } from '../billing/infrastructure.js';
import type { ByokSource } from '../byok/byok-source.js';
import { withByokCandidates } from '../byok/routing.js';
import { emfLine } from '../platform/metrics.js';
import { logLine } from '../platform/log-line.js';
import { computeCost, type CostBreakdown } from './cost.js';
import type { EndpointHealth, StickySessions } from './endpoint-health.js';
import type { InferenceRequest } from './inference-request.js';
import { DEFAULT_RETRY_POLICY, retryDelayMs, type RetryPolicy } from './retry-policy.js';
import { planRoute, requestFor, type Candidate, type RoutingPlan } from './routing.js';
import { isShuttingDown, shuttingDownError, type ShutdownSwitch } from './shutdown.js';

export interface Caller {
  orgId: string;
  workspaceId: string;
  keyHash: string;
  /** The calling key as authentication saw it: its limit terms go into the reservation. */
  key: ApiKey;
  /** DynamoDB read capacity spent on finding the key (0 when cached). */
  readUnits?: number;
}

export interface EngineConfig {
  /**
   * The one deadline of a request, from its start to its reply (non-streaming) or its first stream event:
   * every attempt, retry and fallback happens within it; past it the reply is a 408.
   */
  requestTimeoutMs: number;
  /** Longest wait of one attempt for its reply or first stream event (never more than what is left of the deadline). */
  firstByteTimeoutMs: number;
  /** A retry or fallback starts only with at least this much of the deadline left. */
  minAttemptMs: number;
  /** Longest silence between two stream events once streaming. */
  streamIdleTimeoutMs: number;
  /** SSE keep-alive comment interval; also how long a stream waits for its first event before committing to 200. */
  keepAliveMs: number;
  retry: RetryPolicy;
  region: string;
}

export const DEFAULT_ENGINE_CONFIG: EngineConfig = {
  requestTimeoutMs: 120_000,
  firstByteTimeoutMs: 120_000,
  minAttemptMs: 1_000,
  streamIdleTimeoutMs: 120_000,
  keepAliveMs: 10_000,
  retry: DEFAULT_RETRY_POLICY,
  region: 'local',
};

export interface EngineDeps {
  catalog: Catalog;
  adapters: AdapterRegistry;
  health: EndpointHealth;
  sessions: StickySessions;
  generations: GenerationRepository;
  /** Reserves before the provider call; settles after it, writing the generation record and its rollup. */
  ledger: Ledger;
  /** Per-endpoint counts of attempts that failed before a first byte (uptime; written after the reply). */
  endpointFailures: EndpointFailureRepository;
  /** Customers' own provider credentials; absent where no KMS key is configured. */
  byok?: ByokSource;
  config: EngineConfig;
  /** Monotonic milliseconds, for durations. */
  now: () => number;
  /** Wall clock, for timestamps and reset windows. */
  clock: () => Date;
  random: () => number;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  log: (line: string) => void;
  /** Triggered when a long-lived process shuts down: in-flight requests end early and settle. */
  shutdown: ShutdownSwitch;
}

export interface PipelineEntry {
  type: string;
  name: string;
  summary: string;
  data?: Record<string, unknown>;
}

export interface AttemptRecord {
  model: string;
  provider: string;
  status: number | 'ok';
  message?: string;
}

/** What happened while routing one request: for service_metadata and the generation record. */
export interface RouteTrace {
  generationId: string;
  requested: string;
  plan: RoutingPlan;
  attempts: AttemptRecord[];
  startedAt: number;
  pipeline: PipelineEntry[];
  /** KMS requests made for this request (opening BYOK credentials), for the cost ledger. */
  kmsRequests: number;
  /**
   * The candidate of the last attempt started (its request sent upstream): what an abandoned request is
   * charged against. Undefined while nothing has been sent.
   */
  lastCandidate?: Candidate;
}

export interface Accounted {
  usage: Usage;
  cost: CostBreakdown;
  isByok: boolean;
}

export function newGenerationId(now: number): string {
  return `gen-${Math.floor(now / 1000)}-${randomBytes(15).toString('base64url')}`;
}

/** End-user ids are folded into a per-organization hash before they go upstream or into storage. */
export function hashedUser(orgId: string, value: string | undefined): string | undefined {
  return value === undefined ? undefined : createHash('sha256').update(`${orgId}:${value}`).digest('hex').slice(0, 32);
}

function timeoutError(message: string): DOMException {
  return new DOMException(message, 'TimeoutError');
}

/**
 * Maps the last provider failure to the reply: 408 for a timeout, 499 when the client went away, the
 * provider's own 408, 429, 529, 400, 413 and 422, and 502 for anything else; Retry-After is passed on.
 */
export function toHttpError(error: ProviderError, trace: RouteTrace): HttpError {
  let status: number;
  if (error.kind === 'timeout') status = 408;
  else if (error.kind === 'aborted') status = 499;
  else if (error.status === 429 || error.status === 529 || error.status === 408) status = error.status;
  else if (error.status === 400 || error.status === 413 || error.status === 422) status = error.status;
  else status = 502;
  const headers: Record<string, string> = {};
  if (error.retryAfterMs !== undefined) headers['retry-after'] = String(Math.ceil(error.retryAfterMs / 1000));
  const reason = error.kind === 'timeout' ? 'timed out' : error.kind === 'network' ? 'connection failed' : `returned ${error.status}`;
  const message = error.kind === 'dropped'
    ? `Provider ${error.provider} connection dropped before the reply completed`
    : `Provider ${error.provider} ${reason}: ${error.message}`;
  return new HttpError(status, message, {
    headers,
    metadata: {
      provider_name: error.provider,
      raw: error.message,
      ...(error.providerCode ? { provider_code: error.providerCode } : {}),
      attempts: trace.attempts.length,
      generation_id: trace.generationId,
    },
  });
}

export function startTrace(request: InferenceRequest, caller: Caller, deps: EngineDeps): RouteTrace {
  const now = deps.now();
  const sessionKey = request.sessionId ? `${caller.orgId}:${request.sessionId}` : undefined;
  const plan = planRoute({
    request,
    catalog: deps.catalog,
    health: deps.health,
    stickyEndpoint: sessionKey ? deps.sessions.get(sessionKey, now) : undefined,
    now,
    random: deps.random,
  });
  const pipeline: PipelineEntry[] = plan.skipped.map((skip) => ({
    type: 'routing',
    name: 'context-length',
    summary: `${skip.key} skipped: the request needs about ${skip.requested_tokens} tokens and its context length is ${skip.context_length}`,
    data: { endpoint: skip.key, context_length: skip.context_length, requested_tokens: skip.requested_tokens },
  }));
  return { generationId: newGenerationId(Date.now()), requested: request.models.join(','), plan, attempts: [], startedAt: now, pipeline, kmsRequests: 0 };
}

/**
 * Tries the candidates in order: each may be tried again after a retryable failure (honouring
 * Retry-After), then the next candidate. Non-retryable failures end the search at once. All of it happens
 * within the request's deadline: each attempt waits at most what is left of it, and no retry or fallback
 * starts with less than `minAttemptMs` left (the last failure is the reply then; a 408 when it timed out).
 * The returned `detach` unhooks the attempt from `signal`; the caller calls it once the attempt is over.
 */
async function withFallbacks<T>(
  trace: RouteTrace,
  deps: EngineDeps,
  signal: AbortSignal,
  call: (candidate: Candidate, attempt: AbortController, clearTimer: () => void) => Promise<T>,
): Promise<{ value: T; candidate: Candidate; detach: () => void }> {
  const { retry: policy, requestTimeoutMs, firstByteTimeoutMs, minAttemptMs } = deps.config;
  const deadline = trace.startedAt + requestTimeoutMs;
  let lastError: ProviderError | undefined;
  outer: for (const candidate of trace.plan.candidates) {
    let tries = 0;
    for (;;) {
      if (trace.attempts.length >= policy.maxAttempts) break outer;
      if (signal.aborted) throw abortedError(signal);
      const left = deadline - deps.now();
      if (trace.attempts.length > 0 && left < minAttemptMs) break outer;
      tries += 1;
      trace.lastCandidate = candidate;
      const controller = new AbortController();
      const onAbort = () => controller.abort(signal.reason);
      const watched = signal !== NEVER_ABORTED;
      if (watched) signal.addEventListener('abort', onAbort, { once: true });
      const detach = () => { if (watched) signal.removeEventListener('abort', onAbort); };
      const wait = Math.max(1, Math.min(firstByteTimeoutMs, Math.floor(left)));
      const reason = wait < firstByteTimeoutMs ? `no reply within the request deadline of ${requestTimeoutMs} ms` : `no reply within ${wait} ms`;
      const timer = setTimeout(() => controller.abort(timeoutError(reason)), wait);
      // Only the first-byte timer is cleared on success: the caller's abort must still reach a running stream.
      const clearTimer = () => clearTimeout(timer);
      try {
        const value = await call(candidate, controller, clearTimer);
        trace.attempts.push({ model: candidate.endpoint.model, provider: candidate.endpoint.provider, status: 'ok' });
        return { value, candidate, detach };
      } catch (err) {
        clearTimer();
        detach();
        const error = asProviderError(err, candidate.endpoint, controller.signal);
        trace.attempts.push({ model: candidate.endpoint.model, provider: candidate.endpoint.provider, status: error.status, message: error.message });
        if (signal.aborted) throw abortedError(signal);
        // This attempt failed at the provider (which bills nothing for it): an abort during the backoff that
        // follows has nothing in flight to pay for.
        trace.lastCandidate = undefined;
        lastError = error;
        // A customer's own key that fails (revoked, out of quota …) falls through to the next credential or endpoint.
        if (!error.retryable && candidate.byok) continue outer;
        if (!error.retryable) throw toHttpError(error, trace);
        deps.health.recordFailure(candidate.key, deps.now());
        const delay = retryDelayMs(error, tries, policy, deps.random);
        if (delay === undefined) continue outer;
        // A backoff that would leave too little of the deadline for the retry: the next candidate instead.
        if (deadline - deps.now() - delay < minAttemptMs) continue outer;
        await deps.sleep(delay, signal);
      }
    }
  }
  throw toHttpError(lastError ?? new ProviderError({ provider: 'gateway', kind: 'http', status: 502, message: 'No provider could be tried' }), trace);
}

/** For callers that never cancel (a buffered reply): no listener is registered on it. */
export const NEVER_ABORTED: AbortSignal = new AbortController().signal;

/** Why a request stopped early: the gateway shutting down (503), or the client gone (499, never written). */
export function abortedError(signal: AbortSignal): HttpError {
  if (isShuttingDown(signal.reason)) return shuttingDownError();
  return new HttpError(499, 'Client closed the request', { cause: signal.reason });
}

function asProviderError(err: unknown, endpoint: CatalogEndpoint, signal: AbortSignal): ProviderError {
  // The attempt's own timer fired: a timeout, whatever the adapter made of the abort.
  if (signal.aborted && signal.reason instanceof DOMException && signal.reason.name === 'TimeoutError') {
    return new ProviderError({ provider: endpoint.provider, kind: 'timeout', status: 408, message: signal.reason.message, cause: err });
  }
  if (err instanceof ProviderError) return err;
  return new ProviderError({ provider: endpoint.provider, kind: 'network', status: 502, message: (err as Error)?.message ?? String(err), cause: err });
}

/**
 * Puts the organization's usable BYOK credentials into the plan: before the gateway's own endpoint (or
 * after it, for fallback credentials), or instead of it when a credential requires that.
 */
export async function applyByok(request: InferenceRequest, caller: Caller, trace: RouteTrace, deps: EngineDeps): Promise<void> {
  if (!deps.byok) return;
  const credentials = await deps.byok.credentialsFor(caller.orgId);
  if (credentials.length === 0) return;
  trace.plan.candidates = withByokCandidates(trace.plan.candidates, credentials, { workspaceId: caller.workspaceId, keyHash: caller.keyHash, user: request.user });
  if (trace.plan.candidates.length === 0) {
    throw new HttpError(502, 'No endpoint is available: the BYOK credentials that must be used do not apply to this request');
  }
}

/** The adapter for an attempt: the gateway's credentials, or the customer's key opened from the vault. */
async function adapterFor(candidate: Candidate, trace: RouteTrace, deps: EngineDeps) {
  if (!candidate.byok) return deps.adapters.get(candidate.endpoint);
  if (!deps.byok) throw new ProviderError({ provider: candidate.endpoint.provider, kind: 'http', status: 502, message: 'BYOK is not available' });
  const before = deps.byok.kmsCalls;
  const apiKey = await deps.byok.apiKey(candidate.byok);
  trace.kmsRequests += deps.byok.kmsCalls - before;
  return deps.adapters.get(candidate.endpoint, { id: `${candidate.byok.id}@${candidate.byok.updated_at}`, apiKey });
}

export interface Generated {
  trace: RouteTrace;
  candidate: Candidate;
  result: GenerationResult;
  firstTokenMs: number;
}

export async function generate(request: InferenceRequest, caller: Caller, trace: RouteTrace, deps: EngineDeps, signal: AbortSignal): Promise<Generated> {
  const { value, candidate, detach } = await withFallbacks(trace, deps, signal, async (candidate, attempt, clearTimer) => {
    try {
      const adapter = await adapterFor(candidate, trace, deps);
      return await adapter.generate(withUser(requestFor(candidate, request.params), caller, request), { signal: attempt.signal });
    } finally {
      clearTimer();
    }
  });
  detach();
  return { trace, candidate, result: value, firstTokenMs: deps.now() - trace.startedAt };
}

export interface Streaming {
  trace: RouteTrace;
  candidate: Candidate;
  /** Every event after the first has arrived; failures after this point are mid-stream errors. */
  events: AsyncGenerator<StreamEvent>;
  firstTokenMs: number;
}

/** Resolves once an endpoint has produced its first event; failing over is allowed until then, never after. */
export async function startStream(request: InferenceRequest, caller: Caller, trace: RouteTrace, deps: EngineDeps, signal: AbortSignal): Promise<Streaming> {
  const { value, candidate, detach } = await withFallbacks(trace, deps, signal, async (candidate, attempt, clearTimer) => {
    const adapter = await adapterFor(candidate, trace, deps);
    const iterator = adapter.stream(withUser(requestFor(candidate, request.params), caller, request), { signal: attempt.signal })[Symbol.asyncIterator]();
    try {
      const first = await iterator.next();
      if (first.done) throw new ProviderError({ provider: candidate.endpoint.provider, kind: 'invalid-response', status: 502, message: 'Upstream stream ended without any event' });
      return { iterator, first: first.value, attempt };
    } finally {
      // The first-byte timer is replaced by an idle timer below.
      clearTimer();
    }
  });
  const firstTokenMs = deps.now() - trace.startedAt;
  const endpoint = candidate.endpoint;
  // One idle timer for the whole stream, pushed back by each event; when it fires the upstream call is
  // aborted with a timeout, which the adapter reports as the stream's failure.
  const idle = setTimeout(() => {
    value.attempt.abort(new ProviderError({ provider: endpoint.provider, kind: 'timeout', status: 408, message: 'Upstream stream stalled' }));
  }, deps.config.streamIdleTimeoutMs);
  async function* events(): AsyncGenerator<StreamEvent> {
    try {
      yield value.first;
      for (;;) {
        idle.refresh();
        const next = await value.iterator.next();
        if (next.done) return;
        yield next.value;
      }
    } finally {
      clearTimeout(idle);
      detach();
    }
  }
  const generator = events();
  const originalReturn = generator.return.bind(generator);
  // Closing the stream early (client gone, mid-stream error) closes the upstream iterator too.
  generator.return = async (result) => {
    clearTimeout(idle);
    detach();
    await value.iterator.return?.(undefined).catch(() => undefined);
    return originalReturn(result);
  };
  return { trace, candidate, events: generator, firstTokenMs };
}

/**
 * The end-user identity sent upstream for abuse isolation: the safety identifier (or user) hashed per
 * organization, never the raw value; without either, an account-level identity.
 */
function withUser(generation: ReturnType<typeof requestFor>, caller: Caller, request: InferenceRequest) {
  generation.user = hashedUser(caller.orgId, request.safetyIdentifier ?? request.user ?? '\u0000account')!;
  return generation;
}

/**
 * Holds the most the request can cost on any of its candidate endpoints against the organization's
 * credits, the key's limit and the workspace's budgets (402 when one cannot cover it).
 */
export async function reserve(request: InferenceRequest, caller: Caller, trace: RouteTrace, deps: EngineDeps): Promise<Hold> {
  // Attempts with the customer's own key are billed to them by the provider: only the gateway's own
  // endpoints are held against credits (a request served only by BYOK holds nothing).
  const shared = trace.plan.candidates.filter((candidate) => candidate.byok === undefined);
  const endpoints = shared.map((candidate) => candidate.endpoint);
  const amount = reservationFor(request.params, endpoints);
  // Only a refusal evaluates these: it says how many output tokens the caller can afford.
  const hold = await deps.ledger.reserve(trace.generationId, caller.key, amount, {
    get requested() { return reservedOutputTokens(request.params, endpoints); },
    affordable: (remaining) => affordableOutputTokens(request.params, endpoints, remaining),
  });
  // release() is given the hold only: its request's attempts are found through it.
  tracesOfHolds.set(hold, trace);
  return hold;
}

/** The request failed before any usage: give the hold back. The reply need not wait for it. */
export function release(hold: Hold, deps: EngineDeps): Promise<unknown> {
  return Promise.all([deps.ledger.release(hold), recordFailedAttempts(tracesOfHolds.get(hold), deps)]);
}

const tracesOfHolds = new WeakMap<Hold, RouteTrace>();
const shuttingDownMessage = shuttingDownError().message;
/** Requests whose failed attempts are recorded already (whichever of complete() and release() ends it first). */
const failuresRecorded = new WeakSet<RouteTrace>();

/**
 * Whether a failed attempt counts against its endpoint's uptime: timeouts (408), rate limits (429) and
 * 5xx, which includes refused and dropped connections (502). Not a client that went away (499: the
 * adapters report an aborted attempt so, whether the client or the gateway's shutdown aborted it), not the
 * gateway's own shutdown (its 503), and not the request's own fault (400, 413, 422 …).
 */
export function countsAgainstEndpoint(attempt: AttemptRecord): boolean {
  if (attempt.status === 'ok') return false;
  if (attempt.status === 503 && attempt.message === shuttingDownMessage) return false;
  return attempt.status === 408 || attempt.status === 429 || attempt.status >= 500;
}

/**
 * Adds a finished request's failed attempts to their endpoints' failure counts (hour of the request's
 * start, a random shard): one UpdateItem per failing endpoint, all at once. Best effort and after the
 * reply (complete() and release() hand it to the work the caller defers): a write that fails is logged,
 * never thrown, and never holds up the settlement. Once per request.
 */
function recordFailedAttempts(trace: RouteTrace | undefined, deps: EngineDeps): Promise<void> {
  if (!trace || failuresRecorded.has(trace)) return Promise.resolve();
  failuresRecorded.add(trace);
  const failed = new Map<string, { model: string; provider: string; count: number }>();
  for (const attempt of trace.attempts) {
    if (!countsAgainstEndpoint(attempt)) continue;
    const key = `${attempt.model}@${attempt.provider}`;
    const entry = failed.get(key) ?? { model: attempt.model, provider: attempt.provider, count: 0 };
    entry.count += 1;
    failed.set(key, entry);
  }
  if (failed.size === 0) return Promise.resolve();
  const hour = hourOf(new Date(deps.clock().getTime() - Math.round(deps.now() - trace.startedAt)).toISOString());
  return Promise.all([...failed.values()].map(async ({ model, provider, count }) => {
    try {
      await deps.endpointFailures.add(model, provider, hour, count, Math.floor(deps.random() * FAILURE_SHARDS));
    } catch (err) {
      deps.log(logLine('warn', 'endpoint failures not recorded', { endpoint: `${model}@${provider}`, failures: count, generation_id: trace.generationId, error: String(err) }));
    }
  })).then(() => undefined);
}

export interface Completion {
  status: GenerationRecord['status'];
  result: Pick<GenerationResult, 'finish_reason' | 'native_finish_reason' | 'usage' | 'provider_id' | 'service_tier'>;
  firstTokenMs: number | null;
  streamed: boolean;
  /** The provider reported no usage (a stream cut short): `result.usage` is an estimate. */
  usageEstimated?: boolean;
  error?: { status: number; message: string };
}

/**
 * Accounts for a finished (or failed mid-stream) generation: cost, health and stickiness at once; the
 * hold is settled at the actual cost together with the generation record and its rollup, and `persisted`
 * resolves when that is stored (or its failure logged). The reply need not wait for it; the invocation must.
 */
export function complete(
  request: InferenceRequest,
  caller: Caller,
  trace: RouteTrace,
  candidate: Candidate,
  completion: Completion,
  deps: EngineDeps,
  hold: Hold,
  invocation?: Invocation,
): Accounted & { persisted: Promise<unknown> } {
  const now = deps.now();
  const usage = completion.result.usage ?? emptyUsage();
  const cost = computeCost(usage, candidate.endpoint.pricing);
  // With the customer's own key the provider bills them: counted as BYOK usage, not taken from credits.
  const isByok = candidate.byok !== undefined;
  // A cancelled generation (client gone, shutdown) says nothing about the endpoint: neither health nor stickiness.
  // Nor does a stream the gateway's own shutdown ended (the same rule as the rollup's uptime).
  if (completion.status === 'error' && !endedByShutdown({ status: completion.status, error: completion.error ?? null })) deps.health.recordFailure(candidate.key, now);
  else if (completion.status !== 'cancelled') deps.health.recordSuccess(candidate.key);
  if (request.sessionId && completion.status !== 'error' && completion.status !== 'cancelled') deps.sessions.set(`${caller.orgId}:${request.sessionId}`, candidate.key, now);
  const record: GenerationRecord = {
    id: trace.generationId,
    org_id: caller.orgId,
    workspace_id: caller.workspaceId,
    key_hash: caller.keyHash,
    model: candidate.endpoint.model,
    provider: candidate.endpoint.provider,
    upstream_model: candidate.endpoint.upstream_model,
    provider_id: completion.result.provider_id ?? null,
    api: request.format,
    streamed: completion.streamed,
    status: completion.status,
    finish_reason: completion.result.finish_reason ?? null,
    native_finish_reason: completion.result.native_finish_reason ?? null,
    usage,
    cost,
    is_byok: isByok,
    service_tier: completion.result.service_tier ?? candidate.serviceTier ?? null,
    attempts: trace.attempts.length,
    created_at: new Date(deps.clock().getTime() - Math.round(now - trace.startedAt)).toISOString(),
    latency_ms: Math.round(now - trace.startedAt),
    first_token_ms: completion.firstTokenMs === null ? null : Math.round(completion.firstTokenMs),
    generation_time_ms: Math.round(now - trace.startedAt - (completion.firstTokenMs ?? 0)),
    session_id: request.sessionId ?? null,
    user_hash: hashedUser(caller.orgId, request.user) ?? null,
    error: completion.error ?? null,
    reserved: hold.amount,
    usage_estimated: completion.usageEstimated === true,
    provider_responses: trace.attempts.map((attempt) => ({ provider: attempt.provider, model: attempt.model, status: attempt.status === 'ok' ? 200 : attempt.status })),
  };
  const item = generationToItem(record);
  const rollup = rollupDelta(record);
  const settlement = (async () => {
    const settled = await deps.ledger.settle(hold, isByok ? { credits: 0n, byok: cost.total } : { credits: cost.total, byok: 0n }, item, rollup);
    if (settled.outcome !== 'settled') return;
    // The last writes of the invocation: what serving it cost on AWS (with the capacity of the writes
    // before it), then the metrics line CloudWatch turns into cost dashboards.
    const infra = invocation
      ? await deps.ledger.recordInfrastructure(record.id, rollup.key, invocation, { writeUnits: hold.writeUnits + settled.writeUnits, readUnits: (caller.readUnits ?? 0) + hold.readUnits, kmsRequests: trace.kmsRequests }, deps.now(), itemBytes(item))
      : undefined;
    deps.log(emfLine(record, infra, deps.clock().getTime()));
  })();
  const persisted = Promise.all([settlement, recordFailedAttempts(trace, deps)]);
  return { usage, cost, isByok, persisted };
}

/** Approximate stored size of an item (attribute names and values), for write-capacity estimates. */
function itemBytes(item: Record<string, unknown>): number {
  return JSON.stringify(item, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value)).length;
}

/** The routing metadata object (`service_metadata` of a reply or error envelope, with `X-Service-Metadata: enabled`). */
export function serviceMetadata(trace: RouteTrace, candidate: Candidate | undefined, deps: EngineDeps, isByok = candidate?.byok !== undefined) {
  const attempt = trace.attempts.length;
  return {
    attempt,
    endpoints: {
      available: trace.plan.candidates.map((entry) => ({ model: entry.endpoint.model, provider: entry.endpoint.provider, selected: entry === candidate })),
      total: trace.plan.considered.length,
    },
    generation_time: Math.round(deps.now() - trace.startedAt),
    is_byok: isByok,
    region: deps.config.region,
    requested: trace.requested,
    strategy: trace.plan.strategy,
    summary: candidate
      ? `Served by ${candidate.endpoint.provider}${candidate.byok ? ' with your own key' : ''} (${candidate.endpoint.model}) on attempt ${attempt}${attempt > 1 ? ` after ${trace.attempts.filter((a) => a.status !== 'ok').map((a) => `${a.provider} ${a.status}`).join(', ')}` : ''}`
      : `No endpoint answered after ${attempt} attempt(s)`,
    pipeline: [
      ...trace.pipeline,
      ...(candidate && candidate.ignoredParameters.length
        ? [{ type: 'routing', name: 'unsupported-parameters', summary: `${candidate.endpoint.provider} does not support ${candidate.ignoredParameters.join(', ')}; not sent`, data: { parameters: candidate.ignoredParameters } }]
        : []),
    ],
  };
}
