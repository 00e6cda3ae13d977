// A request whose caches are cold (a new function instance, an organization idle for longer than the caches
// keep it) reads its key, then everything else it needs of its organization at once: its private endpoints,
// guardrails, BYOK credentials and workspace are read side by side, not one after another, and each once.
// The read capacity they consume is still the request's (its record's infrastructure cost).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestStore, type TestStore } from '../support/store.js';
import { createTenant } from '../support/tenants.js';
import { chatCompletion } from '../support/handler-calls.js';
import { startSimulator, type Simulator } from '../../bin/simulator/server.js';
import { startInvocation } from '../../lambdas/billing/infrastructure.js';
import type { GatewayDeps } from '../../lambdas/app/deps.js';

interface Read {
  what: string;
  started: number;
  ended: number;
}

let sim: Simulator;
let store: TestStore;
/** Every read the deps send, in the order they were sent; `ended` in the order their answers came. */
let reads: Read[] = [];
let clock = 0;

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
  store = await createTestStore({ SIMULATOR_URL: sim.url }, {
    client: (db) => {
      db.middlewareStack.add((next, context) => async (args) => {
        if (context.commandName !== 'GetItemCommand' && context.commandName !== 'QueryCommand') return next(args);
        // Marshalled or not, depending on the client the command was sent through.
        const text = (value: unknown) => String((value as { S?: string } | undefined)?.S ?? value);
        const input = args.input as { Key?: { sk: unknown }; ExpressionAttributeValues?: Record<string, unknown> };
        const read: Read = { what: input.Key ? text(input.Key.sk).replace(/#.*/, '#') : `${text(input.ExpressionAttributeValues?.[':prefix'])}*`, started: ++clock, ended: 0 };
        reads.push(read);
        try {
          return await next(args);
        } finally {
          read.ended = ++clock;
        }
      }, { step: 'initialize', name: 'recordReads' });
    },
  });
}, 60_000);

afterAll(async () => {
  await store?.drop();
  await sim?.close();
});

async function coldRequest(deps: GatewayDeps, key: string): Promise<{ reads: Read[]; readUnits: number }> {
  reads = [];
  const reply = await chatCompletion(deps, key, { model: 'simulator/echo', messages: [{ role: 'user', content: 'cold' }] }, startInvocation());
  expect(reply.status).toBe(200);
  const seen = reads;
  reads = [];
  await store.converge();
  const record = (await store.records()).find((entry) => entry.id === reply.id);
  return { reads: seen, readUnits: record!.infra!.dynamodb_read_units };
}

describe('a request with cold caches', () => {
  it('reads its organization\'s private endpoints, guardrails, BYOK credentials and workspace side by side, once each', async () => {
    const tenant = await createTenant(store.deps, 'organization', 'Cold Co');
    const { text } = await tenant.addKey('standard');
    const cached = store.depsWith({}, { keyCacheTtlMs: 60_000, workspaceCacheTtlMs: 60_000, credentialCacheTtlMs: 60_000 });

    const cold = await coldRequest(cached, text);
    const org = cold.reads.filter((read) => read.what !== 'KEY');
    expect(org.map((read) => read.what).sort()).toEqual(['BYOK#*', 'GR*', 'PE#*', 'WS#']);
    // All four were sent before the first answer came: one round trip after the key's, not four.
    const firstAnswer = Math.min(...org.map((read) => read.ended));
    expect(org.every((read) => read.started < firstAnswer)).toBe(true);
    // After the key's: the key was read first (it names the organization).
    const key = cold.reads.find((read) => read.what === 'KEY')!;
    expect(org.every((read) => read.started > key.ended)).toBe(true);

    // Warm: nothing is read.
    const warm = await coldRequest(cached, text);
    expect(warm.reads).toEqual([]);
    expect(warm.readUnits).toBe(0);

    // The read capacity the cold request spent on its key and workspace is on its record, as it is for the
    // deps that cache nothing (and read them one after another).
    const uncached = await coldRequest(store.deps, text);
    expect(uncached.reads.findIndex((read) => read.what === 'WS#')).toBeGreaterThan(uncached.reads.findIndex((read) => read.what === 'KEY'));
    expect(cold.readUnits).toBeGreaterThan(0);
    expect(cold.readUnits).toBe(uncached.readUnits);
  });
});
