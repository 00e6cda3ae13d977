// Untrusted input becomes typed data only here: JSON parsing and zod validation, with 400s that name the field.
import type { z } from 'zod';
import { BadRequestError, echo, PayloadTooLargeError } from './errors.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../json-depth.js';

export function parseJsonBody(body: Buffer | undefined, maxBytes: number): unknown {
  if (body === undefined || body.length === 0) return undefined;
  if (body.length > maxBytes) throw new PayloadTooLargeError(maxBytes);
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new BadRequestError(`Malformed JSON body: ${echo((err as Error).message, 200)}`);
  }
  if (nestsDeeperThan(body)) throw new BadRequestError(`JSON body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep`);
  return value;
}

export function validate<S extends z.ZodType>(schema: S, value: unknown, where: 'body' | 'query'): z.output<S> {
  if (where === 'body' && value === undefined) throw new BadRequestError('Request body is required and must be a JSON object');
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  // Paths hold field names and record keys of the input: each segment is echoed shortened, and at most
  // MAX_ISSUES issues are listed, so the 400 stays small however large the input.
  const { issues, message } = describeIssues(result.error.issues, where);
  const all = result.error.issues;
  throw new BadRequestError(message, { metadata: { issues, ...(all.length > MAX_ISSUES ? { issue_count: all.length } : {}) } });
}

/**
 * A failed parse in words: the first issues (path under `where`, message) and one sentence naming the first,
 * e.g. `Invalid body.messages.0.role: ...`. Also used where a failure is reported rather than thrown (a
 * batch item's error).
 */
export function describeIssues(all: readonly z.core.$ZodIssue[], where: string): { issues: Array<{ path: string; message: string }>; message: string } {
  const issues = all.slice(0, MAX_ISSUES).map((issue) => ({
    path: [where, ...issue.path.map((segment) => echo(String(segment)))].join('.'),
    message: describeIssue(issue),
  }));
  const first = issues[0] ?? { path: where, message: 'invalid' };
  const more = all.length > 1 ? ` (and ${all.length - 1} more)` : '';
  return { issues, message: `Invalid ${first.path}: ${first.message}${more}` };
}

const MAX_ISSUES = 10;
const MAX_KEYS_NAMED = 5;

/** The most specific message: nested record-key and union issues say more than their generic wrappers. */
function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') {
    const named = issue.keys.slice(0, MAX_KEYS_NAMED).map((key) => `"${echo(key)}"`).join(', ');
    return `unknown field(s) ${named}${issue.keys.length > MAX_KEYS_NAMED ? ` and ${issue.keys.length - MAX_KEYS_NAMED} more` : ''}`;
  }
  if (issue.code === 'invalid_key' && issue.issues.length) return `invalid key: ${describeIssue(issue.issues[0]!)}`;
  if (issue.code === 'invalid_union' && issue.errors.length) {
    // The branch that got furthest is the one whose failure is not a plain type mismatch.
    const specific = issue.errors.flat().find((nested) => nested.code !== 'invalid_type' && nested.code !== 'invalid_union');
    if (specific) return describeIssue(specific);
  }
  return issue.message;
}
