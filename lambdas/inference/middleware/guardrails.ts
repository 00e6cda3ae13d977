// Guardrails as the pipeline's first middleware, before anything is reserved:
// - the endpoints a key's guardrails do not allow (allowed and ignored models and providers) are taken out
//   of the candidates, and a request left with none is refused with a 403 naming the guardrail;
// - the request's text is scanned with the guardrails' content filters: a `block` match is a 403 whose
//   error.metadata.patterns lists what matched (nothing is sent upstream, nothing reserved), `redact`
//   rewrites what goes upstream, `flag` only reports.
// Each guardrail that acted adds an entry to service_metadata.pipeline. A key without guardrails costs a
// map lookup, with no promise.
import { ForbiddenError } from '../../platform/errors.js';
import { guardrailsOf, redact, refusal, scan, type Guardrail, type GuardrailPolicy, type Span } from '../../guardrails/index.js';
import type { Message } from '../../providers/types.js';
import type { InferenceRequest } from '../inference-request.js';
import type { GenerationCall, GenerationMiddleware, GenerationParams } from '../middleware.js';
import { planRoute, type Candidate } from '../routing.js';
import type { CatalogEndpoint, CatalogModel } from '../../catalog/index.js';

function enforce(call: GenerationCall, policy: GuardrailPolicy): GenerationParams {
  const guardrails = guardrailsOf(policy, call.caller.key);
  if (!guardrails?.length) return call.params;
  // Assigned to the key itself, or to the member who created it.
  const own = policy.byKey.get(call.caller.keyHash);
  const scope: Scope = (guardrail) => (own?.includes(guardrail) ? 'key' : 'member');
  return filterContent(call, guardrails, filterEndpoints(call, guardrails, scope), scope);
}

type Scope = (guardrail: Guardrail) => 'key' | 'member';

const ACTION_RANK = { flag: 0, redact: 1, block: 2 } as const;

/**
 * One piece of text the provider receives, and how to put a redacted version of it back. Texts that
 * cannot be rewritten (tool definitions, a response schema, reasoning the provider signed) have no `put`:
 * a `redact` match in them blocks the request instead, since sending it on would leak what was to be
 * redacted.
 */
interface Field {
  text: string;
  put?: (redacted: string) => void;
  /**
   * A message's text parts joined (the model reads them as one text): `parts` are those parts' fields and
   * `starts` where each begins in the join. Only a match that crosses from one part into the next and that
   * the parts' own scans did not find (in part) counts here; not being rewritable, it blocks.
   */
  joins?: { parts: Field[]; starts: number[] };
}

/** Every text of the request a provider receives, with setters that build the redacted request. */
function fieldsOf(request: InferenceRequest): { fields: Field[]; rebuild: () => InferenceRequest } {
  const fields: Field[] = [];
  const messages: Message[] = request.params.messages.map((message) => ({ ...message, content: [...message.content] }) as Message);
  messages.forEach((message) => {
    const parts: Field[] = [];
    const starts: number[] = [];
    let joined = '';
    message.content.forEach((part, index) => {
      if (part.type !== 'text') return;
      const field: Field = { text: part.text, put: (text) => { message.content[index] = { ...part, text }; } };
      fields.push(field);
      parts.push(field);
      starts.push(joined.length);
      joined += part.text;
    });
    // A pattern split over parts ("SECRET", "999") is still one text to the model.
    if (parts.length > 1) fields.push({ text: joined, joins: { parts, starts } });
    if (message.role === 'assistant') {
      const assistant = message as Extract<Message, { role: 'assistant' }>;
      assistant.tool_calls?.forEach((toolCall, index) => {
        fields.push({ text: toolCall.arguments, put: (text) => { assistant.tool_calls = assistant.tool_calls!.map((entry, at) => (at === index ? { ...entry, arguments: text } : entry)); } });
      });
      if (assistant.reasoning) {
        fields.push(assistant.reasoning_signature ? { text: assistant.reasoning } : { text: assistant.reasoning, put: (text) => { assistant.reasoning = text; } });
      }
    }
  });
  const params = { ...request.params, messages };
  if (params.tools?.length) fields.push({ text: JSON.stringify(params.tools) });
  if (params.response_format?.type === 'json_schema') fields.push({ text: JSON.stringify(params.response_format.schema) });
  const speech = params.speech ? { ...params.speech, references: [...params.speech.references] } : undefined;
  if (speech) {
    params.speech = speech;
    if (speech.instructions) fields.push({ text: speech.instructions, put: (text) => { speech.instructions = text; } });
    speech.references.forEach((part, index) => {
      if (part.type === 'text') fields.push({ text: part.text, put: (text) => { speech.references[index] = { type: 'text', text }; } });
    });
  }
  return {
    fields,
    rebuild: () => {
      // The speech input and the embedding texts are the messages' texts, in order (formats/speech.ts, embeddings.ts).
      const texts = messages.flatMap((message) => message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])));
      if (params.speech) params.speech = { ...params.speech, input: texts.join('') };
      if (params.embedding) params.embedding = { ...params.embedding, input: texts };
      return { ...request, params };
    },
  };
}

/**
 * Whether a match in a message's joined text parts is one only the join shows: it crosses from one part into
 * the next, and no part's own scan found a match of the same filter that it overlaps (a greedy pattern, an
 * email's domain say, runs on into the next part from a match the part's scan redacts already).
 */
function splitOnly(span: Span, joins: NonNullable<Field['joins']>, own: Map<Field, Span[]> | undefined): boolean {
  const { parts, starts } = joins;
  let crosses = false;
  for (let i = 0; i < parts.length; i += 1) {
    const start = starts[i]!;
    const end = start + parts[i]!.text.length;
    if (span.end <= start || span.start >= end) continue;
    if (i > 0 && span.start < start) crosses = true;
    for (const match of own?.get(parts[i]!) ?? []) {
      if (match.name === span.name && match.start + start < span.end && match.end + start > span.start) return false;
    }
  }
  return crosses;
}

/** The request's text scanned with every guardrail's content filters: blocked, redacted or reported. */
function filterContent(call: GenerationCall, guardrails: Guardrail[], params: GenerationParams, scope: Scope): GenerationParams {
  const filtering = guardrails.filter((guardrail) => guardrail.content_filters?.length || guardrail.content_filter_builtins?.length);
  if (filtering.length === 0) return params;
  const { fields, rebuild } = fieldsOf(params.request);
  const found = new Map<Guardrail, Span[]>();
  const redactions = new Map<Field, Span[]>();
  // Each part's own matches, per guardrail: a joined text's match that overlaps one of them is that match.
  const partSpans = new Map<Guardrail, Map<Field, Span[]>>();
  for (const field of fields) {
    for (const guardrail of filtering) {
      let spans = scan(field.text, guardrail.content_filter_builtins ?? [], guardrail.content_filters ?? []);
      if (field.joins) spans = spans.filter((span) => splitOnly(span, field.joins!, partSpans.get(guardrail)));
      else if (field.put && spans.length) {
        let own = partSpans.get(guardrail);
        if (!own) partSpans.set(guardrail, own = new Map());
        own.set(field, spans);
      }
      if (spans.length === 0) continue;
      // What cannot be rewritten cannot be redacted: it blocks.
      if (!field.put) spans = spans.map((span) => (span.action === 'redact' ? { ...span, action: 'block' } : span));
      found.set(guardrail, [...(found.get(guardrail) ?? []), ...spans]);
      if (spans.some((span) => span.action === 'redact')) redactions.set(field, [...(redactions.get(field) ?? []), ...spans]);
    }
  }
  if (found.size === 0) return params;
  const blocked: string[] = [];
  const blocking: Guardrail[] = [];
  for (const [guardrail, spans] of found) {
    const action = spans.reduce<Span['action']>((strongest, span) => (ACTION_RANK[span.action] > ACTION_RANK[strongest] ? span.action : strongest), 'flag');
    const names = [...new Set(spans.map((span) => span.name))];
    const byAction = (wanted: Span['action']) => [...new Set(spans.filter((span) => span.action === wanted).map((span) => span.name))];
    if (action === 'block') {
      blocked.push(...byAction('block'));
      blocking.push(guardrail);
    }
    call.trace.pipeline.push({
      type: 'guardrail',
      name: guardrail.name,
      guardrail_id: guardrail.id,
      guardrail_scope: scope(guardrail),
      summary: action === 'block' ? `Blocked: the request contains ${byAction('block').join(', ')}`
        : action === 'redact' ? `Redacted ${byAction('redact').join(', ')} before the request went upstream${byAction('flag').length ? `; flagged ${byAction('flag').join(', ')}` : ''}`
          : `Flagged ${names.join(', ')}`,
      data: { action, detected: names, engines: [...new Set(spans.map((span) => span.engine))], patterns: action === 'block' ? byAction('block') : names },
    });
  }
  if (blocked.length) {
    const patterns = [...new Set(blocked)];
    throw new ForbiddenError(`The request was blocked by a guardrail: it contains ${patterns.join(', ')}`, {
      metadata: { patterns, guardrail_ids: blocking.map((guardrail) => guardrail.id) },
    });
  }
  if (redactions.size === 0) return params;
  for (const [field, spans] of redactions) field.put!(redact(field.text, spans));
  return { candidates: params.candidates, request: rebuild() };
}

/**
 * The candidates again, routed over only the endpoints the guardrails allow: without fallbacks routing kept
 * one endpoint per model, which may be one the guardrail refuses while another of the model is allowed.
 */
function replanned(call: GenerationCall, guardrails: Guardrail[]): Candidate[] {
  const { deps } = call;
  const allowed = (endpoint: CatalogEndpoint) => guardrails.every((guardrail) => refusal(guardrail, endpoint) === undefined);
  const byId = new Map<string, CatalogModel>();
  for (const id of call.params.request.models) {
    const model = deps.catalog.byId.get(id);
    if (model) byId.set(id, Object.assign({}, model, { endpoints: model.endpoints.filter(allowed) }));
  }
  try {
    return planRoute({ request: call.params.request, catalog: { models: [...byId.values()], byId }, health: deps.health, stickyEndpoint: undefined, now: deps.now(), random: deps.random }).candidates;
  } catch {
    return [];
  }
}

function filterEndpoints(call: GenerationCall, guardrails: Guardrail[], scope: Scope): GenerationParams {
  let kept: Candidate[] = [];
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
  if (call.params.request.provider?.allow_fallbacks === false) kept = replanned(call, guardrails);
  const blocked = kept.length === 0;
  for (const [guardrail, reasons] of detected) {
    call.trace.pipeline.push({
      type: 'guardrail',
      name: guardrail.name,
      guardrail_id: guardrail.id,
      guardrail_scope: scope(guardrail),
      summary: blocked ? `Blocked: ${reasons.join('; ')}` : `Removed ${reasons.length} endpoint(s): ${reasons.join('; ')}`,
      data: { action: blocked ? 'block' : 'filter', detected: reasons, engines: ['model-policy'], patterns: [] },
    });
  }
  if (blocked) {
    // service_metadata lists no endpoint as available: the guardrail refused them all.
    call.trace.plan.candidates = [];
    const names = [...detected.keys()].map((guardrail) => `"${guardrail.name}"`).join(', ');
    throw new ForbiddenError(`The request is not allowed by guardrail ${names}: ${[...detected.values()].flat().join('; ')}`, {
      metadata: { guardrail_ids: [...detected.keys()].map((guardrail) => guardrail.id), patterns: [] },
    });
  }
  return { request: call.params.request, candidates: kept };
}

export const guardrailMiddleware: GenerationMiddleware = {
  transformParams(call: GenerationCall) {
    const source = call.deps.guardrails;
    if (!source) return call.params;
    const policy = source.policyFor(call.caller.orgId);
    return typeof (policy as { then?: unknown }).then === 'function'
      ? (policy as Promise<GuardrailPolicy>).then((loaded) => enforce(call, loaded))
      : enforce(call, policy as GuardrailPolicy);
  },
};
