// Observability's pure parts: configs (checks, masking, merging, the host secrets are bound to), which
// destinations take a generation (keys, workspace, filter rules, sampling), what each may see (privacy mode,
// cost, identity, request context), the wire formats (a webhook signature a receiver can check, OTLP spans,
// Langfuse batches, S3 keys), the outbox's batching and the delivery worker's retries.
import { createHmac } from 'node:crypto';
import { describe, expect, it, jest } from '@jest/globals';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { ConfigError, destinationHost, mask, mergedConfig, newConfig, splitConfig } from '../../lambdas/observability/config.js';
import { delivered, messageBody, MAX_MESSAGE_BYTES, passesFilter, sampled, wants, type DeliveryMessage, type GenerationFacts } from '../../lambdas/observability/event.js';
import { langfuseRequest, otelTraceId, otlpRequest, s3ObjectKey, webhookRequest, webhookSignature } from '../../lambdas/observability/wire-formats.js';
import { ObservabilityOutbox } from '../../lambdas/observability/outbox.js';
import { backoffSeconds, handleDeliveries } from '../../lambdas/observability/delivery-worker.js';
import { publicLookup, send } from '../../lambdas/observability/http-send.js';
import { deliver } from '../../lambdas/observability/deliver.js';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { Logger } from '../../lambdas/platform/logger.js';
import type { Destination } from '../../lambdas/observability/types.js';
import type { GenerationRecord } from '../../lambdas/billing/generation-record.js';

const record = (overrides: Partial<GenerationRecord> = {}): GenerationRecord => ({
  id: 'gen-1795588529-abcdefghijkl00', org_id: 'org-1', workspace_id: 'ws-1', key_hash: 'a'.repeat(64), model: 'openai/gpt-4o', provider: 'openai',
  upstream_model: 'gpt-4o-2024', provider_id: 'chatcmpl-1', api: 'chat', streamed: true, status: 'completed', finish_reason: 'stop', native_finish_reason: 'stop',
  usage: { input_tokens: 12, output_tokens: 30, cached_input_tokens: 2, cache_write_tokens: 0, reasoning_tokens: 5 },
  cost: { prompt: 1200n, completion: 9000n, cache_read: 0n, cache_write: 0n, reasoning: 0n, request: 0n, total: 10_200n },
  is_byok: false, service_tier: null, attempts: 1, created_at: '2026-11-25T06:00:00.000Z', latency_ms: 250, first_token_ms: 40, generation_time_ms: 210,
  session_id: 'session-9', user_hash: 'h', error: null, reserved: 20_000n, usage_estimated: false, provider_responses: [],
  ...overrides,
});

const facts = (overrides: Partial<GenerationFacts> = {}): GenerationFacts => ({
  record: record(),
  input: [{ role: 'user', content: [{ type: 'text', text: 'What is the capital of France?' }] }],
  output: { text: 'Paris.' },
  trace: { trace_id: 'checkout-42', trace_name: 'checkout', span_name: 'answer', generation_name: 'capital', parent_span_id: 'root', tenant: 'acme' },
  metadata: { team: 'search' },
  user: 'alice@example.com',
  apiKeyName: 'production',
  ...overrides,
});

const destination = (overrides: Partial<Destination> = {}): Destination => ({
  id: '11111111-1111-4111-8111-111111111111', org_id: 'org-1', workspace_id: 'ws-1', name: 'hook', type: 'webhook',
  config: { url: 'https://hooks.example.com/in', method: 'POST', secret: 'whse...abcd' }, secret_fields: ['secret'], secret_name: 'dest_1111_a', host: 'hooks.example.com',
  enabled: true, sampling_rate: 1, privacy_mode: false, api_key_hashes: null, filter_rules: null,
  broadcast_generation_cost: false, broadcast_generation_identity: false, broadcast_generation_request_context: false,
  regions: ['global'], created_at: '2026-11-25T00:00:00.000Z', updated_at: '2026-11-25T00:00:00.000Z',
  ...overrides,
});

const quiet = () => new Logger(() => undefined);

describe('destination configs', () => {
  it('checks each type\'s fields, names the bad one, and makes a webhook signing secret when none is given', () => {
    expect(() => newConfig('webhook', { url: 'ftp://example.com' })).toThrow(/body\.config\.url: must be an http\(s\) URL/);
    expect(() => newConfig('webhook', { url: 'https://user:pw@example.com' })).toThrow(/without credentials/);
    expect(() => newConfig('langfuse', { publicKey: 'pk' })).toThrow(/body\.config\.secretKey/);
    expect(() => newConfig('webhook', { url: 'https://example.com', headers: { 'Content-Type': 'text/plain' } })).toThrow(/Content-Type is set by the gateway/);
    // What node:http cannot send: control characters and characters above U+00FF, in header values and in credentials.
    expect(() => newConfig('webhook', { url: 'https://example.com', headers: { 'x-a': 'caf\u00e9\u2603' } })).toThrow(/characters above U\+00FF/);
    expect(() => newConfig('webhook', { url: 'https://example.com', headers: { 'x-a': 'a\u0000b' } })).toThrow(/control characters/);
    expect(newConfig('webhook', { url: 'https://example.com', headers: { 'x-a': 'Bearer a\tb caf\u00e9' } })).toMatchObject({ headers: { 'x-a': 'Bearer a\tb caf\u00e9' } });
    expect(() => newConfig('s3', { bucketName: 'my-bucket', accessKeyId: 'AK\u0000IA', secretAccessKey: 'x' })).toThrow(/printable ASCII/);
    expect(() => newConfig('s3', { bucketName: 'my-bucket', accessKeyId: 'AKIA', secretAccessKey: 'x', sessionToken: 't\u2603' })).toThrow(/printable ASCII/);
    expect(() => newConfig('webhook', { url: 'https://example.com', extra: 1 })).toThrow(ConfigError);
    const made = newConfig('webhook', { url: 'https://example.com/hook' });
    expect(made.secret).toMatch(/^whsec_[A-Za-z0-9_-]{32}$/);
    expect(newConfig('webhook', { url: 'https://example.com/hook' }).secret).not.toBe(made.secret);
    expect(newConfig('langfuse', { publicKey: 'pk-lf-1', secretKey: 'sk-lf-1' }).baseUrl).toBe('https://us.cloud.langfuse.com');
  });

  it('masks secrets in what replies show and keeps them apart for the vault', () => {
    const config = newConfig('langfuse', { publicKey: 'pk-lf-0123456789abcdef', secretKey: 'sk-lf-fedcba9876543210', headers: { 'x-tenant': 'tenant-token-0000-1111' } });
    const { shown, secrets, fields } = splitConfig('langfuse', config);
    expect(shown).toEqual({ baseUrl: 'https://us.cloud.langfuse.com', publicKey: 'pk-l...cdef', secretKey: 'sk-l...3210', headers: { 'x-tenant': 'tena...1111' } });
    expect(secrets).toEqual({ publicKey: 'pk-lf-0123456789abcdef', secretKey: 'sk-lf-fedcba9876543210', headers: { 'x-tenant': 'tenant-token-0000-1111' } });
    expect(fields.sort()).toEqual(['headers', 'publicKey', 'secretKey']);
    expect(mask('short')).toBe('...');
  });

  it('merges an update: left-out and masked-back fields keep their value, new ones replace it, and it says which secrets were kept', () => {
    const current = newConfig('webhook', { url: 'https://a.example.com/x', secret: 'first-secret-0123456789', headers: { auth: 'token-aaaaaaaaaaaaaaaa', other: 'value-bbbbbbbbbbbbbbbb' } });
    const { shown } = splitConfig('webhook', current);
    const masked = shown.headers as Record<string, string>;
    const kept = mergedConfig('webhook', current, { secret: shown.secret, headers: { auth: masked.auth } }, shown);
    expect(kept.config.secret).toBe('first-secret-0123456789');
    expect(kept.config.headers).toEqual({ auth: 'token-aaaaaaaaaaaaaaaa' });
    expect(kept.kept).toEqual(['secret', 'headers.auth']);
    // One header new, one sent back masked: the masked one is still a kept secret (a move must not take it along).
    const partly = mergedConfig('webhook', current, { url: 'https://b.example.com/x', secret: 'second-secret-0123456789', headers: { auth: masked.auth, 'x-new': 'fresh-value' } }, shown);
    expect(partly.config.headers).toEqual({ auth: 'token-aaaaaaaaaaaaaaaa', 'x-new': 'fresh-value' });
    expect(partly.kept).toEqual(['headers.auth']);
    const changed = mergedConfig('webhook', current, { secret: 'second-secret-0123456789', url: 'https://a.example.com/y' }, shown);
    expect(changed.config).toMatchObject({ secret: 'second-secret-0123456789', url: 'https://a.example.com/y', headers: current.headers });
    expect(changed.kept).toEqual(['headers.auth', 'headers.other']);
    expect(() => mergedConfig('webhook', current, { method: 'GET' }, shown)).toThrow(/body\.config\.method/);
    expect(() => newConfig('webhook', { url: 'https://example.com', headers: { Connection: 'close' } })).toThrow(/Connection is set by the gateway, or cannot be sent/);
    expect(() => newConfig('langfuse', { publicKey: 'p', secretKey: 's', headers: { Authorization: 'Bearer x' } })).toThrow(/leave out an Authorization header/);
  });

  it('binds secrets to the service\'s host, and refuses private addresses unless allowed', () => {
    expect(destinationHost('webhook', { url: 'https://Hooks.Example.com:8443/path' }, false)).toBe('hooks.example.com');
    expect(destinationHost('langfuse', { baseUrl: 'https://cloud.langfuse.com' }, false)).toBe('cloud.langfuse.com');
    expect(destinationHost('s3', { region: 'eu-west-1', bucketName: 'b' }, false)).toBe('s3.eu-west-1.amazonaws.com');
    for (const url of ['http://127.0.0.1:9000/x', 'http://localhost/x', 'http://169.254.169.254/latest', 'http://10.0.0.8/', 'http://192.168.1.1/', 'http://[::1]/', 'http://172.20.0.1/']) {
      expect(() => destinationHost('webhook', { url }, false)).toThrow(/private or loopback/);
    }
    expect(destinationHost('webhook', { url: 'http://127.0.0.1:9000/x' }, true)).toBe('127.0.0.1');
    expect(destinationHost('webhook', { url: 'http://172.32.0.1/' }, false)).toBe('172.32.0.1');
  });
});

describe('which destinations take a generation', () => {
  it('keeps to the destination\'s workspace, keys and enabled state', () => {
    expect(wants(destination(), facts())).toBe(true);
    expect(wants(destination({ enabled: false }), facts())).toBe(false);
    expect(wants(destination({ workspace_id: 'ws-2' }), facts())).toBe(false);
    expect(wants(destination({ api_key_hashes: ['b'.repeat(64)] }), facts())).toBe(false);
    expect(wants(destination({ api_key_hashes: ['b'.repeat(64), 'a'.repeat(64)] }), facts())).toBe(true);
  });

  it('samples the same generations every time, in about the stated share', () => {
    const half = destination({ sampling_rate: 0.5 });
    const ids = Array.from({ length: 4000 }, (_, index) => `gen-1-${index}`);
    const taken = ids.filter((id) => sampled(half, id));
    expect(taken.length).toBeGreaterThan(1800);
    expect(taken.length).toBeLessThan(2200);
    expect(ids.filter((id) => sampled(half, id))).toEqual(taken);
    expect(ids.filter((id) => sampled(destination({ sampling_rate: 0.0001 }), id)).length).toBeLessThan(10);
  });

  it('applies filter rules: any group, each group\'s rules by its logic', () => {
    const rules = (groups: NonNullable<Destination['filter_rules']>['groups'], enabled = true) => ({ enabled, groups });
    expect(passesFilter(rules([{ logic: 'and', rules: [{ field: 'model', operator: 'starts_with', value: 'openai/' }, { field: 'total_tokens', operator: 'gte', value: 42 }] }]), facts())).toBe(true);
    expect(passesFilter(rules([{ logic: 'and', rules: [{ field: 'model', operator: 'starts_with', value: 'openai/' }, { field: 'total_tokens', operator: 'gt', value: 42 }] }]), facts())).toBe(false);
    expect(passesFilter(rules([{ logic: 'or', rules: [{ field: 'provider', operator: 'equals', value: 'anthropic' }, { field: 'input', operator: 'contains', value: 'France' }] }]), facts())).toBe(true);
    expect(passesFilter(rules([
      { logic: 'and', rules: [{ field: 'provider', operator: 'equals', value: 'anthropic' }] },
      { logic: 'and', rules: [{ field: 'output', operator: 'regex', value: '^Par' }, { field: 'user_id', operator: 'exists' }] },
    ]), facts())).toBe(true);
    expect(passesFilter(rules([{ logic: 'and', rules: [{ field: 'session_id', operator: 'not_exists' }] }]), facts())).toBe(false);
    expect(passesFilter(rules([{ logic: 'and', rules: [{ field: 'total_cost', operator: 'lt', value: 0.00001 }] }]), facts())).toBe(false);
    expect(passesFilter(rules([{ logic: 'and', rules: [{ field: 'total_cost', operator: 'lte', value: 0.0000102 }] }]), facts())).toBe(true);
    expect(passesFilter(rules([{ logic: 'and', rules: [{ field: 'api_key_name', operator: 'not_equals', value: 'production' }] }]), facts())).toBe(false);
    expect(passesFilter(rules([{ logic: 'and', rules: [{ field: 'provider', operator: 'equals', value: 'anthropic' }] }], false), facts())).toBe(true);
  });
});

describe('what a destination sees', () => {
  it('by default: the generation, its trace and texts, but no cost, identity or request context', () => {
    const seen = delivered(destination(), facts());
    expect(seen).toMatchObject({
      generation_id: 'gen-1795588529-abcdefghijkl00', model: 'openai/gpt-4o', ended_at: '2026-11-25T06:00:00.250Z',
      usage: { prompt_tokens: 12, completion_tokens: 30, total_tokens: 42, cached_tokens: 2, reasoning_tokens: 5, estimated: false },
      trace: { trace_id: 'checkout-42', trace_name: 'checkout', span_name: 'answer', generation_name: 'capital', parent_span_id: 'root' },
      trace_metadata: { tenant: 'acme' },
      input: facts().input, output: { text: 'Paris.' },
    });
    expect(seen).not.toHaveProperty('cost');
    expect(seen).not.toHaveProperty('user_id');
    expect(seen).not.toHaveProperty('request');
  });

  it('in privacy mode: no prompt or completion text; with the broadcast settings: cost, identity and context', () => {
    const seen = delivered(destination({ privacy_mode: true, broadcast_generation_cost: true, broadcast_generation_identity: true, broadcast_generation_request_context: true }), facts());
    expect(seen).not.toHaveProperty('input');
    expect(seen).not.toHaveProperty('output');
    expect(JSON.stringify(seen)).not.toContain('France');
    expect(seen.cost).toEqual({ total: 0.0000102, prompt: 0.0000012, completion: 0.000009, cache_read: 0, cache_write: 0, reasoning: 0, request: 0, currency: 'USD', is_byok: false });
    expect(seen).toMatchObject({ user_id: 'alice@example.com', session_id: 'session-9', request: { api_key_hash: 'a'.repeat(64), api_key_name: 'production', metadata: { team: 'search' } } });
  });

  it('cuts long texts so that a message fits the queue, and says so', () => {
    const long = 'x'.repeat(400_000);
    const message: DeliveryMessage = { v: 1, destination_id: 'd', org_id: 'o', generation: delivered(destination(), facts({ input: [{ role: 'user', content: [{ type: 'text', text: long }, { type: 'image', url: `data:image/png;base64,${'A'.repeat(100_000)}` }] }], output: { text: long } })) };
    const body = messageBody(message);
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
    const parsed = JSON.parse(body) as DeliveryMessage;
    expect(parsed.generation.truncated).toBe(true);
    expect(parsed.generation.input![0]!.content[1]).toEqual({ type: 'text', text: '[image]' });
    expect(parsed.generation.output!.text.endsWith('…[truncated]')).toBe(true);
    const small: DeliveryMessage = { v: 1, destination_id: 'd', org_id: 'o', generation: delivered(destination(), facts()) };
    expect(messageBody(small)).toBe(JSON.stringify(small));
  });
});

describe('wire formats', () => {
  const message: DeliveryMessage = { v: 1, destination_id: 'dest-1', org_id: 'org-1', generation: delivered(destination({ broadcast_generation_cost: true, broadcast_generation_identity: true }), facts()) };

  it('signs a webhook so that the receiver can check the body and its time', () => {
    const request = webhookRequest({ url: 'https://hooks.example.com/in', method: 'PUT', secret: 'whsec_test', headers: { 'x-team': 'a' } }, message, 1_795_588_529_123);
    expect(request).toMatchObject({ url: 'https://hooks.example.com/in', method: 'PUT' });
    expect(request.headers).toMatchObject({ 'x-team': 'a', 'content-type': 'application/json', 'idempotency-key': 'gen-1795588529-abcdefghijkl00.dest-1', 'x-gateway-event': 'generation' });
    const [t, v1] = request.headers['x-gateway-signature']!.split(',');
    expect(t).toBe('t=1795588529');
    expect(v1).toBe(`v1=${createHmac('sha256', 'whsec_test').update(`1795588529.${request.body}`).digest('hex')}`);
    expect(webhookSignature('whsec_test', request.body, 1795588529)).toBe(request.headers['x-gateway-signature']);
    // The same body on a retry, a new timestamp in its signature.
    const again = webhookRequest({ url: 'https://hooks.example.com/in', secret: 'whsec_test' }, message, 1_795_588_600_000);
    expect(again.body).toBe(request.body);
    expect(again.headers['x-gateway-signature']).not.toBe(request.headers['x-gateway-signature']);
    expect(JSON.parse(request.body)).toMatchObject({ type: 'generation', id: 'gen-1795588529-abcdefghijkl00.dest-1', data: { generation_id: 'gen-1795588529-abcdefghijkl00' } });
  });

  it('makes one OTLP span with the GenAI attributes, under the caller\'s trace', () => {
    const request = otlpRequest({ endpoint: 'https://otel.example.com/', headers: { 'x-api-key': 'k' } }, message);
    expect(request.url).toBe('https://otel.example.com/v1/traces');
    expect(otlpRequest({ endpoint: 'https://otel.example.com/v1/traces' }, message).url).toBe('https://otel.example.com/v1/traces');
    const span = JSON.parse(request.body).resourceSpans[0].scopeSpans[0].spans[0];
    expect(span.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(span.traceId).toBe(otelTraceId(message.generation));
    expect(span.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(span.parentSpanId).toMatch(/^[0-9a-f]{16}$/);
    expect(span).toMatchObject({ name: 'capital', kind: 3, startTimeUnixNano: '1795586400000000000', endTimeUnixNano: '1795586400250000000', status: { code: 1 } });
    const attributes = Object.fromEntries(span.attributes.map((entry: { key: string; value: unknown }) => [entry.key, entry.value]));
    expect(attributes).toMatchObject({
      'gen_ai.operation.name': { stringValue: 'chat' }, 'gen_ai.provider.name': { stringValue: 'openai' }, 'gen_ai.request.model': { stringValue: 'openai/gpt-4o' },
      'gen_ai.response.model': { stringValue: 'gpt-4o-2024' }, 'gen_ai.usage.input_tokens': { intValue: '12' }, 'gen_ai.usage.output_tokens': { intValue: '30' },
      'gen_ai.response.finish_reasons': { arrayValue: { values: [{ stringValue: 'stop' }] } }, 'gen_ai.conversation.id': { stringValue: 'session-9' },
      'metadata.tenant': { stringValue: 'acme' }, 'gateway.cost.total_usd': { doubleValue: 0.0000102 },
    });
    expect(JSON.parse(attributes['gen_ai.input.messages'].stringValue)).toEqual(facts().input);
    // A W3C trace id is used as sent.
    const w3c = { ...message, generation: { ...message.generation, trace: { trace_id: '4BF92F3577B34DA6A3CE929D0E0E4736', parent_span_id: '00f067aa0ba902b7' } } };
    const w3cSpan = JSON.parse(otlpRequest({ endpoint: 'https://otel.example.com' }, w3c).body).resourceSpans[0].scopeSpans[0].spans[0];
    expect(w3cSpan.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(w3cSpan.parentSpanId).toBe('00f067aa0ba902b7');
  });

  it('makes a Langfuse batch: the trace and the generation as its observation, with basic auth', () => {
    const request = langfuseRequest({ baseUrl: 'https://cloud.langfuse.com/', publicKey: 'pk-lf', secretKey: 'sk-lf' }, message, Date.parse('2026-11-25T06:00:01.000Z'));
    expect(request.url).toBe('https://cloud.langfuse.com/api/public/ingestion');
    expect(request.headers.authorization).toBe(`Basic ${Buffer.from('pk-lf:sk-lf').toString('base64')}`);
    const { batch } = JSON.parse(request.body);
    expect(batch.map((event: { type: string }) => event.type)).toEqual(['trace-create', 'generation-create']);
    expect(batch[0].body).toMatchObject({ id: 'checkout-42', name: 'checkout', userId: 'alice@example.com', sessionId: 'session-9' });
    expect(batch[1].body).toMatchObject({
      id: 'gen-1795588529-abcdefghijkl00', traceId: 'checkout-42', name: 'capital', parentObservationId: 'root', model: 'gpt-4o-2024',
      startTime: '2026-11-25T06:00:00.000Z', endTime: '2026-11-25T06:00:00.250Z', completionStartTime: '2026-11-25T06:00:00.040Z',
      usageDetails: { input: 12, output: 30, total: 42 }, metadata: { tenant: 'acme' }, level: 'DEFAULT',
    });
  });

  it('names an S3 export after the path template and the generation', () => {
    expect(s3ObjectKey({ prefix: 'traces', pathTemplate: '{prefix}/{date}/{hour}' }, message.generation)).toBe('traces/2026-11-25/06/gen-1795588529-abcdefghijkl00.json');
    expect(s3ObjectKey({ prefix: '', pathTemplate: '{prefix}/{workspace_id}' }, message.generation)).toBe('ws-1/gen-1795588529-abcdefghijkl00.json');
  });
});

describe('the outbox', () => {
  it('sends nothing, and builds nothing, for an organization without a destination in the workspace', () => {
    const send = jest.fn(async (_bodies: readonly string[]): Promise<number[]> => []);
    const outbox = new ObservabilityOutbox({ destinations: { destinationsFor: () => [destination({ workspace_id: 'ws-2' })] }, queue: { send }, log: quiet() });
    const build = jest.fn(() => facts());
    expect(outbox.observe('org-1', 'ws-1', build)).toBeUndefined();
    expect(build).not.toHaveBeenCalled();
    expect(send).not.toHaveBeenCalled();
  });

  it('says early whether a generation may be observed: no only when the cached destinations hold none enabled in its workspace', () => {
    const outbox = (list: Destination[] | Promise<Destination[]>) => new ObservabilityOutbox({ destinations: { destinationsFor: () => list }, queue: { send: async () => [] }, log: quiet() });
    expect(outbox([destination({ workspace_id: 'ws-2' }), destination({ enabled: false })]).mayObserve('org-1', 'ws-1')).toBe(false);
    expect(outbox([]).mayObserve('org-1', 'ws-1')).toBe(false);
    expect(outbox([destination({ workspace_id: 'ws-2' }), destination()]).mayObserve('org-1', 'ws-1')).toBe(true);
    // Not cached yet: it may.
    expect(outbox(Promise.resolve([])).mayObserve('org-1', 'ws-1')).toBe(true);
  });

  it('leaves no unhandled rejection behind when the destinations it starts to read fail (observe reports that)', async () => {
    const unhandled: unknown[] = [];
    const note = (reason: unknown) => { unhandled.push(reason); };
    process.on('unhandledRejection', note);
    try {
      const failing = new ObservabilityOutbox({ destinations: { destinationsFor: () => Promise.reject(new Error('throttled')) }, queue: { send: async () => [] }, log: quiet() });
      expect(failing.mayObserve('org-1', 'ws-1')).toBe(true);
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', note);
    }
  });

  it('sends one message per destination that takes the generation, ten to a batch', async () => {
    const batches: string[][] = [];
    const outbox = new ObservabilityOutbox({
      destinations: { destinationsFor: () => Promise.resolve([destination({ id: 'a' }), destination({ id: 'b', privacy_mode: true }), destination({ id: 'c', enabled: false })]) },
      queue: { send: async (bodies) => { batches.push([...bodies]); return []; } },
      log: quiet(),
    });
    outbox.shared = true;
    const sent = await Promise.all(Array.from({ length: 6 }, (_, index) => outbox.observe('org-1', 'ws-1', () => facts({ record: record({ id: `gen-${index}` }) }))));
    expect(sent).toHaveLength(6);
    expect(batches.map((batch) => batch.length)).toEqual([10, 2]);
    const messages = batches.flat().map((body) => JSON.parse(body) as DeliveryMessage);
    expect(messages.filter((entry) => entry.destination_id === 'a')).toHaveLength(6);
    expect(messages.filter((entry) => entry.destination_id === 'b').every((entry) => entry.generation.input === undefined)).toBe(true);
  });

  it('logs a batch the queue refused, and resolves all the same', async () => {
    const lines: string[] = [];
    const outbox = new ObservabilityOutbox({ destinations: { destinationsFor: () => [destination()] }, queue: { send: async () => { throw new Error('queue down'); } }, log: new Logger((line) => lines.push(line)) });
    await outbox.observe('org-1', 'ws-1', () => facts());
    expect(lines.join('\n')).toContain('observability deliveries not queued');
    expect(lines.join('\n')).toContain('gen-1795588529-abcdefghijkl00.11111111-1111-4111-8111-111111111111');
  });
});

describe('the outbox reading destinations', () => {
  it('reads them again when a read fails (the store throttled), and gives a generation up, logged, only after three', async () => {
    const batches: string[][] = [];
    const waits: number[] = [];
    let failures = 2;
    const lines: string[] = [];
    const outbox = new ObservabilityOutbox({
      destinations: { destinationsFor: () => (failures-- > 0 ? Promise.reject(new Error('throttled')) : Promise.resolve([destination()])) },
      queue: { send: async (bodies) => { batches.push([...bodies]); return []; } },
      log: new Logger((line) => lines.push(line)),
      sleep: async (ms) => { waits.push(ms); },
    });
    await outbox.observe('org-1', 'ws-1', () => facts());
    expect(batches.flat()).toHaveLength(1);
    expect(waits).toEqual([100, 400]);
    failures = 3;
    await outbox.observe('org-1', 'ws-1', () => facts());
    expect(batches.flat()).toHaveLength(1);
    expect(lines.join('\n')).toContain('observability destinations not read: generation not delivered');
  });
});

describe('the delivery worker', () => {
  const sqsRecord = (message: DeliveryMessage, receives: number, id: string): SQSRecord => ({
    messageId: id, receiptHandle: `receipt-${id}`, body: JSON.stringify(message),
    attributes: { ApproximateReceiveCount: String(receives), SentTimestamp: '0', SenderId: 's', ApproximateFirstReceiveTimestamp: '0' },
    messageAttributes: {}, md5OfBody: '', eventSource: 'aws:sqs', eventSourceARN: 'arn:aws:sqs:us-east-1:1:q', awsRegion: 'us-east-1',
  });
  const message = (destinationId: string, generationId: string): DeliveryMessage => ({ v: 1, destination_id: destinationId, org_id: 'org-1', generation: delivered(destination(), facts({ record: record({ id: generationId }) })) });

  it('doubles the wait at each receive, up to 15 minutes', () => {
    expect([1, 2, 3, 4, 5].map((n) => backoffSeconds(n, 5))).toEqual([5, 10, 20, 40, 80]);
    expect(backoffSeconds(12, 5)).toBe(900);
    expect(backoffSeconds(3, 0)).toBe(0);
  });

  it('deletes what was delivered, names and delays what failed, and drops deliveries to deleted or disabled destinations', async () => {
    const statuses = new Map([['gen-ok', 200], ['gen-busy', 503], ['gen-gone', 404]]);
    const fetched: string[] = [];
    const fetchStub = (async (_url: string, init: { body: string }) => {
      const id = (JSON.parse(init.body) as { data: { generation_id: string } }).data.generation_id;
      fetched.push(id);
      return new Response('', { status: statuses.get(id) ?? 200 });
    }) as unknown as typeof fetch;
    const release = jest.fn(async () => ({ secret: 'whsec_x' }));
    const delayed: Array<{ receiptHandle: string; seconds: number }> = [];
    const lines: string[] = [];
    const event: SQSEvent = {
      Records: [
        sqsRecord(message(destination().id, 'gen-ok'), 1, 'm1'),
        sqsRecord(message(destination().id, 'gen-busy'), 3, 'm2'),
        sqsRecord(message(destination().id, 'gen-gone'), 6, 'm3'),
        sqsRecord(message('22222222-2222-4222-8222-222222222222', 'gen-disabled'), 1, 'm4'),
        sqsRecord(message('33333333-3333-4333-8333-333333333333', 'gen-deleted'), 1, 'm5'),
        { ...sqsRecord(message(destination().id, 'x'), 1, 'm6'), body: 'not json' },
      ],
    };
    const reply = await handleDeliveries(event, {
      destinations: { destinationsFor: () => [destination(), destination({ id: '22222222-2222-4222-8222-222222222222', enabled: false })], invalidate: () => undefined },
      allowPrivateHosts: false,
      secrets: { release },
      queue: { delay: async (messages) => { delayed.push(...messages); } },
      log: new Logger((line) => lines.push(line)),
      retryBaseSeconds: 2,
      fetch: fetchStub,
    });
    expect(reply.batchItemFailures.map((failure) => failure.itemIdentifier).sort()).toEqual(['m2', 'm3']);
    expect(fetched.sort()).toEqual(['gen-busy', 'gen-gone', 'gen-ok']);
    // One release of the destination's secrets for the whole batch.
    expect(release).toHaveBeenCalledTimes(1);
    expect(delayed.sort((a, b) => a.receiptHandle.localeCompare(b.receiptHandle))).toEqual([{ receiptHandle: 'receipt-m2', seconds: 8 }, { receiptHandle: 'receipt-m3', seconds: 64 }]);
    expect(lines.join('\n')).toContain('failed for the last time: it goes to the dead-letter queue');
    expect(lines.join('\n')).toContain('not understood: dropped');
  });
});

describe('review hardening', () => {
  it('keeps a message within the queue\'s limit whatever the trace carries, and in ASCII that parses back to the same text', () => {
    const huge = { ...facts(), trace: { trace_id: 't'.repeat(100_000), ...Object.fromEntries(Array.from({ length: 100 }, (_, index) => [`k${index}`, 'v'.repeat(5_000)])) } };
    const message: DeliveryMessage = { v: 1, destination_id: 'd', org_id: 'o', generation: delivered(destination(), huge) };
    const body = messageBody(message);
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
    expect((JSON.parse(body) as DeliveryMessage).generation.truncated).toBe(true);
    const emoji: DeliveryMessage = { v: 1, destination_id: 'd', org_id: 'o', generation: delivered(destination(), facts({ output: { text: 'Paris 🇫🇷 \uFFFE ça' } })) };
    const ascii = messageBody(emoji);
    expect(/^[\x20-\x7e]*$/.test(ascii)).toBe(true);
    expect((JSON.parse(ascii) as DeliveryMessage).generation.output!.text).toBe('Paris 🇫🇷 \uFFFE ça');
  });

  it('splits the outbox\'s batches by bytes as well as by count, and logs only what SQS refused', async () => {
    const batches: number[][] = [];
    const lines: string[] = [];
    const outbox = new ObservabilityOutbox({
      destinations: { destinationsFor: () => [destination()] },
      queue: { send: async (bodies) => { batches.push(bodies.map((body) => Buffer.byteLength(body))); return batches.length === 1 ? [1] : []; } },
      log: new Logger((line) => lines.push(line)),
    });
    outbox.shared = true;
    const big = 'x'.repeat(7_000);
    await Promise.all(Array.from({ length: 8 }, (_, index) => outbox.observe('org-1', 'ws-1', () => facts({ record: record({ id: `gen-${index}` }), output: { text: big.repeat(10) } }))));
    expect(batches.flat()).toHaveLength(8);
    for (const batch of batches) expect(batch.reduce((sum, size) => sum + size, 0)).toBeLessThanOrEqual(256 * 1024);
    expect(batches.length).toBeGreaterThan(1);
    expect(lines.join('\n')).toContain('SQS refused them');
    expect(lines.join('\n')).toContain('gen-1.');
    expect(lines.join('\n')).not.toContain('gen-0.');
  });

  it('moves a delivery no retry can help to the dead-letter queue at once', async () => {
    const moved: string[] = [];
    const delayed: unknown[] = [];
    const fetchStub = (async () => new Response('', { status: 404 })) as unknown as typeof fetch;
    const message: DeliveryMessage = { v: 1, destination_id: destination().id, org_id: 'org-1', generation: delivered(destination(), facts()) };
    const reply = await handleDeliveries({
      Records: [{
        messageId: 'm1', receiptHandle: 'r1', body: JSON.stringify(message), attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 's', ApproximateFirstReceiveTimestamp: '0' },
        messageAttributes: {}, md5OfBody: '', eventSource: 'aws:sqs', eventSourceARN: 'arn', awsRegion: 'us-east-1',
      }],
    }, {
      destinations: { destinationsFor: () => [destination()], invalidate: () => undefined },
      secrets: { release: async () => ({ secret: 'whsec_x' }) },
      queue: { delay: async (messages) => { delayed.push(...messages); } },
      deadLetters: { send: async (bodies) => { moved.push(...bodies); } },
      allowPrivateHosts: false,
      log: quiet(),
      retryBaseSeconds: 1,
      fetch: fetchStub,
    });
    expect(reply.batchItemFailures).toEqual([]);
    expect(moved).toEqual([JSON.stringify(message)]);
    expect(delayed).toEqual([]);
  });

  it('reads the destination list again before dropping a delivery to a destination it does not know', async () => {
    let reads = 0;
    const fetched: string[] = [];
    const fetchStub = (async (url: string) => { fetched.push(url); return new Response('', { status: 200 }); }) as unknown as typeof fetch;
    const fresh = destination({ id: '44444444-4444-4444-8444-444444444444' });
    const message: DeliveryMessage = { v: 1, destination_id: fresh.id, org_id: 'org-1', generation: delivered(fresh, facts()) };
    let list: Destination[] = [];
    await handleDeliveries({
      Records: [{
        messageId: 'm1', receiptHandle: 'r1', body: JSON.stringify(message), attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 's', ApproximateFirstReceiveTimestamp: '0' },
        messageAttributes: {}, md5OfBody: '', eventSource: 'aws:sqs', eventSourceARN: 'arn', awsRegion: 'us-east-1',
      }],
    }, {
      destinations: { destinationsFor: () => { reads += 1; return list; }, invalidate: () => { list = [fresh]; } },
      secrets: { release: async () => ({ secret: 'whsec_x' }) },
      allowPrivateHosts: false, log: quiet(), retryBaseSeconds: 1, fetch: fetchStub,
    });
    expect(reads).toBe(2);
    expect(fetched).toEqual(['https://hooks.example.com/in']);
  });

  it('refuses, at connection time, a host name that resolves to a private address', async () => {
    const refused = await new Promise<Error | null>((resolve) => publicLookup('localhost', { all: true }, (err) => resolve(err)));
    expect(refused?.name).toBe('RefusedAddressError');
    await expect(send({ url: 'http://localhost.:9/x', method: 'POST', headers: {}, body: '{}' }, { timeoutMs: 1000, allowPrivateHosts: false })).rejects.toThrow(/private or loopback/);
    await expect(send({ url: 'http://[::ffff:127.0.0.1]:9/x', method: 'POST', headers: {}, body: '{}' }, { timeoutMs: 1000, allowPrivateHosts: false })).rejects.toThrow(/private or loopback/);
  });

  it('gives up an S3 export that hangs after its timeout', async () => {
    const sockets: Socket[] = [];
    const hole = createNetServer((socket) => { sockets.push(socket); });
    await new Promise<void>((resolve) => hole.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(hole.address() as AddressInfo).port}`;
    const s3 = destination({ type: 's3', config: { bucketName: 'traces', prefix: 'p', pathTemplate: '{prefix}', endpoint, region: 'us-east-1', accessKeyId: 'a' }, secret_fields: ['secretAccessKey'], host: '127.0.0.1' });
    const started = Date.now();
    const outcome = await deliver(s3, { v: 1, destination_id: s3.id, org_id: 'org-1', generation: delivered(s3, facts()) }, {
      secrets: async () => ({ secretAccessKey: 'b' }), allowPrivateHosts: true, timeoutMs: 300,
    });
    expect(outcome).toMatchObject({ ok: false, retryable: true, error: 'timed out' });
    expect(Date.now() - started).toBeLessThan(5000);
    for (const socket of sockets) socket.destroy();
    hole.close();
  });
});
