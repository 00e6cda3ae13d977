// Untrusted input becomes typed data only here: JSON parsing and zod validation, with 400s that name the field.
import { isUtf8 } from 'node:buffer';
import type { z } from 'zod';
import { BadRequestError, echo, PayloadTooLargeError } from './errors.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../json-depth.js';

export function parseJsonBody(body: Buffer | undefined, maxBytes: number): unknown {
  if (body === undefined || body.length === 0) return undefined;
  if (body.length > maxBytes) throw new PayloadTooLargeError(maxBytes);
  // A UTF-8 byte order mark before the JSON text, which RFC 8259 lets a parser ignore.
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) body = body.subarray(3);
  // Decoding would put U+FFFD in place of bytes that are not UTF-8: a secret, a name or a prompt would be
  // stored or sent other than it was given.
  if (!isUtf8(body)) throw new BadRequestError('Request body is not valid UTF-8');
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new BadRequestError(`Malformed JSON body: ${echo((err as Error).message, 200)}`);
  }
  if (nestsDeeperThan(body)) throw new BadRequestError(`JSON body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep`);
  const problem = unstorableJson(value, body, 'body');
  if (problem) throw new BadRequestError(problem);
  return value;
}

/**
 * What in a value parsed from `json` (its text or bytes) cannot be kept as given (see unstorable), said of
 * `path`; undefined when nothing. Rare in a body, so looked for in the text first (one search each) and
 * walked for only when present.
 */
export function unstorableJson(value: unknown, json: Pick<string | Buffer, 'includes'>, path: string): string | undefined {
  // Any \u escape may spell a character of the key (`"\u005f_proto__"` parses to "__proto__").
  const protoKey = json.includes('"__proto__"') || json.includes('\\u');
  const surrogate = json.includes('\\ud') || json.includes('\\uD');
  return protoKey || surrogate ? unstorable(value, path, protoKey, surrogate) : undefined;
}

const LONE_SURROGATE = /\p{Cs}/u;

/**
 * What in a parsed body cannot be kept as given: a key named `__proto__` (an object built from it loses
 * that key: it sets the prototype instead), or text with half of a UTF-16 surrogate pair (`"\ud800"`),
 * which no UTF-8 store or upstream can carry. Depth is bounded by the check before.
 */
function unstorable(value: unknown, path: string, protoKey: boolean, surrogate: boolean): string | undefined {
  if (typeof value === 'string') {
    return surrogate && LONE_SURROGATE.test(value) ? `${path} contains an unpaired UTF-16 surrogate (not valid Unicode text)` : undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) {
      const problem = unstorable(value[i], `${path}.${i}`, protoKey, surrogate);
      if (problem) return problem;
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (protoKey && key === '__proto__') return `${path} has a key named "__proto__", which is not accepted`;
    if (surrogate && LONE_SURROGATE.test(key)) return `${path} has a key with an unpaired UTF-16 surrogate (not valid Unicode text)`;
    const problem = unstorable((value as Record<string, unknown>)[key], `${path}.${echo(key)}`, protoKey, surrogate);
    if (problem) return problem;
  }
  return undefined;
}

/**
 * A JSON object without its top-level fields that are null (a copy, made only when there is one), or the
 * value as it was. The inference routes (and the routes and batch items that take their bodies) take null
 * as an option left out, as OpenAI's API does: clients that serialize every unset field (pydantic models,
 * SDK wrappers) send them.
 */
export function withoutNullFields(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const record = value as Record<string, unknown>;
  for (const name in record) {
    // Object.fromEntries defines each field as its own (a "__proto__" field stays a field).
    if (record[name] === null) return Object.fromEntries(Object.entries(record).filter(([, field]) => field !== null));
  }
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
  const issues = all.slice(0, MAX_ISSUES).map((issue) => {
    const found = specific(issue);
    return { path: [where, ...issue.path, ...found.path].map((segment) => echo(String(segment))).join('.'), message: found.message };
  });
  const first = issues[0] ?? { path: where, message: 'invalid' };
  const more = all.length > 1 ? ` (and ${all.length - 1} more)` : '';
  return { issues, message: `Invalid ${first.path}: ${first.message}${more}` };
}

const MAX_ISSUES = 10;
const MAX_KEYS_NAMED = 5;

/**
 * The most specific message, and the path below the issue's own it belongs to: nested record-key and union
 * issues say more than their generic wrappers ("Invalid input"). Of a union's branches, the one that got
 * furthest names the problem: the one whose first failure lies deepest, or, at the same depth, one not refused
 * for its `type` (another kind of item). When every branch failed on the value's type itself, the message
 * lists the types it may be.
 */
function specific(issue: z.core.$ZodIssue): { path: PropertyKey[]; message: string; wrongKind?: boolean } {
  if (issue.code === 'unrecognized_keys') {
    const named = issue.keys.slice(0, MAX_KEYS_NAMED).map((key) => `"${echo(key)}"`).join(', ');
    return { path: [], message: `unknown field(s) ${named}${issue.keys.length > MAX_KEYS_NAMED ? ` and ${issue.keys.length - MAX_KEYS_NAMED} more` : ''}` };
  }
  if (issue.code === 'invalid_key' && issue.issues.length) {
    const inner = specific(issue.issues[0]!);
    return { path: [], message: `invalid key: ${inner.message}` };
  }
  if (issue.code === 'invalid_union' && issue.errors.length) {
    let best: { path: PropertyKey[]; message: string; score: number; wrongKind: boolean } | undefined;
    const expected: string[] = [];
    let received: string | undefined;
    for (const branch of issue.errors) {
      const first = branch[0];
      if (!first) continue;
      const typeOnly = first.code === 'invalid_type' && first.path.length === 0;
      if (typeOnly) {
        if (!expected.includes(first.expected)) expected.push(first.expected);
        received ??= /received (\w+)/.exec(first.message)?.[1];
        continue;
      }
      const inner = specific(first);
      const path = [...first.path, ...inner.path];
      // A branch refused for its `type` (the item, or the part deep in it that failed, names another kind) is
      // the wrong kind, not a near miss: at the same depth, another branch's failure says more.
      const wrongKind = inner.wrongKind === true || (first.code === 'invalid_value' && first.path.at(-1) === 'type');
      const score = path.length * 2 + (wrongKind ? 0 : 1);
      if (!best || score > best.score) best = { path, message: inner.message, score, wrongKind };
    }
    if (best) return { path: best.path, message: best.message, wrongKind: best.wrongKind };
    // A union with a message of its own ("must be a finite number") says it best.
    if (expected.length && issue.message !== 'Invalid input') return { path: [], message: issue.message };
    if (expected.length) {
      const kinds = expected.join(' or ');
      return { path: [], message: received === 'undefined' ? `required (${kinds})` : `expected ${kinds}${received ? `, received ${received}` : ''}` };
    }
  }
  if (issue.code === 'invalid_type' && /received undefined$/.test(issue.message)) return { path: [], message: `required (${issue.expected})` };
  return { path: [], message: issue.message };
}
