// What a guardrail allows: an endpoint's model and provider against its allowed and ignored lists. Read by
// inference (the guardrail middleware) and by GET /models (a filtered catalog shows what a key may use).
import type { CatalogEndpoint } from '../catalog/index.js';
import type { Guardrail } from './types.js';

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
