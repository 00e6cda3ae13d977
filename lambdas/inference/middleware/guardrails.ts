// Guardrails as the pipeline's first middleware, before anything is reserved: the endpoints a key's
// guardrails do not allow (allowed and ignored models and providers) are taken out of the candidates, and
// a request left with none is refused with a 403 naming the guardrail. Each guardrail that acted adds an
// entry to service_metadata.pipeline. A key without guardrails costs a map lookup, with no promise.
import { ForbiddenError } from '../../platform/errors.js';
import type { Guardrail, GuardrailPolicy } from '../../guardrails/index.js';
import type { CatalogEndpoint } from '../../catalog/index.js';
import type { GenerationCall, GenerationMiddleware, GenerationParams } from '../middleware.js';

const compiled = new WeakMap<readonly string[], RegExp[]>();

/** `openai/*` style patterns (a `*` is any run of characters), matched whole and without case. */
function patternsOf(list: readonly string[]): RegExp[] {
  let regexes = compiled.get(list);
  if (!regexes) {
    regexes = list.map((pattern) => new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('.*')}$`, 'i'));
    compiled.set(list, regexes);
  }
  return regexes;
}

const matches = (list: readonly string[], value: string) => patternsOf(list).some((pattern) => pattern.test(value));

/** Why the guardrail does not allow this endpoint, or undefined when it does. */
export function refusal(guardrail: Guardrail, endpoint: CatalogEndpoint): string | undefined {
  const provider = endpoint.provider.toLowerCase();
  if (guardrail.allowed_models?.length && !matches(guardrail.allowed_models, endpoint.model)) return `model ${endpoint.model} is not among its allowed models`;
  if (guardrail.ignored_models?.length && matches(guardrail.ignored_models, endpoint.model)) return `model ${endpoint.model} is among its ignored models`;
  if (guardrail.allowed_providers?.length && !guardrail.allowed_providers.includes(provider)) return `provider ${endpoint.provider} is not among its allowed providers`;
  if (guardrail.ignored_providers?.includes(provider)) return `provider ${endpoint.provider} is among its ignored providers`;
  return undefined;
}

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
