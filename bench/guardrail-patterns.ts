// The guardrail both guardrail benchmarks measure: 20 patterns (the 7 built-in detectors and 13 of the
// caller's, one of them `(a+)+b`, which V8 hands to its linear engine), and the 4 KB prompt they scan (prose
// with an email and a phone number, so that redaction happens).
import type { BuiltinFilter, ContentFilter } from '../lambdas/guardrails/index.js';

export const BENCH_BUILTINS: BuiltinFilter[] = (['email', 'phone', 'ssn', 'credit-card', 'ip-address', 'secrets', 'regex-prompt-injection'] as const)
  .map((slug) => ({ slug, action: slug === 'email' || slug === 'phone' ? 'redact' : slug === 'regex-prompt-injection' ? 'flag' : 'block' }));

export const BENCH_FILTERS: ContentFilter[] = ['project-[0-9]{2,6}', 'confidential', 'internal only', 'do not distribute', 'codename [A-Z][a-z]+', 'acct-[0-9a-f]{8}', 'ticket #[0-9]+',
  'salary', 'merger', 'layoffs?', 'password\\s*[:=]', 'BEGIN CERTIFICATE', '(a+)+b'].map((pattern) => ({ action: 'flag' as const, pattern }));

const prose = 'The quarterly report covers revenue, churn and hiring. Reach the team at ops.lead@example.com or +1 (555) 010-0199 for details. ';
export const BENCH_PROMPT_4K = prose.repeat(Math.ceil(4096 / prose.length)).slice(0, 4096);
