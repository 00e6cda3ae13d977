// Guardrails as the pipeline's first middleware, before anything is reserved:
// - the endpoints a key's guardrails do not allow (allowed and ignored models and providers) are taken out
//   of the candidates, and a request left with none is refused with a 403 naming the guardrail;
// - the request's text is scanned with the guardrails' content filters: a `block` match is a 403 whose
//   error.metadata.patterns lists what matched (nothing is sent upstream, nothing reserved), `redact`
//   rewrites what goes upstream, `flag` only reports.
// Each guardrail that acted adds an entry to service_metadata.pipeline. A key without guardrails costs a
// map lookup, with no promise.
import { ForbiddenError } from '../../platform/errors.js';
import { redact, refusal, scan, type Guardrail, type GuardrailPolicy, type Span } from '../../guardrails/index.js';
import type { ContentPart, Message } from '../../providers/types.js';
import type { InferenceRequest } from '../inference-request.js';
import type { GenerationCall, GenerationMiddleware, GenerationParams } from '../middleware.js';

function enforce(call: GenerationCall, policy: GuardrailPolicy): GenerationParams {
  const guardrails = policy.byKey.get(call.caller.keyHash);
  if (!guardrails?.length) return call.params;
  return filterContent(call, guardrails, filterEndpoints(call, guardrails));
}

const ACTION_RANK = { flag: 0, redact: 1, block: 2 } as const;

/** The request's text scanned with every guardrail's content filters: blocked, redacted or reported. */
function filterContent(call: GenerationCall, guardrails: Guardrail[], params: GenerationParams): GenerationParams {
  const filtering = guardrails.filter((guardrail) => guardrail.content_filters?.length || guardrail.content_filter_builtins?.length);
  if (filtering.length === 0) return params;
  const { request } = params;
  const found = new Map<Guardrail, Span[]>();
  const spansByPart = new Map<ContentPart, Span[]>();
  for (const message of request.params.messages) {
    for (const part of message.content) {
      if (part.type !== 'text') continue;
      for (const guardrail of filtering) {
        const spans = scan(part.text, guardrail.content_filter_builtins ?? [], guardrail.content_filters ?? []);
        if (spans.length === 0) continue;
        found.set(guardrail, [...(found.get(guardrail) ?? []), ...spans]);
        spansByPart.set(part, [...(spansByPart.get(part) ?? []), ...spans]);
      }
    }
  }
  if (found.size === 0) return params;
  let blocked: string[] = [];
  for (const [guardrail, spans] of found) {
    const action = spans.reduce<Span['action']>((strongest, span) => (ACTION_RANK[span.action] > ACTION_RANK[strongest] ? span.action : strongest), 'flag');
    const names = [...new Set(spans.map((span) => span.name))];
    const byAction = (wanted: Span['action']) => [...new Set(spans.filter((span) => span.action === wanted).map((span) => span.name))];
    if (action === 'block') blocked = [...blocked, ...byAction('block')];
    call.trace.pipeline.push({
      type: 'guardrail',
      name: guardrail.name,
      guardrail_id: guardrail.id,
      guardrail_scope: 'key',
      summary: action === 'block' ? `Blocked: the request contains ${byAction('block').join(', ')}`
        : action === 'redact' ? `Redacted ${byAction('redact').join(', ')} before the request went upstream${byAction('flag').length ? `; flagged ${byAction('flag').join(', ')}` : ''}`
          : `Flagged ${names.join(', ')}`,
      data: { action, detected: names, engines: [...new Set(spans.map((span) => span.engine))], patterns: action === 'block' ? byAction('block') : names },
    });
  }
  if (blocked.length) {
    const patterns = [...new Set(blocked)];
    throw new ForbiddenError(`The request was blocked by a guardrail: it contains ${patterns.join(', ')}`, {
      metadata: { patterns, guardrail_ids: [...found.keys()].map((guardrail) => guardrail.id) },
    });
  }
  const redacting = [...spansByPart.values()].some((spans) => spans.some((span) => span.action === 'redact'));
  return redacting ? { ...params, request: redacted(request, spansByPart) } : params;
}

/** The request with its matched text redacted, in its messages and in what adapters send of it (speech input, embedding texts). */
function redacted(request: InferenceRequest, spansByPart: Map<ContentPart, Span[]>): InferenceRequest {
  const messages: Message[] = request.params.messages.map((message) => ({
    ...message,
    content: message.content.map((part) => (part.type === 'text' && spansByPart.has(part) ? { ...part, text: redact(part.text, spansByPart.get(part)!) } : part)),
  }) as Message);
  const texts = messages.flatMap((message) => message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])));
  const params = { ...request.params, messages };
  // The speech input and the embedding texts are the messages' texts, in order (formats/speech.ts, embeddings.ts).
  if (params.speech) params.speech = { ...params.speech, input: texts.join('') };
  if (params.embedding) params.embedding = { ...params.embedding, input: texts };
  return { ...request, params };
}

function filterEndpoints(call: GenerationCall, guardrails: Guardrail[]): GenerationParams {
  const kept = [];
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
  const blocked = kept.length === 0;
  for (const [guardrail, reasons] of detected) {
    call.trace.pipeline.push({
      type: 'guardrail',
      name: guardrail.name,
      guardrail_id: guardrail.id,
      guardrail_scope: 'key',
      summary: blocked ? `Blocked: ${reasons.join('; ')}` : `Removed ${reasons.length} endpoint(s): ${reasons.join('; ')}`,
      data: { action: blocked ? 'block' : 'filter', detected: reasons, engines: ['model-policy'], patterns: [] },
    });
  }
  if (blocked) {
    const names = [...detected.keys()].map((guardrail) => `"${guardrail.name}"`).join(', ');
    throw new ForbiddenError(`The request is not allowed by guardrail ${names}: ${[...detected.values()].flat().join('; ')}`, {
      metadata: { guardrail_ids: [...detected.keys()].map((guardrail) => guardrail.id), patterns: [] },
    });
  }
  return { ...call.params, candidates: kept };
}

export const guardrailMiddleware: GenerationMiddleware = {
  transformParams(call: GenerationCall) {
    const source = call.deps.guardrails;
    if (!source) return call.params;
    const policy = source.policyFor(call.caller.orgId);
    return policy instanceof Promise ? policy.then((loaded) => enforce(call, loaded)) : enforce(call, policy);
  },
};
