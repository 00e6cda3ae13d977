// Observability destinations against `npm start` (its SQS stand-in, its delivery mapping in the batch runner),
// through @openrouter/sdk: CRUD in the shapes the SDK parses, secrets masked, a connectivity test, and the
// delivery guarantees: a webhook receives exactly one accepted, signed delivery per generation under 200
// parallel requests although it refused the first attempts; a receiver that never answers ends in the
// dead-letter queue; and no reply waited for either.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OpenRouter } from '@openrouter/sdk';
import { BadRequestResponseError, NotFoundResponseError } from '@openrouter/sdk/models/errors';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';
import { generateKeyText } from '../../lambdas/keys/key-format.js';
import { objectOf } from '../support/sdk-shapes.js';
import { waitFor } from '../support/wait.js';

const ADMIN_KEY = generateKeyText();
const MAX_RECEIVES = 3;
const DELIVERY_TIMEOUT_MS = 3000;
let gateway: GatewayProcess;
let admin: OpenRouter;

interface Received { at: number; headers: IncomingMessage['headers']; body: string }

/** A receiver: `answer` decides each request's status (undefined: never answer). */
async function receiver(answer: (body: string, attempt: number) => number | undefined): Promise<{ server: Server; url: string; received: Received[] }> {
  const received: Received[] = [];
  const attempts = new Map<string, number>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (chunk: Buffer) => { body += chunk.toString(); });
    req.on('end', () => {
      received.push({ at: Date.now(), headers: req.headers, body });
      const id = String(req.headers['idempotency-key']);
      const attempt = (attempts.get(id) ?? 0) + 1;
      attempts.set(id, attempt);
      const status = answer(body, attempt);
      if (status !== undefined) res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received };
}

function signatureValid(secret: string, entry: Received): boolean {
  const header = String(entry.headers['x-gateway-signature'] ?? '');
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!match) return false;
  const expected = createHmac('sha256', secret).update(`${match[1]}.${entry.body}`).digest();
  return timingSafeEqual(expected, Buffer.from(match[2]!, 'hex')) && Math.abs(Number(match[1]) - entry.at / 1000) < 300;
}

const servers: Server[] = [];

beforeAll(async () => {
  gateway = await startGatewayProcess({
    GATEWAY_ADMIN_KEY: ADMIN_KEY,
    GATEWAY_INITIAL_CREDITS: '50',
    GATEWAY_OBSERVABILITY_RETRY_SECONDS: '1',
    GATEWAY_OBSERVABILITY_MAX_RECEIVES: String(MAX_RECEIVES),
    GATEWAY_OBSERVABILITY_TIMEOUT_MS: String(DELIVERY_TIMEOUT_MS),
  }, 150_000);
  admin = new OpenRouter({ apiKey: ADMIN_KEY, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
}, 150_000);

afterAll(async () => {
  await gateway?.stop();
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
});

describe('observability destinations through @openrouter/sdk', () => {
  it('creates, lists, reads, updates, tests and deletes destinations; secrets only masked after creation', async () => {
    const hook = await receiver(() => 204);
    servers.push(hook.server);
    const created = await admin.observability.create({
      createObservabilityDestinationRequest: {
        name: 'SDK hook', type: 'webhook', config: { url: hook.url, headers: { authorization: 'Bearer receiver-token-0123456789' } }, samplingRate: 0.5, privacyMode: true,
      },
    });
    expect(created.data).toMatchObject({ type: 'webhook', name: 'SDK hook', samplingRate: 0.5, privacyMode: true, enabled: true, regions: ['global'] });
    const { id, config } = created.data as { id: string; config: { headers: Record<string, string> } };
    expect(config.headers).toEqual({ authorization: 'Bear...6789' });

    const listed = await admin.observability.list();
    expect(listed.result.data.map((entry) => (entry as { id: string }).id)).toContain(id);
    // The raw reply of a webhook's creation shows the signing secret the gateway made, once.
    const raw = await fetch(`${gateway.baseUrl}/observability/destinations`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'raw', type: 'webhook', config: { url: hook.url } }),
    });
    const made = await raw.json() as { data: { id: string; config: { secret: string } } };
    expect(raw.status).toBe(201);
    expect(made.data.config.secret).toMatch(/^whsec_[A-Za-z0-9_-]{32}$/);
    const again = await (await fetch(`${gateway.baseUrl}/observability/destinations/${made.data.id}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).json() as typeof made;
    expect(again.data.config.secret).toBe(`${made.data.config.secret.slice(0, 4)}...${made.data.config.secret.slice(-4)}`);
    await admin.observability.delete({ id: made.data.id });
    const read = await admin.observability.get({ id });
    expect(JSON.stringify(read)).not.toContain('receiver-token');
    expect(JSON.stringify(read)).not.toMatch(/whsec_[A-Za-z0-9_-]{10}/);

    const updated = await admin.observability.update({ id, updateObservabilityDestinationRequest: { name: 'renamed', samplingRate: 1, config: { headers: { authorization: 'Bear...6789' } } } });
    expect(updated.data).toMatchObject({ name: 'renamed', samplingRate: 1 });

    // The connectivity test sends one signed "test" event with the header the update kept.
    const tested = await fetch(`${gateway.baseUrl}/observability/destinations/${id}/test`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(await tested.json()).toMatchObject({ data: { ok: true, status_code: 204, error: null } });
    expect(hook.received).toHaveLength(1);
    expect(hook.received[0]!.headers).toMatchObject({ 'x-gateway-event': 'test', authorization: 'Bearer receiver-token-0123456789' });

    await expect(admin.observability.create({ createObservabilityDestinationRequest: { name: 'x', type: 'datadog', config: {} } })).rejects.toBeInstanceOf(BadRequestResponseError);
    await expect(admin.observability.create({ createObservabilityDestinationRequest: { name: 'x', type: 'langfuse', config: { publicKey: 'pk' } } })).rejects.toBeInstanceOf(BadRequestResponseError);
    expect(await admin.observability.delete({ id })).toEqual({ deleted: true });
    await expect(admin.observability.get({ id })).rejects.toBeInstanceOf(NotFoundResponseError);
  });
});

describe('deliveries', () => {
  it('delivers one accepted, signed webhook per generation under 200 parallel requests after failed attempts; a dead receiver ends in the dead-letter queue; no reply waits', async () => {
    // The flaky receiver refuses each delivery's first two attempts; the dead one never answers; the gone one
    // answers 410, which no retry can help.
    const flaky = await receiver((_body, attempt) => (attempt <= 2 ? 503 : 200));
    const dead = await receiver(() => undefined);
    const gone = await receiver(() => 410);
    servers.push(flaky.server, dead.server, gone.server);
    const busyKey = await admin.apiKeys.create({ requestBody: { name: 'observed' } });
    const quietKey = await admin.apiKeys.create({ requestBody: { name: 'observed by the dead receiver' } });
    // The caller's own signing secret (the SDK keeps only the config fields it knows, so a secret the gateway
    // makes is seen in the raw reply only: the first test reads it there).
    const secret = 'whsec_e2e-0123456789abcdef';
    const hook = (await admin.observability.create({
      createObservabilityDestinationRequest: { name: 'flaky', type: 'webhook', config: { url: flaky.url, secret }, apiKeyHashes: [busyKey.data.hash], broadcastGenerationCost: true },
    })).data as { id: string; config: Record<string, unknown> };
    expect(hook.config).toMatchObject({ url: flaky.url, method: 'POST' });
    await admin.observability.create({
      createObservabilityDestinationRequest: { name: 'dead', type: 'webhook', config: { url: dead.url }, apiKeyHashes: [quietKey.data.hash] },
    });
    await admin.observability.create({
      createObservabilityDestinationRequest: { name: 'gone', type: 'webhook', config: { url: gone.url }, apiKeyHashes: [quietKey.data.hash] },
    });

    const client = (key: string) => new OpenRouter({ apiKey: key, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
    const busy = client(busyKey.key);
    const quiet = client(quietKey.key);
    const timed = async <T>(reply: Promise<T>) => {
      const value = await reply;
      return { reply: objectOf(value as never) as { id: string }, at: Date.now() };
    };
    const replies = await Promise.all([
      // One with an emoji: the queue takes every character.
      ...Array.from({ length: 200 }, (_, index) => timed(busy.chat.send({ chatRequest: { model: 'simulator/echo', stream: false, messages: [{ role: 'user', content: `observed ${index}${index === 7 ? ' 🚀' : ''}` }] } }))),
      ...Array.from({ length: 10 }, (_, index) => timed(quiet.chat.send({ chatRequest: { model: 'simulator/echo', stream: false, messages: [{ role: 'user', content: `dead ${index}` }] } }))),
    ]);
    // No reply waited for a delivery: every reply of the dead receiver's generations was back before the first
    // attempt to deliver one to it could end (it never answers: an attempt ends at the delivery timeout).
    await waitFor(() => dead.received.length > 0, { timeoutMs: 30_000, what: 'the dead receiver\'s first delivery' });
    expect(Math.max(...replies.slice(200).map((entry) => entry.at))).toBeLessThan(dead.received[0]!.at + DELIVERY_TIMEOUT_MS);
    const ids = replies.slice(0, 200).map((entry) => entry.reply.id);
    const accepted = () => {
      const seen = new Map<string, number>();
      const attempts = new Map<string, number>();
      for (const entry of flaky.received) {
        const body = JSON.parse(entry.body) as { data: { generation_id: string } };
        attempts.set(body.data.generation_id, (attempts.get(body.data.generation_id) ?? 0) + 1);
        if ((attempts.get(body.data.generation_id) ?? 0) > 2) seen.set(body.data.generation_id, (seen.get(body.data.generation_id) ?? 0) + 1);
      }
      return seen;
    };
    await waitFor(() => accepted().size === 200, { timeoutMs: 60_000, what: 'an accepted delivery of each generation' });
    const seen = accepted();
    expect([...seen.keys()].sort()).toEqual([...ids].sort());
    expect([...seen.values()].every((count) => count === 1)).toBe(true);
    // Three attempts each (two refused), every one signed with the destination's secret, over the same body.
    expect(flaky.received).toHaveLength(600);
    expect(flaky.received.every((entry) => signatureValid(secret, entry))).toBe(true);
    const first = JSON.parse(flaky.received.find((entry) => entry.body.includes(ids[0]!))!.body) as { id: string; data: { model: string; cost: { total: number }; input: unknown } };
    expect(first).toMatchObject({ id: `${ids[0]}.${hook.id}`, data: { model: 'simulator/echo' } });
    expect(first.data.cost.total).toBeGreaterThan(0);

    // The dead receiver's deliveries: MAX_RECEIVES attempts each, then the dead-letter queue.
    const runtime = JSON.parse(readFileSync(join(gateway.dataDir, 'runtime.json'), 'utf8')) as { sqs_endpoint: string; observability_dead_letter_queue_url: string };
    const sqs = new SQSClient({ endpoint: runtime.sqs_endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const deadLetters = async () => Number((await sqs.send(new GetQueueAttributesCommand({ QueueUrl: runtime.observability_dead_letter_queue_url, AttributeNames: ['ApproximateNumberOfMessages'] }))).Attributes?.ApproximateNumberOfMessages ?? 0);
    // The gone receiver's: one attempt each, then at once the dead-letter queue.
    await waitFor(async () => (await deadLetters()) >= 20, { timeoutMs: 90_000, what: 'the dead and gone receivers\' deliveries in the dead-letter queue' });
    expect(await deadLetters()).toBe(20);
    expect(dead.received).toHaveLength(10 * MAX_RECEIVES);
    expect(gone.received).toHaveLength(10);
    expect(flaky.received.some((entry) => JSON.parse(entry.body).data.input[0].content[0].text === 'observed 7 🚀')).toBe(true);
    sqs.destroy();
  }, 180_000);

});
