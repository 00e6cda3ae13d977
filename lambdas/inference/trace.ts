// What routing one request went through: its generation id, the routing plan, every attempt and the
// pipeline entries service_metadata shows. Started before anything is reserved; read by settlement.
import { endUserHash } from '../end-users/index.js';
import type { Caller, EngineDeps } from './engine.js';
import type { InferenceRequest } from './inference-request.js';
import { planRoute, type Candidate, type RoutingPlan } from './routing.js';

export interface PipelineEntry {
  type: string;
  name: string;
  summary: string;
  /** Guardrail entries: which guardrail acted, and whose it is (key, member, workspace). */
  guardrail_id?: string;
  guardrail_scope?: string;
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
  /** What was sent to the provider last (a streamed chat completion's debug.echo_upstream_body only). */
  upstreamBody?: unknown;
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
  /** Its failed attempts are counted against their endpoints already (settlement does it once). */
  failuresRecorded?: boolean;
}

/** End-user ids are folded into a per-organization hash before they go upstream or into storage. */
export function hashedUser(orgId: string, value: string | undefined): string | undefined {
  return value === undefined ? undefined : endUserHash(orgId, value);
}

/** Plans the route (throws the routing errors: unknown model, nothing fits) and opens the request's trace. */
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
  return { generationId: deps.generationIds.next(deps.clock().getTime()), requested: request.models.join(','), plan, attempts: [], startedAt: now, pipeline, kmsRequests: 0 };
}
