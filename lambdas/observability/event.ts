// What a destination receives about one generation, and which destinations receive it: the facts of a
// finished generation (its record, what was asked and what came back), each destination's key list,
// filter rules and sampling, then the facts as that destination may see them (privacy mode, cost,
// identity, request context).
import { createHash } from 'node:crypto';
import type { GenerationRecord } from '../billing/generation-record.js';
import { linearRegExp } from '../guardrails/index.js';
import { nanosToUsd } from '../platform/money.js';
import type { Message, ToolCall } from '../providers/types.js';
import type { Destination, FilterRule, FilterRules } from './types.js';

/** The trace keys with a meaning in the trace structure; any other key of `trace` is custom metadata. */
export const TRACE_KEYS = ['trace_id', 'trace_name', 'span_name', 'generation_name', 'parent_span_id'] as const;

export interface GenerationFacts {
  record: GenerationRecord;
  /** The messages as they went upstream (after guardrail redaction). */
  input: Message[];
  output: { text: string; reasoning?: string | undefined; tool_calls?: ToolCall[] | undefined };
  /** The request's `trace` object. */
  trace: Record<string, unknown> | undefined;
  /** The request's `metadata` pairs. */
  metadata: Record<string, string> | undefined;
  /** The raw end-user id (`user`), which only observability destinations receive. */
  user: string | undefined;
  apiKeyName: string;
}

export interface DeliveredGeneration {
  generation_id: string;
  created_at: string;
  ended_at: string;
  workspace_id: string;
  model: string;
  provider: string;
  upstream_model: string;
  api: GenerationRecord['api'];
  streamed: boolean;
  status: GenerationRecord['status'];
  finish_reason: string | null;
  native_finish_reason: string | null;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number; cached_tokens: number; cache_write_tokens: number; reasoning_tokens: number; estimated: boolean };
  latency_ms: number;
  first_token_ms: number | null;
  generation_time_ms: number;
  attempts: number;
  error: { status: number; message: string } | null;
  trace: Partial<Record<(typeof TRACE_KEYS)[number], string>>;
  /** The request's other trace keys, passed through. */
  trace_metadata: Record<string, unknown>;
  /** broadcast_generation_cost. */
  cost?: { total: number; prompt: number; completion: number; cache_read: number; cache_write: number; reasoning: number; request: number; currency: 'USD'; is_byok: boolean };
  /** broadcast_generation_identity. */
  user_id?: string | null;
  session_id?: string | null;
  /** broadcast_generation_request_context. */
  request?: { api_key_hash: string; api_key_name: string; metadata: Record<string, string> };
  /** Left out in privacy mode. */
  input?: Message[];
  output?: GenerationFacts['output'];
  /** Texts were cut to fit a queue message. */
  truncated?: boolean;
}

/** One delivery: a generation for one destination (the body of its queue message). */
export interface DeliveryMessage {
  v: 1;
  destination_id: string;
  org_id: string;
  generation: DeliveredGeneration;
}

const SAMPLE_SPACE = 2 ** 32;

/** Whether the generation is in the destination's sample: the same answer on every process and retry. */
export function sampled(destination: Pick<Destination, 'id' | 'sampling_rate'>, generationId: string): boolean {
  if (destination.sampling_rate >= 1) return true;
  const digest = createHash('sha256').update(`${destination.id}:${generationId}`).digest();
  return digest.readUInt32BE(0) / SAMPLE_SPACE < destination.sampling_rate;
}

function textOf(messages: Message[]): string {
  let text = '';
  for (const message of messages) {
    for (const part of message.content) if (part.type === 'text') text += `${part.text}\n`;
  }
  return text;
}

function factValue(facts: GenerationFacts, field: FilterRule['field']): string | number | undefined | null {
  const { record } = facts;
  switch (field) {
    case 'model': return record.model;
    case 'provider': return record.provider;
    case 'session_id': return record.session_id;
    case 'user_id': return facts.user ?? null;
    case 'api_key_name': return facts.apiKeyName;
    case 'finish_reason': return record.finish_reason;
    case 'input': return textOf(facts.input);
    case 'output': return facts.output.text;
    case 'total_cost': return nanosToUsd(record.cost.total);
    case 'total_tokens': return record.usage.input_tokens + record.usage.output_tokens;
    case 'prompt_tokens': return record.usage.input_tokens;
    case 'completion_tokens': return record.usage.output_tokens;
  }
}

const compiled = new Map<string, RegExp | null>();

function regexOf(pattern: string): RegExp | null {
  let regex = compiled.get(pattern);
  if (regex === undefined) {
    // The linear-time engine (the schema checked the pattern compiles for it): no text makes it backtrack.
    regex = linearRegExp(pattern);
    if (compiled.size > 1000) compiled.clear();
    compiled.set(pattern, regex);
  }
  return regex;
}

function ruleHolds(facts: GenerationFacts, rule: FilterRule): boolean {
  const value = factValue(facts, rule.field);
  const present = value !== undefined && value !== null && value !== '';
  if (rule.operator === 'exists') return present;
  if (rule.operator === 'not_exists') return !present;
  if (!present) return rule.operator === 'not_equals' || rule.operator === 'not_contains';
  const expected = rule.value;
  if (rule.operator === 'gt' || rule.operator === 'lt' || rule.operator === 'gte' || rule.operator === 'lte') {
    const actual = Number(value);
    const bound = Number(expected);
    if (!Number.isFinite(actual) || !Number.isFinite(bound)) return false;
    return rule.operator === 'gt' ? actual > bound : rule.operator === 'lt' ? actual < bound : rule.operator === 'gte' ? actual >= bound : actual <= bound;
  }
  const text = String(value);
  const wanted = String(expected ?? '');
  switch (rule.operator) {
    case 'equals': return text === wanted;
    case 'not_equals': return text !== wanted;
    case 'contains': return text.includes(wanted);
    case 'not_contains': return !text.includes(wanted);
    case 'starts_with': return text.startsWith(wanted);
    case 'ends_with': return text.endsWith(wanted);
    case 'regex': return regexOf(wanted)?.test(text) ?? false;
  }
}

/** Filter rules: a generation passes when any group holds (a group's rules joined by its logic). */
export function passesFilter(rules: FilterRules | null, facts: GenerationFacts): boolean {
  if (!rules || !rules.enabled || rules.groups.length === 0) return true;
  return rules.groups.some((group) => (group.logic === 'or'
    ? group.rules.some((rule) => ruleHolds(facts, rule))
    : group.rules.every((rule) => ruleHolds(facts, rule))));
}

/** Whether the destination takes this generation at all. */
export function wants(destination: Destination, facts: GenerationFacts): boolean {
  const { record } = facts;
  if (!destination.enabled || destination.workspace_id !== record.workspace_id) return false;
  if (destination.api_key_hashes && !destination.api_key_hashes.includes(record.key_hash)) return false;
  return sampled(destination, record.id) && passesFilter(destination.filter_rules, facts);
}

function splitTrace(trace: Record<string, unknown> | undefined): Pick<DeliveredGeneration, 'trace' | 'trace_metadata'> {
  const known: DeliveredGeneration['trace'] = {};
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(trace ?? {})) {
    if ((TRACE_KEYS as readonly string[]).includes(key) && (typeof value === 'string' || typeof value === 'number')) known[key as (typeof TRACE_KEYS)[number]] = String(value);
    else rest[key] = value;
  }
  return { trace: known, trace_metadata: rest };
}

/** The generation as this destination may see it. */
export function delivered(destination: Destination, facts: GenerationFacts): DeliveredGeneration {
  const { record } = facts;
  const ended = new Date(Date.parse(record.created_at) + record.latency_ms).toISOString();
  const usd = (nanos: bigint) => nanosToUsd(nanos);
  return {
    generation_id: record.id,
    created_at: record.created_at,
    ended_at: ended,
    workspace_id: record.workspace_id,
    model: record.model,
    provider: record.provider,
    upstream_model: record.upstream_model,
    api: record.api,
    streamed: record.streamed,
    status: record.status,
    finish_reason: record.finish_reason,
    native_finish_reason: record.native_finish_reason,
    usage: {
      prompt_tokens: record.usage.input_tokens,
      completion_tokens: record.usage.output_tokens,
      total_tokens: record.usage.input_tokens + record.usage.output_tokens,
      cached_tokens: record.usage.cached_input_tokens,
      cache_write_tokens: record.usage.cache_write_tokens,
      reasoning_tokens: record.usage.reasoning_tokens,
      estimated: record.usage_estimated,
    },
    latency_ms: record.latency_ms,
    first_token_ms: record.first_token_ms,
    generation_time_ms: record.generation_time_ms,
    attempts: record.attempts,
    error: record.error,
    ...splitTrace(facts.trace),
    ...(destination.broadcast_generation_cost ? {
      cost: {
        total: usd(record.cost.total), prompt: usd(record.cost.prompt), completion: usd(record.cost.completion), cache_read: usd(record.cost.cache_read),
        cache_write: usd(record.cost.cache_write), reasoning: usd(record.cost.reasoning), request: usd(record.cost.request), currency: 'USD' as const, is_byok: record.is_byok,
      },
    } : {}),
    ...(destination.broadcast_generation_identity ? { user_id: facts.user ?? null, session_id: record.session_id } : {}),
    ...(destination.broadcast_generation_request_context ? { request: { api_key_hash: record.key_hash, api_key_name: facts.apiKeyName, metadata: facts.metadata ?? {} } } : {}),
    ...(destination.privacy_mode ? {} : { input: facts.input, output: facts.output }),
  };
}

/** Most a queue message may carry (SQS takes 256 KiB; room is left for the envelope). */
export const MAX_MESSAGE_BYTES = 240 * 1024;
const CUT_TEXT_CHARS = 8 * 1024;
const CUT_FIELD_CHARS = 512;

const cut = (text: string, chars = CUT_TEXT_CHARS) => (text.length > chars ? `${text.slice(0, chars)}…[truncated]` : text);

/**
 * JSON with every character outside printable ASCII escaped (\uXXXX): SQS refuses some characters in a
 * message (U+FFFE, U+FFFF, and, on the local stand-in, anything beyond U+FFFF), and escaped JSON parses back
 * to the same text.
 */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * The message body, made to fit a queue message: first long texts are cut (and non-text parts dropped),
 * then the texts go and the trace's and request's metadata are cut, the facts staying.
 */
export function messageBody(message: DeliveryMessage): string {
  const body = asciiJson(message);
  if (body.length <= MAX_MESSAGE_BYTES) return body;
  const generation = message.generation;
  const input = generation.input?.map((entry) => ({
    ...entry,
    content: entry.content.map((part) => (part.type === 'text' ? { ...part, text: cut(part.text) } : { type: 'text' as const, text: `[${part.type}]` })),
  })) as Message[] | undefined;
  const output = generation.output ? { ...generation.output, text: cut(generation.output.text), ...(generation.output.reasoning ? { reasoning: cut(generation.output.reasoning) } : {}) } : undefined;
  const smaller = asciiJson({ ...message, generation: { ...generation, ...(input ? { input } : {}), ...(output ? { output } : {}), truncated: true } });
  if (smaller.length <= MAX_MESSAGE_BYTES) return smaller;
  const { input: _input, output: _output, trace_metadata: traceMetadata, ...facts } = generation;
  const short = (record: Record<string, unknown>) => Object.fromEntries(Object.entries(record).slice(0, 32).map(([key, value]) => [cut(key, 64), typeof value === 'string' ? cut(value, CUT_FIELD_CHARS) : cut(JSON.stringify(value) ?? '', CUT_FIELD_CHARS)]));
  return asciiJson({
    ...message,
    generation: {
      ...facts,
      trace: short(facts.trace),
      trace_metadata: short(traceMetadata),
      ...(facts.request ? { request: { ...facts.request, api_key_name: cut(facts.request.api_key_name, CUT_FIELD_CHARS), metadata: short(facts.request.metadata) } } : {}),
      ...(facts.user_id ? { user_id: cut(facts.user_id, CUT_FIELD_CHARS) } : {}),
      truncated: true,
    },
  });
}
