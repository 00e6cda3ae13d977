// The routing metadata of a reply or error envelope (`service_metadata`, with `X-Service-Metadata: enabled`):
// which endpoints were considered and tried, and what the pipeline did.
import type { EngineDeps } from './engine.js';
import type { Candidate } from './routing.js';
import type { RouteTrace } from './trace.js';

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
