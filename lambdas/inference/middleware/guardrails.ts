// Guardrails as the pipeline's first middleware, before anything is reserved: the endpoints a key's
// guardrails do not allow (allowed and ignored models and providers) are taken out of the candidates, and
// a request left with none is refused with a 403 naming the guardrail. Each guardrail that acted adds an
// entry to service_metadata.pipeline. A key without guardrails costs a map lookup, with no promise.
import { ForbiddenError } from '../../platform/errors.js';
import { refusal, type Guardrail, type GuardrailPolicy } from '../../guardrails/index.js';
import type { GenerationCall, GenerationMiddleware, GenerationParams } from '../middleware.js';

function enforce(call: GenerationCall, policy: GuardrailPolicy): GenerationParams {
  const guardrails = policy.byKey.get(call.caller.keyHash);
  if (!guardrails?.length) return call.params;
  const kept = [];
  const detected = new Map<Guardrail, string[]>();
  for (const candidate of call.params.candidates) {
    let refused = false;
    for (const guardrail of guardrails) {
      const reason = refusal(guardrail, candidate.endpoint);
      if (!reason) continue;
      refused = true;
      const list = detected.get(guardrail) ?? [];
      list.push(`${candidate.key}: ${reason}`);
      detected.set(guardrail, list);
    }
    if (!refused) kept.push(candidate);
  }
  if (detected.size === 0) return call.params;
  const blocked = kept.length === 0;
  for (const [guardrail, reasons] of detected) {
    call.trace.pipeline.push({
      type: 'guardrail',
      name: guardrail.name,
      guardrail_id: guardrail.id,
      guardrail_scope: 'key',
      summary: blocked ? `Blocked: ${reasons.join('; ')}` : `Removed ${reasons.length} endpoint(s): ${reasons.join('; ')}`,
      data: { action: blocked ? 'block' : 'filter', detected: reasons, engines: ['model-policy'], patterns: [] },
    });
  }
  if (blocked) {
    const names = [...detected.keys()].map((guardrail) => `"${guardrail.name}"`).join(', ');
    throw new ForbiddenError(`The request is not allowed by guardrail ${names}: ${[...detected.values()].flat().join('; ')}`, {
      metadata: { guardrail_ids: [...detected.keys()].map((guardrail) => guardrail.id), patterns: [] },
    });
  }
  return { ...call.params, candidates: kept };
}

export const guardrailMiddleware: GenerationMiddleware = {
  transformParams(call: GenerationCall) {
    const source = call.deps.guardrails;
    if (!source) return call.params;
    const policy = source.policyFor(call.caller.orgId);
    return policy instanceof Promise ? policy.then((loaded) => enforce(call, loaded)) : enforce(call, policy);
  },
};
