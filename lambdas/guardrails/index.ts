// The guardrails feature as other folders see it: storage, the policy inference reads, and the routes.
export type { Guardrail, GuardrailPolicy, KeyAssignment, MemberAssignment } from './types.js';
export { guardrailsOf } from './types.js';
export { GuardrailRepository, policyOf } from './guardrail-repository.js';
export { guardrailRoutes, type GuardrailOperations } from './routes.js';
export { createGuardrailOperations, type GuardrailPorts } from './operations.js';
export { GuardrailSource } from './guardrail-source.js';
export { refusal } from './policy.js';
export { redact, scan, patternProblem, linearRegExp, BUILTIN_SLUGS, type BuiltinFilter, type ContentFilter, type Span } from './content-filters.js';
