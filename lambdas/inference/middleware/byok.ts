// BYOK as the pipeline's first middleware: puts the organization's usable credentials into the candidates
// before anything is reserved (before the gateway's own endpoint, after it for fallback credentials, or
// instead of it when a credential requires that). Without a BYOK source, or with the credentials cached, it
// answers synchronously.
import { UpstreamError } from '../../platform/errors.js';
import { endpointCredentials, type ByokContext, type ByokCredential } from '../../byok/index.js';
import type { Candidate } from '../routing.js';
import type { GenerationCall, GenerationMiddleware, GenerationParams } from '../middleware.js';

const byokCandidate = (candidate: Candidate, credential: ByokCredential): Candidate => Object.assign({}, candidate, {
  key: `${candidate.key}#byok:${credential.id}`,
  byok: credential,
});

/**
 * The candidates with the caller's BYOK credentials put in: each endpoint's applying credentials before it,
 * the gateway's own endpoint when the credentials leave it usable, fallback credentials after it.
 */
export function withByokCandidates(candidates: Candidate[], credentials: ByokCredential[], context: ByokContext): Candidate[] {
  if (credentials.length === 0) return candidates;
  const out: Candidate[] = [];
  for (const candidate of candidates) {
    // A private endpoint is called with its own key: a customer credential never applies to it.
    if (candidate.privateEndpoint) {
      out.push(candidate);
      continue;
    }
    const { first, shared, last } = endpointCredentials(candidate.endpoint, credentials, context);
    out.push(...first.map((credential) => byokCandidate(candidate, credential)));
    if (shared) out.push(candidate);
    out.push(...last.map((credential) => byokCandidate(candidate, credential)));
  }
  return out;
}

function withCredentials(params: GenerationParams, { caller, trace }: GenerationCall, credentials: ByokCredential[]): GenerationParams {
  if (credentials.length === 0) return params;
  const candidates = withByokCandidates(params.candidates, credentials, { workspaceId: caller.workspaceId, keyHash: caller.keyHash, user: params.request.user });
  if (candidates.length === 0) {
    // The error's service_metadata shows the plan as BYOK left it: no endpoint available.
    trace.plan.candidates = candidates;
    // A 502 as before: nothing the caller's request could change would make an endpoint available.
    throw new UpstreamError('No endpoint is available: the BYOK credentials that must be used do not apply to this request', { reason: 'unavailable' });
  }
  return { request: params.request, candidates };
}

export const byokMiddleware: GenerationMiddleware = {
  // Synchronous when the organization's credentials are cached: the request's planning takes no promise then.
  transformParams(call: GenerationCall) {
    const byok = call.deps.byok;
    if (!byok) return call.params;
    const { params } = call;
    const credentials = byok.credentialsFor(call.caller.orgId);
    return Array.isArray(credentials) ? withCredentials(params, call, credentials) : credentials.then((list) => withCredentials(params, call, list));
  },
};

/** The middleware on its own, for a trace already planned: the plan's candidates are rewritten in place. */
export async function applyByok(call: Omit<GenerationCall, 'params' | 'type'> & { request: GenerationParams['request'] }): Promise<void> {
  const params = await byokMiddleware.transformParams!({ ...call, type: 'generate', params: { request: call.request, candidates: call.trace.plan.candidates } });
  call.trace.plan.candidates = params.candidates;
}
