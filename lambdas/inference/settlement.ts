// The money side of one generation: the hold taken before the provider call, and how it ends: its
// generation record (actual cost, infrastructure cost) handed to the page writer, which the meter
// aggregator applies to the meters and the rollups, then the EMF line; or the hold given back. Failed attempts are added to their endpoints' failure counts either way. Only the pipeline
// (run-generation.ts) calls these, once per request.
import type { Hold } from '../billing/ledger.js';
import { leaseSpend } from '../billing/leases.js';
import { speechUsage } from '../providers/speech/audio-stream.js';
import { affordableOutputTokens, estimateUsage, reservationFor, reservedOutputTokens } from './estimate.js';
import { endedByShutdown, hourOf } from '../billing/rollups.js';
import { infrastructureCost, type Invocation } from '../billing/infrastructure.js';
import type { GenerationResult, Usage } from '../providers/types.js';
import { emptyUsage } from '../providers/types.js';
import type { GenerationRecord } from '../billing/generation-record.js';
import type { GenerationFacts } from '../observability/event.js';
import { RecordSizes, recordJson } from '../billing/page-codec.js';
import { writeUnitsOf } from '../platform/dynamo/item-size.js';
import { FAILURE_SHARDS } from '../catalog/index.js';
import type { Claim, StoredEntry } from '../billing/pages.js';
import { computeCost, type CostBreakdown } from '../billing/cost.js';
import type { Caller, EngineDeps } from './engine.js';
import type { ApiKey } from '../keys/index.js';
import type { Workspace } from '../organizations/index.js';
import type { InferenceRequest } from './inference-request.js';
import type { Candidate } from './routing.js';
import { shuttingDownError } from '../platform/shutdown.js';
import { hashedUser, type AttemptRecord, type RouteTrace } from './trace.js';
import { spendMetersFor } from './spend-limits.js';
import { isEndUserMeter, limitsAny, type SpendMeters } from '../billing/spend-meters.js';
import { ReservationRefused } from '../billing/errors.js';

/** The request whose money is being handled. */
export interface SettlementOptions {
  request: InferenceRequest;
  caller: Caller;
  trace: RouteTrace;
  deps: EngineDeps;
}

export interface Accounted {
  usage: Usage;
  cost: CostBreakdown;
  isByok: boolean;
}

export interface Completion {
  status: GenerationRecord['status'];
  result: Pick<GenerationResult, 'finish_reason' | 'native_finish_reason' | 'usage' | 'provider_id' | 'service_tier'> & Partial<Pick<GenerationResult, 'text' | 'reasoning' | 'tool_calls'>>;
  firstTokenMs: number | null;
  streamed: boolean;
  /** The provider reported no usage (a stream cut short): `result.usage` is an estimate. */
  usageEstimated?: boolean;
  error?: { status: number; message: string };
}

/**
 * Holds the most the request can cost on any of its candidate endpoints against the organization's
 * credits, the key's limit and the workspace's budgets: from the process's lease for the key, in memory,
 * when one covers it; otherwise exactly, in a transaction (refused when a limit cannot cover it); or, for
 * a request that can cost no credits and that nothing could refuse, not at all.
 */
export async function reserve(options: SettlementOptions): Promise<Hold> {
  const { trace, caller, deps, request } = options;
  // Its guardrails' spend limits and its end user's: a request any of them limits holds exactly (reserveFor).
  const spendOrPromise = spendMetersFor(request, caller, deps);
  const spend = spendOrPromise instanceof Promise ? await spendOrPromise : spendOrPromise;
  // A lease the key took before a guardrail's limit came to count all its requests is given back rather than
  // left to go idle (an end user's limit counts only that user's requests: the key's others still lease).
  if (spend && (spend.key.length || spend.extras.some((extra) => !isEndUserMeter(extra)))) deps.leases?.retireKey?.(caller.keyHash);
  try {
    return await reserveFor(options, spend);
  } catch (err) {
    // What credits (or a limit on them) cannot cover may still be served by the organization's own keys
    // (BYOK, its private endpoints), which spend no credits: the request goes to them alone, held for
    // nothing. Not when a limit in play counts BYOK spend: a hold of nothing could not keep such a limit
    // (it refuses only once reached), so the refusal stands; nor for an organization in debt (the retry's
    // exact check of nothing refuses it, and the first refusal is the one answered).
    if (!(err instanceof ReservationRefused) || err.required === 0n) throw err;
    const all = trace.plan.candidates;
    const own = all.filter((candidate) => candidate.byok !== undefined);
    if (own.length === 0 || own.length === all.length) throw err;
    const workspace = await deps.ledger.workspaceOf(caller.orgId, caller.workspaceId);
    const byokCounted = countsByok(caller.key, workspace) || spend?.key.some((limit) => limit.withByok) || spend?.extras.some((extra) => extra.limits.some((limit) => limit.withByok));
    if (byokCounted) throw err;
    trace.plan.candidates = own;
    try {
      return await reserveFor(options, spend);
    } catch (again) {
      trace.plan.candidates = all;
      throw again instanceof ReservationRefused ? err : again;
    }
  }
}

async function reserveFor({ request, caller, trace, deps }: SettlementOptions, spend: SpendMeters | undefined): Promise<Hold> {
  // Attempts with the customer's own key are billed to them by the provider: only the gateway's own
  // endpoints are held against credits (a request served only by BYOK holds nothing).
  const shared = trace.plan.candidates.filter((candidate) => candidate.byok === undefined);
  const endpoints = shared.map((candidate) => candidate.endpoint);
  const amount = reservationFor(request.params, endpoints);
  const limited = limitsAny(spend);
  // A request that holds nothing (BYOK only, or free models) goes to the ledger when a limit counts BYOK
  // spend, or its organization is in debt: the exact check of nothing is what refuses it then, which no
  // lease would see. Otherwise nothing can refuse it, and it holds nothing, with no round trip (the
  // organization's standing is read at most once per BALANCE_CACHE_TTL_MS per process).
  if (!limited && (amount === 0n || deps.leases)) {
    let readUnits = 0;
    const workspace = await deps.ledger.workspaceOf(caller.orgId, caller.workspaceId, (units) => { readUnits += units; });
    const unheld = amount === 0n && !countsByok(caller.key, workspace) && await deps.ledger.notInDebt(caller.orgId);
    const draw = amount > 0n ? deps.leases?.reserve(caller.key, workspace, amount) : undefined;
    if (unheld || draw) {
      const hold: Hold = {
        generationId: trace.generationId, orgId: caller.orgId, workspaceId: caller.workspaceId, keyHash: caller.keyHash, amount, writeUnits: 0, attempts: 0, readUnits,
        ...(draw ? { draw } : { unheld: true as const }),
        // A registered end user without a limit: its record still counts on its meter.
        ...(spend?.extras.length ? { charges: spend.extras.map((extra) => ({ meter: extra.ref, held: false })) } : {}),
      };
      tracesOfHolds.set(hold, trace);
      return hold;
    }
  }
  // Only a refusal evaluates these: it says how many output tokens the caller can afford.
  // A speech request's price is its characters': no output tokens to lower, so the refusal names none.
  const hold = await deps.ledger.reserve(trace.generationId, caller.key, amount, request.params.speech ? undefined : {
    // Methods, not a getter: an accessor on an object literal gives each object a map of its own in the old
    // generation, which keeps the request reachable from it until a full collection.
    requested: () => reservedOutputTokens(request.params, endpoints),
    affordable: (remaining) => affordableOutputTokens(request.params, endpoints, remaining),
  }, spend);
  // release() is given the hold only: its request's attempts are found through it.
  tracesOfHolds.set(hold, trace);
  return hold;
}

/** The request failed before any usage: give the hold back (to its lease, or the ledger). The reply need not wait for it. */
export function release(hold: Hold, deps: EngineDeps): Promise<unknown> {
  deps.pages.withdraw(hold.generationId);
  if (hold.draw) deps.leases?.release(hold.draw);
  const trace = tracesOfHolds.get(hold);
  tracesOfHolds.delete(hold);
  return Promise.all([hold.draw || hold.unheld ? undefined : deps.ledger.release(hold), recordFailedAttempts(trace, deps)]);
}

/** Whether a limit of the key or a budget of its workspace counts BYOK spend. */
function countsByok(key: ApiKey, workspace: Workspace): boolean {
  return (key.include_byok_in_limit && key.limit !== null)
    || (workspace.include_byok_in_budgets && Object.values(workspace.budgets).some((budget) => budget !== undefined));
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
export function releaseOrCharge(options: SettlementOptions & { hold: Hold; signal: AbortSignal; streamed: boolean; invocation: Invocation | undefined }): Promise<unknown> {
  const attempted = options.trace.lastCandidate;
  if (!options.signal.aborted || attempted === undefined) return release(options.hold, options.deps);
  return complete({
    ...options,
    candidate: attempted,
    completion: {
      status: 'cancelled',
      // As a stream cut before its first event reads: no finish of its own.
      // A speech request is billed by its characters, which the provider took whole.
      result: { finish_reason: 'error', usage: options.request.params.speech ? speechUsage(options.request.params.speech) : estimateUsage(options.request.params, '') },
      firstTokenMs: null,
      streamed: options.streamed,
      usageEstimated: true,
    },
  }).persisted;
}

/**
 * Each hold's trace, from its reservation until it ends (complete() or release() deletes it). An entry is
 * not left for the garbage collector: young-generation collections keep a WeakMap's value alive while its
 * key is young, and promote it with everything it reaches (measured alone: a loop leaving entries of 30
 * objects promoted 3.2 MB per scavenge, one deleting them nothing).
 */
const tracesOfHolds = new WeakMap<Hold, RouteTrace>();
const shuttingDownMessage = shuttingDownError().message;

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
  // Once per request, whichever of complete() and release() ends it first.
  if (!trace || trace.failuresRecorded) return Promise.resolve();
  trace.failuresRecorded = true;
  // It runs after the ledger's settle or release has begun: a throw here would make its caller end the
  // hold a second time, so it is logged like a failed write.
  try {
    return addFailedAttempts(trace, deps);
  } catch (err) {
    deps.log.warn('endpoint failures not recorded', { generation_id: trace.generationId, error: String(err) });
    return Promise.resolve();
  }
}

function addFailedAttempts(trace: RouteTrace, deps: EngineDeps): Promise<void> {
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
      deps.log.warn('endpoint failures not recorded', { endpoint: `${model}@${provider}`, failures: count, generation_id: trace.generationId, error: String(err) });
    }
  })).then(() => undefined);
}

export interface CompleteOptions extends SettlementOptions {
  /** The endpoint that served (or was last sent) the request. */
  candidate: Candidate;
  completion: Completion;
  hold: Hold;
  /** The Lambda invocation, for the infrastructure cost; absent outside one. */
  invocation?: Invocation | undefined;
}

/**
 * Accounts for a finished (or failed mid-stream) generation: cost, health and stickiness at once; its
 * record goes into a page (pages.ts) that settles the hold at the actual cost when the aggregator applies
 * it, and `persisted` resolves when the page is stored (or its failure logged). The reply need not wait for it; the invocation must.
 */
export function complete(options: CompleteOptions): Accounted & { persisted: Promise<unknown> } {
  const { request, caller, trace, deps, candidate, completion, hold, invocation } = options;
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
  // The options themselves: no second object of the same fields per request.
  const record = recordOf(options, usage, cost, now);
  // What serving it cost on AWS, up to now (the reply has ended): it travels in the record. DynamoDB: the
  // reservation (measured), the record's share of its page (estimated from its size: the write reports its
  // capacity only after the record is in it) and the aggregator's delete of the hold (a small item in a
  // transaction: 2 units).
  // The record as its page stores it, made once: for its size here and for the page.
  const json = recordJson(record);
  if (invocation) {
    record.infra = infrastructureCost(invocation, {
      writeUnits: hold.writeUnits + pageWriteUnits(record, json) + (hold.draw || hold.unheld ? 0 : HOLD_DELETE_WRITE_UNITS),
      readUnits: (caller.readUnits ?? 0) + hold.readUnits,
      kmsRequests: trace.kmsRequests,
    }, deps.now());
  }
  let claim: Claim = hold.unheld ? { kind: 'none', amount: 0n } : { kind: 'hold', amount: hold.amount };
  let onStored: ((stored: boolean, duplicate?: boolean) => void) | undefined;
  if (hold.draw && deps.leases) {
    const settled = deps.leases.settle(hold.draw, isByok ? 0n : cost.total);
    claim = { kind: 'lease', leaseId: hold.draw.leaseId, amount: settled.spent };
    onStored = settled.stored;
  }
  // What observability would need, taken now in a closure of its own: the closures below share one context,
  // and any of them naming `request` or `completion` would keep both (the messages, the output) until the
  // page is written; nothing when no destination of the workspace can take it.
  const facts = mayObserve(deps, record) ? factsOf(record, request, completion.result, caller.key.name) : undefined;
  let adding: Promise<StoredEntry>;
  try {
    adding = deps.pages.add({ record, claim, json });
  } catch (err) {
    onStored?.(false);
    throw err;
  }
  const stored = adding.then((page): Promise<unknown> | undefined => {
    onStored?.(page.stored, page.duplicate === true);
    // A batch item run again: its first run's record is the one charged; an exact hold of this run is freed.
    if (page.duplicate && claim.kind === 'hold') return deps.ledger.release(hold);
    if (!page.stored) return undefined;
    // The metrics line CloudWatch turns into cost dashboards, once the record is kept.
    deps.metrics(record, deps.clock().getTime());
    // And the organization's observability destinations, if it has any for this workspace: never a reason
    // for `persisted` to fail (the record is stored and charged whatever happens to its deliveries).
    if (!deps.observability || !facts) return undefined;
    const failed = (err: unknown) => deps.log.error('generation not handed to observability', { generation_id: record.id, error: String(err) });
    try {
      return deps.observability.observe(record.org_id, record.workspace_id, facts)?.catch(failed);
    } catch (err) {
      failed(err);
      return undefined;
    }
  });
  const persisted = Promise.all([stored, recordFailedAttempts(trace, deps)]);
  // Settled: release() will not be called for it (should complete() throw before here, release() is, and
  // finds the trace).
  tracesOfHolds.delete(hold);
  return { usage, cost, isByok, persisted };
}

/** The generation record of a request that ends (or would end) as `completion` says, at `cost`. */
function recordOf({ request, caller, trace, deps, candidate, completion, hold }: Omit<CompleteOptions, 'invocation'>, usage: Usage, cost: CostBreakdown, now: number): GenerationRecord {
  return {
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
    is_byok: candidate.byok !== undefined,
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
    ...(hold.charges ? { spend_meters: hold.charges } : {}),
  };
}

/**
 * Journals what a request whose attempt has gone upstream is charged should the process die before it ends
 * (npm start's page journal: nothing is done without one): as a client gone at that point would be, its
 * prompt at an estimate and no output, from what it holds, recorded as the gateway's shutdown cut it. The
 * provider bills the prompt of a request it was sent; what it produces is not counted (a lower bound). Its
 * own record, when added, takes its place; a release, or the attempt failing at the provider, withdraws it.
 */
export function journalProvisional({ request, caller, trace, deps, candidate, hold, streamed }: SettlementOptions & { candidate: Candidate; hold: Hold; streamed: boolean }): void {
  const usage = request.params.speech ? speechUsage(request.params.speech) : estimateUsage(request.params, '');
  const cost = computeCost(usage, candidate.endpoint.pricing);
  const completion: Completion = {
    status: 'error',
    // The shutdown's error: a gateway that died says nothing about the endpoint (rollups.ts endedByShutdown).
    result: { finish_reason: 'error', usage },
    firstTokenMs: null,
    streamed,
    usageEstimated: true,
    error: { status: 503, message: shuttingDownMessage },
  };
  const record = recordOf({ request, caller, trace, deps, candidate, completion, hold }, usage, cost, deps.now());
  // The attempt in flight counts, its provider's answer unknown.
  record.attempts += 1;
  record.provider_responses.push({ provider: candidate.endpoint.provider, model: candidate.endpoint.model, status: null });
  const charged = candidate.byok !== undefined ? 0n : cost.total;
  const claim: Claim = hold.unheld ? { kind: 'none', amount: 0n }
    : hold.draw ? { kind: 'lease', leaseId: hold.draw.leaseId, amount: leaseSpend(hold.draw, charged) }
      : { kind: 'hold', amount: hold.amount };
  deps.pages.provisional({ record, claim });
}

/**
 * Whether the record's workspace may have an observability destination. A failure to tell is a yes: the
 * delivery after the record is stored reports it, and it is never a reason for the record not to be added.
 */
function mayObserve(deps: EngineDeps, record: GenerationRecord): boolean {
  if (!deps.observability) return false;
  try {
    return deps.observability.mayObserve(record.org_id, record.workspace_id);
  } catch {
    return true;
  }
}

/** The facts observability destinations receive of a generation, made when one takes it. */
function factsOf(record: GenerationRecord, request: InferenceRequest, result: Completion['result'], apiKeyName: string): () => GenerationFacts {
  return () => ({
    record,
    input: request.params.messages,
    output: { text: result.text ?? '', reasoning: result.reasoning, tool_calls: result.tool_calls },
    trace: request.trace,
    metadata: request.metadata,
    user: request.user,
    apiKeyName,
  });
}

/** A transactional delete of an item under 1 KB. */
const HOLD_DELETE_WRITE_UNITS = 2;

const recordSizes = new RecordSizes();

/** A record's share of its page's write: 1 unit per started KB of a page holding it alone (as on Lambda). */
function pageWriteUnits(record: GenerationRecord, json: string): number {
  return writeUnitsOf(recordSizes.storedBytes(record, ONE_UNIT_BYTES - PAGE_OVERHEAD_BYTES, json) + PAGE_OVERHEAD_BYTES);
}

const ONE_UNIT_BYTES = 1024;
/**
 * A page's own attributes beside its records (keys, type, written_at: about 60 bytes), and what the
 * record gains after this estimate (its infrastructure cost: about 200 bytes of JSON, fewer compressed).
 */
const PAGE_OVERHEAD_BYTES = 320;

