// Untrusted input becomes typed data only here: JSON parsing and zod validation, with 400s that name the field.
import type { z } from 'zod';
import { BadRequestError, PayloadTooLargeError } from './errors.js';

export function parseJsonBody(body: Buffer | undefined, maxBytes: number): unknown {
  if (body === undefined || body.length === 0) return undefined;
  if (body.length > maxBytes) throw new PayloadTooLargeError(maxBytes);
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new BadRequestError(`Malformed JSON body: ${(err as Error).message}`);
  }
}

export function validate<S extends z.ZodType>(schema: S, value: unknown, where: 'body' | 'query'): z.output<S> {
  if (where === 'body' && value === undefined) throw new BadRequestError('Request body is required and must be a JSON object');
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({
    path: [where, ...issue.path.map(String)].join('.'),
    message: describeIssue(issue),
  }));
  const first = issues[0]!;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  throw new BadRequestError(`Invalid ${first.path}: ${first.message}${more}`, { metadata: { issues } });
}

/** The most specific message: nested record-key and union issues say more than their generic wrappers. */
function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') return `unknown field(s) ${issue.keys.map((key) => `"${key}"`).join(', ')}`;
  if (issue.code === 'invalid_key' && issue.issues.length) return `invalid key: ${describeIssue(issue.issues[0]!)}`;
  if (issue.code === 'invalid_union' && issue.errors.length) {
    // The branch that got furthest is the one whose failure is not a plain type mismatch.
    const specific = issue.errors.flat().find((nested) => nested.code !== 'invalid_type' && nested.code !== 'invalid_union');
    if (specific) return describeIssue(specific);
  }
  return issue.message;
}
