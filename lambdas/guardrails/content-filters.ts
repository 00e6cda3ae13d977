// Content filters of a guardrail: built-in detectors (email, phone, SSN, card numbers with a Luhn check,
// IPv4 addresses, API-key-like secrets, prompt-injection phrases) and the caller's own regular expressions,
// each with an action (block, redact, flag). Everything here runs in time linear in the text:
// - the built-ins are scanners or patterns without nested or overlapping repetition (each match attempt
//   starts at a fixed prefix or has a bounded length), written so that no input makes them backtrack far;
// - a caller's pattern is accepted only if V8's linear-time engine can run it, and V8 is told to switch to
//   that engine when a pattern backtracks too much (v8 flags set once, below): the fast backtracking engine
//   serves the common case, and hostile input costs linear time, not exponential.
import v8 from 'node:v8';

v8.setFlagsFromString('--enable-experimental-regexp-engine');
v8.setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');

export type FilterAction = 'block' | 'redact' | 'flag';
export const BUILTIN_SLUGS = ['email', 'phone', 'ssn', 'credit-card', 'ip-address', 'secrets', 'regex-prompt-injection'] as const;
export type BuiltinSlug = (typeof BUILTIN_SLUGS)[number];

export interface ContentFilter {
  action: FilterAction;
  pattern: string;
  label?: string | null;
}

export interface BuiltinFilter {
  slug: BuiltinSlug;
  action: FilterAction;
  label?: string;
}

/** A match: where, and which filter (a built-in's slug, or a pattern's label or source). */
export interface Span {
  start: number;
  end: number;
  name: string;
  action: FilterAction;
  engine: 'builtin' | 'regex';
}

/** Why a caller's pattern cannot be taken, or undefined when it can (compiles and runs in linear time). */
export function patternProblem(pattern: string): string | undefined {
  try {
    new RegExp(pattern, 'g');
  } catch (err) {
    return `is not a valid regular expression: ${(err as Error).message.replace(/^Invalid regular expression: /, '')}`;
  }
  try {
    new RegExp(pattern, 'gl');
  } catch {
    return 'cannot be matched in linear time (nested or large counted repetition, lookaround, backreferences or flags are not allowed); rewrite it';
  }
  return undefined;
}

/** A caller's pattern (checked by patternProblem) compiled for V8's linear-time engine; null if it cannot be. */
export function linearRegExp(pattern: string, flags = ''): RegExp | null {
  try {
    return new RegExp(pattern, `${flags}l`);
  } catch {
    return null;
  }
}

const isDigit = (code: number) => code >= 48 && code <= 57;

/**
 * Card numbers: 13 to 19 digits in groups joined by single spaces or dashes, passing the Luhn check. A run
 * of groups is tried window by window (each window starts and ends on a group boundary), so a card followed
 * by more digits (its CVV, a second card) is still found. Luhn sums come from prefix sums over the run's
 * digits, so each window costs O(1) and each group starts at most 19 digits' worth of windows: linear.
 */
let evenSums = new Int32Array(64);
let oddSums = new Int32Array(64);
const groupStarts: number[] = [];
const groupEnds: number[] = [];
const groupOffsets: number[] = [];

function cards(text: string, out: (start: number, end: number) => void): void {
  let i = 0;
  while (i < text.length) {
    if (!isDigit(text.charCodeAt(i))) {
      i += 1;
      continue;
    }
    // The run: groups of digits separated by one space or dash, with prefix sums of its digits
    // (`evenSums` doubles the digits at even positions of the run, `oddSums` those at odd ones).
    groupStarts.length = 0;
    groupEnds.length = 0;
    groupOffsets.length = 0;
    let digits = 0;
    let start = i;
    for (;;) {
      if (i < text.length && isDigit(text.charCodeAt(i))) {
        if (digits + 1 >= evenSums.length) {
          const grown = (array: Int32Array) => { const next = new Int32Array(array.length * 2); next.set(array); return next; };
          evenSums = grown(evenSums);
          oddSums = grown(oddSums);
        }
        const digit = text.charCodeAt(i) - 48;
        const doubled = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
        evenSums[digits + 1] = evenSums[digits]! + (digits % 2 === 0 ? doubled : digit);
        oddSums[digits + 1] = oddSums[digits]! + (digits % 2 === 0 ? digit : doubled);
        digits += 1;
        i += 1;
        continue;
      }
      groupStarts.push(start);
      groupEnds.push(i);
      groupOffsets.push(digits);
      const code = i < text.length ? text.charCodeAt(i) : -1;
      if ((code === 32 || code === 45) && i + 1 < text.length && isDigit(text.charCodeAt(i + 1))) {
        i += 1;
        start = i;
        continue;
      }
      break;
    }
    // groupOffsets[g] is the digit count after group g; a group's first digit is groupOffsets[g - 1] (or 0).
    let first = 0;
    while (first < groupStarts.length) {
      const from = first === 0 ? 0 : groupOffsets[first - 1]!;
      let found = -1;
      for (let last = first; last < groupStarts.length; last += 1) {
        const to = groupOffsets[last]!;
        const count = to - from;
        if (count > 19) break;
        // The rightmost digit is never doubled: the doubled positions have the parity of `to`.
        if (count >= 13 && (to % 2 === 0 ? evenSums[to]! - evenSums[from]! : oddSums[to]! - oddSums[from]!) % 10 === 0) found = last;
      }
      if (found >= 0) {
        out(groupStarts[first]!, groupEnds[found]!);
        first = found + 1;
      } else first += 1;
    }
  }
}

const LOCAL = /[A-Za-z0-9._%+-]/;
const DOMAIN = /[A-Za-z0-9.-]/;

/** Email addresses: found from each "@", grown left over the local part (at most 64) and right over the domain (at most 253). */
function emails(text: string, out: (start: number, end: number) => void): void {
  let at = text.indexOf('@');
  let from = 0;
  while (at !== -1) {
    let start = at;
    while (start > from && at - start < 64 && LOCAL.test(text[start - 1]!)) start -= 1;
    let end = at + 1;
    while (end < text.length && end - at <= 253 && DOMAIN.test(text[end]!)) end += 1;
    while (end > at + 1 && (text[end - 1] === '.' || text[end - 1] === '-')) end -= 1;
    const domain = text.slice(at + 1, end);
    const dot = domain.lastIndexOf('.');
    if (start < at && dot > 0 && /^[A-Za-z]{2,24}$/.test(domain.slice(dot + 1))) {
      out(start, end);
      from = end;
    }
    at = text.indexOf('@', at + 1);
  }
}

/** The built-ins that are patterns: each anchored on fixed text or of bounded length, so none backtracks far. */
const PATTERNS: Record<Exclude<BuiltinSlug, 'email' | 'credit-card'>, RegExp> = {
  // Separated groups only: a bare run of ten digits is more often a timestamp or an id than a phone number.
  'phone': /(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{3}\)[ .-]?|\d{3}[ .-])\d{3}[ .-]\d{4}(?!\d)/g,
  'ssn': /(?<!\d)(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?!\d)/g,
  'ip-address': /(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?![\d.])/g,
  'secrets': /(?:sk-(?:ant-|proj-|gw-v1-)?[A-Za-z0-9_-]{20,200}|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|ghp_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{22,255}|xox[abprs]-[A-Za-z0-9-]{10,200}|AIza[0-9A-Za-z_-]{35}|-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----)/g,
  'regex-prompt-injection': /\b(?:ignore|disregard|forget)\s{1,10}(?:all\s{1,10}|any\s{1,10})?(?:the\s{1,10}|your\s{1,10})?(?:previous|prior|above|earlier|system)\s{1,10}(?:instructions|prompts?|rules|directions)\b|\b(?:reveal|print|show|repeat)\s{1,10}(?:me\s{1,10})?(?:your|the)\s{1,10}(?:system\s{1,10})?(?:prompt|instructions)\b|\byou\s{1,10}are\s{1,10}now\s{1,10}(?:dan|in\s{1,10}developer\s{1,10}mode|jailbroken|unrestricted)\b/gi,
};

function scanBuiltin(slug: BuiltinSlug, text: string, out: (start: number, end: number) => void): void {
  if (slug === 'email') return emails(text, out);
  if (slug === 'credit-card') return cards(text, out);
  const pattern = PATTERNS[slug];
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    out(match.index, match.index + match[0].length);
    if (match[0].length === 0) pattern.lastIndex += 1;
  }
}

const compiledPatterns = new Map<string, RegExp>();

function compiled(pattern: string): RegExp {
  let regex = compiledPatterns.get(pattern);
  if (!regex) {
    regex = new RegExp(pattern, 'g');
    if (compiledPatterns.size > 10_000) compiledPatterns.clear();
    compiledPatterns.set(pattern, regex);
  }
  return regex;
}

/** Every match of the filters in the text. */
export function scan(text: string, builtins: readonly BuiltinFilter[], filters: readonly ContentFilter[]): Span[] {
  const spans: Span[] = [];
  for (const filter of builtins) {
    const name = filter.slug;
    scanBuiltin(filter.slug, text, (start, end) => spans.push({ start, end, name, action: filter.action, engine: 'builtin' }));
  }
  for (const filter of filters) {
    const regex = compiled(filter.pattern);
    const name = filter.label || filter.pattern;
    regex.lastIndex = 0;
    for (let match = regex.exec(text); match; match = regex.exec(text)) {
      if (match[0].length === 0) {
        regex.lastIndex += 1;
        continue;
      }
      spans.push({ start: match.index, end: match.index + match[0].length, name, action: filter.action, engine: 'regex' });
    }
  }
  return spans;
}

/** The text with the redacting spans replaced by `[REDACTED:<NAME>]` (overlapping spans merged). */
export function redact(text: string, spans: readonly Span[]): string {
  const cuts = spans.filter((span) => span.action === 'redact').sort((a, b) => a.start - b.start || b.end - a.end);
  if (cuts.length === 0) return text;
  let result = '';
  let at = 0;
  for (const cut of cuts) {
    if (cut.end <= at) continue;
    const start = Math.max(cut.start, at);
    result += text.slice(at, start) + `[REDACTED:${cut.name.toUpperCase()}]`;
    at = cut.end;
  }
  return result + text.slice(at);
}
