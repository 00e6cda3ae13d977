// Observability destinations over DynamoDB Local, the local KMS and real HTTP receivers, through the real
// handlers: other organizations kept out of every route, config refusals, secrets sealed for one host (a
// move needs them again), and the whole path of a generation (the chat handler → the outbox → the delivery
// handler) to an OTLP collector, Langfuse's ingestion API and an S3 export (s3rver), with a guardrail's
// redaction carried into what is delivered.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { SQSEvent } from 'aws-lambda';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { CreateObservabilityDestinationResponse$inboundSchema, GetObservabilityDestinationResponse$inboundSchema, ListObservabilityDestinationsResponse$inboundSchema } from '@openrouter/sdk/models';
import { startSimulator, type Simulator } from '../../bin/simulator/server.js';
import { startLocalS3, type LocalS3 } from '../../bin/local/s3.js';
import { createTestStore, type TestStore } from '../support/store.js';
import { createTenant } from '../support/tenants.js';
import { chatCompletion, manage, type Json } from '../support/handler-calls.js';
import { ObservabilityOutbox } from '../../lambdas/observability/index.js';
import { handleObservabilityDeliveries } from '../../lambdas/handlers/observability-delivery.js';
import type { GatewayDeps } from '../../lambdas/app/deps.js';

let sim: Simulator;
let store: TestStore;
let deps: GatewayDeps;
let admin: string;
let user: { text: string; hash: string };
let otherAdmin: string;
let s3: LocalS3;
let s3Dir: string;
const queued: string[] = [];

interface Hit { path: string; headers: IncomingMessage['headers']; body: string }
let collector: Server;
let collectorUrl: string;
const hits: Hit[] = [];

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
  store = await createTestStore({ SIMULATOR_URL: sim.url, GATEWAY_OBSERVABILITY_PRIVATE_HOSTS: 'allow', GATEWAY_OBSERVABILITY_RETRY_SECONDS: '0' });
  deps = store.deps;
  // The queue is this list: what the outbox sends is handed to the delivery handler below, as SQS would.
  deps.engine.observability = new ObservabilityOutbox({ destinations: deps.observability.source, queue: { send: async (bodies) => { queued.push(...bodies); return []; } }, log: deps.log });
  const tenant = await createTenant(deps);
  admin = (await tenant.addKey('management')).text;
  const key = await tenant.addKey('standard', { name: 'observed key' });
  user = { text: key.text, hash: key.key.hash };
  otherAdmin = (await (await createTenant(deps, 'organization', 'Other')).addKey('management')).text;
  collector = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => { body += chunk.toString(); });
    req.on('end', () => {
      hits.push({ path: req.url ?? '', headers: req.headers, body });
      res.writeHead(req.url?.startsWith('/api/public/ingestion') ? 207 : 200, { 'content-type': 'application/json' }).end(JSON.stringify({ successes: [], errors: [] }));
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  collectorUrl = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  s3Dir = mkdtempSync(join(tmpdir(), 'observability-s3-'));
  s3 = await startLocalS3({ directory: s3Dir, host: '127.0.0.1', buckets: ['traces'] });
});

afterAll(async () => {
  await store?.drop();
  await sim?.close();
  collector?.close();
  await s3?.close();
  rmSync(s3Dir, { recursive: true, force: true });
});

const create = (body: Json, key = admin) => manage(deps, key, 'POST', '/observability/destinations', body);

/** Hands every queued message to the delivery handler, as the queue's mapping would. */
async function deliverQueued(): Promise<string[]> {
  const bodies = queued.splice(0);
  const event: SQSEvent = {
    Records: bodies.map((body, index) => ({
      messageId: `m${index}`, receiptHandle: `r${index}`, body, attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 's', ApproximateFirstReceiveTimestamp: '0' },
      messageAttributes: {}, md5OfBody: '', eventSource: 'aws:sqs', eventSourceARN: 'arn:aws:sqs:local:0:q', awsRegion: 'local',
    })),
  };
  const reply = await handleObservabilityDeliveries(event, deps);
  return reply.batchItemFailures.map((failure) => failure.itemIdentifier);
}

describe('observability routes', () => {
  it('answer in the shapes @openrouter/sdk parses, and keep other organizations out of every route', async () => {
    const created = await create({ name: 'collector', type: 'otel-collector', config: { endpoint: `${collectorUrl}/v1/traces`, headers: { 'x-api-key': 'collector-key-0123456789' } } });
    expect(created.status).toBe(201);
    expect(CreateObservabilityDestinationResponse$inboundSchema.safeParse(created.json).success).toBe(true);
    const id = created.json.data.id as string;
    expect(created.json.data.config.headers).toEqual({ 'x-api-key': 'coll...6789' });
    const listed = await manage(deps, admin, 'GET', '/observability/destinations');
    expect(ListObservabilityDestinationsResponse$inboundSchema.safeParse(listed.json).success).toBe(true);
    expect(GetObservabilityDestinationResponse$inboundSchema.safeParse((await manage(deps, admin, 'GET', `/observability/destinations/${id}`)).json).success).toBe(true);

    for (const [method, path, body] of [['GET', `/observability/destinations/${id}`], ['PATCH', `/observability/destinations/${id}`, { name: 'mine now' }], ['DELETE', `/observability/destinations/${id}`], ['POST', `/observability/destinations/${id}/test`]] as const) {
      const reply = await manage(deps, otherAdmin, method, path, body);
      expect({ method, path, status: reply.status }).toEqual({ method, path, status: 404 });
    }
    expect((await manage(deps, otherAdmin, 'GET', '/observability/destinations')).json).toEqual({ data: [], total_count: 0 });
    expect((await manage(deps, user.text, 'GET', '/observability/destinations')).status).toBe(403);
    expect((await manage(deps, admin, 'GET', `/observability/destinations/${id}`)).json.data.name).toBe('collector');
    expect((await manage(deps, admin, 'DELETE', `/observability/destinations/${id}`)).json).toEqual({ deleted: true });
  });

  it('refuses bad configs with a 400 naming the field, and private hosts where they are not allowed', async () => {
    const refused = async (body: Json, pattern: RegExp, key = admin, on = deps) => {
      const reply = await manage(on, key, 'POST', '/observability/destinations', body);
      expect(reply.status).toBe(400);
      expect(reply.json.error.message).toMatch(pattern);
    };
    await refused({ name: 'x', type: 'sentry', config: {} }, /body\.type: this gateway delivers to webhook, otel-collector, langfuse, s3/);
    await refused({ name: 'x', type: 'webhook', config: { url: 'not a url' } }, /body\.config\.url: must be an http\(s\) URL/);
    await refused({ name: 'x', type: 'webhook', config: { url: 'https://example.com', secret: 'short' } }, /body\.config\.secret: must be at least 16 characters/);
    await refused({ name: 'x', type: 'webhook', config: { url: 'https://example.com' }, sampling_rate: 0 }, /body\.sampling_rate/);
    await refused({ name: 'x', type: 'webhook', config: { url: 'https://example.com' }, api_key_hashes: [] }, /body\.api_key_hashes: must contain at least one key hash/);
    await refused({ name: 'x', type: 'webhook', config: { url: 'https://example.com' }, api_key_hashes: ['f'.repeat(64)] }, /body\.api_key_hashes: f{64} is not a key of this organization/);
    await refused({ name: 'x', type: 'webhook', config: { url: 'https://example.com' }, filter_rules: { groups: [{ rules: [{ field: 'model', operator: 'regex', value: '(a+)+\\1' }] }] } }, /the pattern/);
    await refused({ name: 'x', type: 'webhook', config: { url: 'https://example.com' }, regions: ['europe'] }, /only the global region/);
    const onAws = store.depsWith({ GATEWAY_OBSERVABILITY_PRIVATE_HOSTS: '' });
    await refused({ name: 'x', type: 'webhook', config: { url: 'http://169.254.169.254/latest/meta-data' } }, /169\.254\.169\.254 is a private or loopback address/, admin, onAws);
  });

  it('keeps a workspace to 5 destinations of a type when 8 are created at once', async () => {
    const racer = (await (await createTenant(deps, 'organization', 'Racers')).addKey('management')).text;
    const replies = await Promise.all(Array.from({ length: 8 }, (_, n) => create({ name: `r${n}`, type: 'otel-collector', config: { endpoint: 'https://collector.example.com/v1/traces' } }, racer)));
    expect(replies.map((reply) => reply.status).sort()).toEqual([201, 201, 201, 201, 201, 400, 400, 400]);
    for (const reply of replies.filter((r) => r.status === 400)) expect(reply.json.error.message).toMatch(/at most 5 otel-collector destinations/);
    expect((await manage(deps, racer, 'GET', '/observability/destinations')).json.total_count).toBe(5);
  });

  it('binds secrets to the destination\'s host: moving it needs them again, and the vault releases them to the new host only', async () => {
    const created = await create({ name: 'hook', type: 'webhook', config: { url: `${collectorUrl}/hook`, secret: 'first-secret-0123456789', headers: { authorization: 'Bearer abcdefghijklmnop' } } });
    const id = created.json.data.id as string;
    const moved = await manage(deps, admin, 'PATCH', `/observability/destinations/${id}`, { config: { url: 'http://localhost:9/hook' } });
    expect(moved.status).toBe(400);
    expect(moved.json.error.message).toMatch(/moves from 127\.0\.0\.1 to localhost; send its secret fields again \(secret, headers\.authorization\)/);
    // A new secret and a new header do not make up for a header sent back masked: that one would move along.
    const partly = await manage(deps, admin, 'PATCH', `/observability/destinations/${id}`, {
      config: { url: 'http://localhost:9/hook', secret: 'second-secret-0123456789', headers: { authorization: created.json.data.config.headers.authorization, 'x-any': '1' } },
    });
    expect(partly.status).toBe(400);
    expect(partly.json.error.message).toMatch(/send its secret fields again \(headers\.authorization\)/);
    const resent = await manage(deps, admin, 'PATCH', `/observability/destinations/${id}`, { config: { url: 'http://localhost:9/hook', secret: 'second-secret-0123456789', headers: { authorization: 'Bearer zyxwvutsrqponmlk' } } });
    expect(resent.status).toBe(200);
    expect(resent.json.data.config).toMatchObject({ url: 'http://localhost:9/hook', secret: 'seco...6789', headers: { authorization: 'Bear...nmlk' } });
    const vaultRef = { orgId: (await deps.keys.get(user.hash))!.org_id, workspaceId: created.json.data.workspace_id as string, purpose: 'observability' as const };
    const audit = await deps.vault!.auditTrail(vaultRef);
    // Released once for each PATCH that changed the config (to merge it), always to the host it was bound to then.
    expect(audit.map((entry) => [entry.action, entry.host])).toEqual([['release', '127.0.0.1'], ['release', '127.0.0.1'], ['release', '127.0.0.1']]);
    // The connectivity test now goes to the new host (nobody listens there) with the new secrets.
    const tested = await manage(deps, admin, 'POST', `/observability/destinations/${id}/test`);
    expect(tested.json.data).toMatchObject({ ok: false, status_code: null });
    const after = await deps.vault!.auditTrail(vaultRef);
    expect(after.at(-1)).toMatchObject({ action: 'release', host: 'localhost' });
    await manage(deps, admin, 'DELETE', `/observability/destinations/${id}`);
  });
});

describe('a generation on its way to the destinations', () => {
  it('is served and stored even when handing it to observability throws', async () => {
    const outbox = deps.engine.observability!;
    deps.engine.observability = { mayObserve: () => true, observe: () => { throw new Error('observability broke'); }, flush: async () => undefined, shared: false };
    try {
      const chat = await chatCompletion(deps, user.text, { model: 'simulator/echo', messages: [{ role: 'user', content: 'still served' }] });
      expect(chat.status).toBe(200);
      await deps.engine.pages.flush();
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect((await store.records()).map((entry) => entry.id)).toContain(chat.json.id);
      expect(store.logs.join('\n')).toContain('generation not handed to observability');
    } finally {
      deps.engine.observability = outbox;
    }
  });


  it('goes as an OTLP span, a Langfuse batch and an S3 object, with a guardrail\'s redaction, and not to a destination filtered away', async () => {
    const otel = await create({ name: 'otel', type: 'otel-collector', config: { endpoint: collectorUrl, headers: { 'x-api-key': 'collector-key-0123456789' } }, broadcast_generation_identity: true });
    const langfuse = await create({ name: 'langfuse', type: 'langfuse', config: { baseUrl: collectorUrl, publicKey: 'pk-lf-0123456789abcdef', secretKey: 'sk-lf-0123456789abcdef' }, broadcast_generation_cost: true });
    const bucket = await create({ name: 's3', type: 's3', config: { bucketName: 'traces', prefix: 'gw', pathTemplate: '{prefix}/{date}', endpoint: s3.endpoint, region: 'us-east-1', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }, privacy_mode: true });
    const filtered = await create({ name: 'anthropic only', type: 'webhook', config: { url: `${collectorUrl}/never` }, filter_rules: { groups: [{ rules: [{ field: 'provider', operator: 'equals', value: 'anthropic' }] }] } });
    for (const reply of [otel, langfuse, bucket, filtered]) expect(reply.status).toBe(201);
    const guardrail = await manage(deps, admin, 'POST', '/guardrails', { name: 'no emails', content_filter_builtins: [{ slug: 'email', action: 'redact' }] });
    await manage(deps, admin, 'POST', `/guardrails/${guardrail.json.data.id}/assignments/keys`, { key_hashes: [user.hash] });

    const chat = await chatCompletion(deps, user.text, {
      model: 'simulator/echo', messages: [{ role: 'user', content: 'write to bob@example.com please' }], user: 'end-user-7',
      trace: { trace_id: 'order-1234', trace_name: 'orders', generation_name: 'reply', parent_span_id: 'step-2', team: 'billing' },
    });
    expect(chat.status).toBe(200);
    await deps.engine.pages.flush();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(queued.map((body) => JSON.parse(body).destination_id).sort()).toEqual([otel, langfuse, bucket].map((reply) => reply.json.data.id).sort());
    expect(await deliverQueued()).toEqual([]);

    const span = hits.find((hit) => hit.path === '/v1/traces')!;
    expect(span.headers['x-api-key']).toBe('collector-key-0123456789');
    const otlp = JSON.parse(span.body).resourceSpans[0].scopeSpans[0].spans[0];
    const attributes = Object.fromEntries(otlp.attributes.map((entry: { key: string; value: Record<string, unknown> }) => [entry.key, Object.values(entry.value)[0]]));
    expect(otlp.name).toBe('reply');
    expect(attributes).toMatchObject({ 'gen_ai.request.model': 'simulator/echo', 'gen_ai.response.id': chat.json.id, 'user.id': 'end-user-7', 'metadata.team': 'billing' });
    expect(attributes['gen_ai.input.messages']).toContain('[REDACTED:EMAIL]');
    expect(attributes['gen_ai.input.messages']).not.toContain('bob@example.com');

    const ingestion = hits.find((hit) => hit.path === '/api/public/ingestion')!;
    expect(ingestion.headers.authorization).toBe(`Basic ${Buffer.from('pk-lf-0123456789abcdef:sk-lf-0123456789abcdef').toString('base64')}`);
    const batch = JSON.parse(ingestion.body).batch;
    expect(batch[1].body).toMatchObject({ id: chat.json.id, traceId: 'order-1234', parentObservationId: 'step-2', name: 'reply' });
    expect(batch[1].body.costDetails.total).toBeGreaterThan(0);
    expect(hits.some((hit) => hit.path === '/never')).toBe(false);

    const client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
    const listedObjects = await client.send(new ListObjectsV2Command({ Bucket: 'traces' }));
    const key = `gw/${new Date().toISOString().slice(0, 10)}/${chat.json.id}.json`;
    expect(listedObjects.Contents?.map((object) => object.Key)).toEqual([key]);
    const object = JSON.parse(await (await client.send(new GetObjectCommand({ Bucket: 'traces', Key: key }))).Body!.transformToString()) as Json;
    // Privacy mode: the facts without the texts.
    expect(object).toMatchObject({ generation_id: chat.json.id, model: 'simulator/echo' });
    expect(object.input).toBeUndefined();
    expect(object.output).toBeUndefined();
    client.destroy();
  });
});
