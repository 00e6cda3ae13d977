// What a guardrail allows: an endpoint's model and provider against its allowed and ignored lists. Read by
// inference (the guardrail middleware) and by GET /models (a filtered catalog shows what a key may use).
import type { CatalogEndpoint } from '../catalog/index.js';
import type { Guardrail } from './types.js';

/**
 * Whether `value` matches `pattern`, where `*` is any run of characters, without case: the greedy
 * two-pointer glob match, which backtracks only to the last star (at most pattern × value steps, both a few
 * hundred characters at most), never exponentially as a RegExp of many `.*` can.
 */
export function globMatch(pattern: string, value: string): boolean {
  const p = pattern.toLowerCase();
  const v = value.toLowerCase();
  let pi = 0;
  let vi = 0;
  let star = -1;
  let mark = 0;
  while (vi < v.length) {
    if (pi < p.length && p[pi] !== '*' && p[pi] === v[vi]) {
      pi += 1;
      vi += 1;
    } else if (pi < p.length && p[pi] === '*') {
      star = pi;
      mark = vi;
      pi += 1;
    } else if (star !== -1) {
      pi = star + 1;
      mark += 1;
      vi = mark;
    } else return false;
  }
  while (pi < p.length && p[pi] === '*') pi += 1;
  return pi === p.length;
}

const matches = (list: readonly string[], value: string) => list.some((pattern) => globMatch(pattern, value));

/** Why the guardrail does not allow this endpoint, or undefined when it does. */
export function refusal(guardrail: Guardrail, endpoint: CatalogEndpoint): string | undefined {
  const provider = endpoint.provider.toLowerCase();
  if (guardrail.allowed_models?.length && !matches(guardrail.allowed_models, endpoint.model)) return `model ${endpoint.model} is not among its allowed models`;
  if (guardrail.ignored_models?.length && matches(guardrail.ignored_models, endpoint.model)) return `model ${endpoint.model} is among its ignored models`;
  if (guardrail.allowed_providers?.length && !guardrail.allowed_providers.includes(provider)) return `provider ${endpoint.provider} is not among its allowed providers`;
  if (guardrail.ignored_providers?.includes(provider)) return `provider ${endpoint.provider} is among its ignored providers`;
  return undefined;
}
