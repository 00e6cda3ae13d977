// BYOK as the pipeline's first middleware: puts the organization's usable credentials into the candidates
// before anything is reserved (before the gateway's own endpoint, after it for fallback credentials, or
// instead of it when a credential requires that). Without a BYOK source it does nothing, synchronously.
import { UpstreamError } from '../../platform/errors.js';
import type { ByokSource } from '../../byok/byok-source.js';
import { withByokCandidates } from '../../byok/routing.js';
import type { GenerationCall, GenerationMiddleware, GenerationParams } from '../middleware.js';

async function withCredentials(params: GenerationParams, { caller, trace }: GenerationCall, byok: ByokSource): Promise<GenerationParams> {
  const credentials = await byok.credentialsFor(caller.orgId);
  if (credentials.length === 0) return params;
  const candidates = withByokCandidates(params.candidates, credentials, { workspaceId: caller.workspaceId, keyHash: caller.keyHash, user: params.request.user });
  if (candidates.length === 0) {
    // The error's service_metadata shows the plan as BYOK left it: no endpoint available.
    trace.plan.candidates = candidates;
    // A 502 as before: nothing the caller's request could change would make an endpoint available.
    throw new UpstreamError('No endpoint is available: the BYOK credentials that must be used do not apply to this request', { reason: 'unavailable' });
  }
  return { ...params, candidates };
}

export const byokMiddleware: GenerationMiddleware = {
  transformParams(call: GenerationCall) {
    return call.deps.byok ? withCredentials(call.params, call, call.deps.byok) : call.params;
  },
};

/** The middleware on its own, for a trace already planned: the plan's candidates are rewritten in place. */
export async function applyByok(call: Omit<GenerationCall, 'params' | 'type'> & { request: GenerationParams['request'] }): Promise<void> {
  const params = await byokMiddleware.transformParams!({ ...call, type: 'generate', params: { request: call.request, candidates: call.trace.plan.candidates } });
  call.trace.plan.candidates = params.candidates;
}
