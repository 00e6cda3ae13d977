// Each destination type's request for one delivered generation: a signed webhook, OTLP/HTTP JSON traces
// (the OpenTelemetry GenAI semantic conventions), a Langfuse ingestion batch. Pure functions: the caller
// sends what they return (deliver.ts).
import { createHash, createHmac } from 'node:crypto';
import type { FullConfig } from './config.js';
import type { DeliveredGeneration, DeliveryMessage } from './event.js';

export interface OutboundRequest {
  url: string;
  method: 'POST' | 'PUT';
  headers: Record<string, string>;
  body: string;
}

/** The idempotency key of one generation's delivery to one destination: the same on every retry. */
export const deliveryIdOf = (message: Pick<DeliveryMessage, 'destination_id'> & { generation: Pick<DeliveredGeneration, 'generation_id'> }) =>
  `${message.generation.generation_id}.${message.destination_id}`;

/** `t=<unix seconds>,v1=<hex HMAC-SHA-256 of "<t>.<body>">`, as Stripe-style receivers check it. */
export function webhookSignature(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

export function webhookRequest(config: FullConfig, message: DeliveryMessage, nowMs: number, event = 'generation'): OutboundRequest {
  const id = deliveryIdOf(message);
  // The body is the same on every attempt; the signature's timestamp is the attempt's.
  const body = JSON.stringify({ type: event, id, destination_id: message.destination_id, data: message.generation });
  return {
    url: config.url as string,
    method: (config.method as 'POST' | 'PUT' | undefined) ?? 'POST',
    headers: {
      ...((config.headers as Record<string, string> | undefined) ?? {}),
      'content-type': 'application/json',
      'idempotency-key': id,
      'x-gateway-delivery': id,
      'x-gateway-event': event,
      'x-gateway-signature': webhookSignature(config.secret as string, body, Math.floor(nowMs / 1000)),
    },
    body,
  };
}

const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;
const hashHex = (text: string, length: number) => createHash('sha256').update(text).digest('hex').slice(0, length);

/** A caller's trace id as OTLP takes it: 32 hex digits as sent, anything else hashed to them. */
export function otelTraceId(generation: DeliveredGeneration): string {
  const given = generation.trace.trace_id?.toLowerCase().replace(/-/g, '');
  if (given && HEX32.test(given) && !/^0+$/.test(given)) return given;
  return hashHex(`trace:${generation.trace.trace_id ?? generation.generation_id}`, 32);
}

function otelSpanId(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const lower = value.toLowerCase();
  return HEX16.test(lower) && !/^0+$/.test(lower) ? lower : hashHex(`span:${value}`, 16);
}

type OtlpValue = { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean } | { arrayValue: { values: OtlpValue[] } };

function otlpValue(value: unknown): OtlpValue {
  if (typeof value === 'boolean') return { boolValue: value };
  if (typeof value === 'number') return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
  if (Array.isArray(value) && value.every((entry) => typeof entry === 'string')) return { arrayValue: { values: value.map((entry) => ({ stringValue: entry })) } };
  return { stringValue: typeof value === 'string' ? value : JSON.stringify(value) };
}

const OPERATIONS: Record<DeliveredGeneration['api'], string> = { chat: 'chat', responses: 'chat', messages: 'chat', embeddings: 'embeddings', speech: 'text_to_speech' };
const nanosOf = (iso: string) => `${BigInt(Date.parse(iso)) * 1_000_000n}`;

/** The generation as one OTLP span (kind CLIENT) under the caller's trace. */
export function otlpRequest(config: FullConfig, message: DeliveryMessage): OutboundRequest {
  const generation = message.generation;
  const operation = OPERATIONS[generation.api];
  const attributes: Record<string, unknown> = {
    'gen_ai.operation.name': operation,
    'gen_ai.provider.name': generation.provider,
    'gen_ai.request.model': generation.model,
    'gen_ai.response.model': generation.upstream_model,
    'gen_ai.response.id': generation.generation_id,
    ...(generation.finish_reason ? { 'gen_ai.response.finish_reasons': [generation.finish_reason] } : {}),
    'gen_ai.usage.input_tokens': generation.usage.prompt_tokens,
    'gen_ai.usage.output_tokens': generation.usage.completion_tokens,
    'gateway.workspace_id': generation.workspace_id,
    'gateway.latency_ms': generation.latency_ms,
    ...(generation.first_token_ms !== null ? { 'gateway.first_token_ms': generation.first_token_ms } : {}),
    ...(generation.trace.trace_name ? { 'gateway.trace.name': generation.trace.trace_name } : {}),
    ...(generation.cost ? { 'gateway.cost.total_usd': generation.cost.total, 'gateway.cost.is_byok': generation.cost.is_byok } : {}),
    ...(generation.session_id ? { 'gen_ai.conversation.id': generation.session_id } : {}),
    ...(generation.user_id ? { 'user.id': generation.user_id } : {}),
    ...(generation.request ? { 'gateway.api_key.name': generation.request.api_key_name } : {}),
    ...(generation.input ? { 'gen_ai.input.messages': generation.input } : {}),
    ...(generation.output ? { 'gen_ai.output.messages': [{ role: 'assistant', content: generation.output.text, ...(generation.output.tool_calls?.length ? { tool_calls: generation.output.tool_calls } : {}) }] } : {}),
    ...Object.fromEntries(Object.entries(generation.trace_metadata).map(([key, value]) => [`metadata.${key}`, value])),
  };
  const parent = otelSpanId(generation.trace.parent_span_id);
  const span = {
    traceId: otelTraceId(generation),
    spanId: hashHex(`span:${generation.generation_id}`, 16),
    ...(parent ? { parentSpanId: parent } : {}),
    name: generation.trace.generation_name ?? generation.trace.span_name ?? `${operation} ${generation.model}`,
    kind: 3,
    startTimeUnixNano: nanosOf(generation.created_at),
    endTimeUnixNano: nanosOf(generation.ended_at),
    attributes: Object.entries(attributes).map(([key, value]) => ({ key, value: otlpValue(value) })),
    status: generation.error ? { code: 2, message: generation.error.message } : { code: 1 },
  };
  const body = JSON.stringify({
    resourceSpans: [{
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'model-gateway' } }] },
      scopeSpans: [{ scope: { name: 'model-gateway' }, spans: [span] }],
    }],
  });
  const endpoint = (config.endpoint as string).replace(/\/+$/, '');
  return {
    url: endpoint.endsWith('/v1/traces') ? endpoint : `${endpoint}/v1/traces`,
    method: 'POST',
    headers: { ...((config.headers as Record<string, string> | undefined) ?? {}), 'content-type': 'application/json', 'idempotency-key': deliveryIdOf(message) },
    body,
  };
}

/** A Langfuse ingestion batch: the trace (upserted) and the generation as an observation of it. */
export function langfuseRequest(config: FullConfig, message: DeliveryMessage, nowMs: number): OutboundRequest {
  const generation = message.generation;
  const id = deliveryIdOf(message);
  const traceId = generation.trace.trace_id ?? generation.generation_id;
  const timestamp = new Date(nowMs).toISOString();
  const metadata = { ...generation.trace_metadata, ...(generation.request ? { api_key_name: generation.request.api_key_name, ...generation.request.metadata } : {}), provider: generation.provider, gateway_model: generation.model };
  const batch = [
    {
      id: `${id}.trace`, timestamp, type: 'trace-create',
      body: {
        id: traceId,
        ...(generation.trace.trace_name ? { name: generation.trace.trace_name } : {}),
        ...(generation.user_id ? { userId: generation.user_id } : {}),
        ...(generation.session_id ? { sessionId: generation.session_id } : {}),
        timestamp: generation.created_at,
      },
    },
    {
      id: `${id}.generation`, timestamp, type: 'generation-create',
      body: {
        id: generation.generation_id,
        traceId,
        name: generation.trace.generation_name ?? generation.trace.span_name ?? generation.model,
        ...(generation.trace.parent_span_id ? { parentObservationId: generation.trace.parent_span_id } : {}),
        startTime: generation.created_at,
        endTime: generation.ended_at,
        ...(generation.first_token_ms !== null ? { completionStartTime: new Date(Date.parse(generation.created_at) + generation.first_token_ms).toISOString() } : {}),
        model: generation.upstream_model,
        ...(generation.input ? { input: generation.input } : {}),
        ...(generation.output ? { output: generation.output } : {}),
        usageDetails: { input: generation.usage.prompt_tokens, output: generation.usage.completion_tokens, total: generation.usage.total_tokens },
        ...(generation.cost ? { costDetails: { input: generation.cost.prompt, output: generation.cost.completion, total: generation.cost.total } } : {}),
        metadata,
        level: generation.error ? 'ERROR' : 'DEFAULT',
        ...(generation.error ? { statusMessage: generation.error.message } : {}),
      },
    },
  ];
  const auth = Buffer.from(`${config.publicKey as string}:${config.secretKey as string}`).toString('base64');
  return {
    url: `${(config.baseUrl as string).replace(/\/+$/, '')}/api/public/ingestion`,
    method: 'POST',
    headers: { ...((config.headers as Record<string, string> | undefined) ?? {}), 'content-type': 'application/json', authorization: `Basic ${auth}` },
    body: JSON.stringify({ batch }),
  };
}

/** The object key of a generation in an S3 export: the path template ({prefix}, {date}, {hour}, {workspace_id}) and the generation's id. */
export function s3ObjectKey(config: FullConfig, generation: DeliveredGeneration): string {
  const at = generation.created_at;
  const path = (config.pathTemplate as string)
    .replaceAll('{prefix}', (config.prefix as string) ?? '')
    .replaceAll('{date}', at.slice(0, 10))
    .replaceAll('{hour}', at.slice(11, 13))
    .replaceAll('{workspace_id}', generation.workspace_id)
    .replace(/\/{2,}/g, '/')
    .replace(/^\/+|\/+$/g, '');
  return `${path ? `${path}/` : ''}${generation.generation_id}.json`;
}
