// runGeneration's hold lifecycle with fakes for the ledger and the adapters: the hold is reserved once and
// then settled or released exactly once, whatever happens (every candidate failing, success, the consumer
// stopping a stream or aborting it mid-way, a middleware that throws), and middleware runs in order.
import type { Readable } from 'node:stream';
import { describe, expect, it, jest } from '@jest/globals';
import { chatRequest, fakeEngineDeps, FakePages } from '../support/engine-fakes.js';
import { buildCatalog, catalogFileSchema } from '../../lambdas/catalog/catalog-config.js';
import type { CatalogEndpoint } from '../../lambdas/catalog/types.js';
import { httpErrorOf } from '../../lambdas/platform/http/errors.js';
import { DomainError, UpstreamError, ClientClosedError } from '../../lambdas/platform/errors.js';
import { DEFAULT_ENGINE_CONFIG, type Caller, type EngineDeps } from '../../lambdas/inference/engine.js';
import type { InferenceRequest } from '../../lambdas/inference/inference-request.js';
import type { GenerationMiddleware } from '../../lambdas/inference/middleware.js';
import { runGeneration, type GenerationEvent, type GenerationStream } from '../../lambdas/inference/run-generation.js';
import { journalProvisional } from '../../lambdas/inference/settlement.js';
import { createInferenceOperations } from '../../lambdas/inference/operations.js';
import { serviceMetadata } from '../../lambdas/inference/service-metadata.js';
import { ChatStreamWriter } from '../../lambdas/inference/formats/to-chat.js';
import type { GatewayRequest } from '../../lambdas/platform/http/request.js';
import type { Principal } from '../../lambdas/platform/http/auth.js';
import type { Hold } from '../../lambdas/billing/ledger.js';
import type { HoldRef } from '../../lambdas/billing/ledger-repository.js';
import type { ApiKey } from '../../lambdas/keys/types.js';
import { ProviderError } from '../../lambdas/providers/provider-error.js';
import type { GenerationRequest, GenerationResult, ProviderAdapter, StreamEvent } from '../../lambdas/providers/types.js';

const catalog = buildCatalog(catalogFileSchema.parse({
  models: ['alpha', 'beta'].map((provider) => ({
    id: `m/${provider}`,
    endpoints: [{
      provider, adapter: 'openai-chat', base_url: `https://${provider}.example/v1`, upstream_model: `${provider}-upstream`,
      pricing: { prompt: '0.000001', completion: '0.000002' }, context_length: 32768,
    }],
  })),
}));

const usage = { input_tokens: 10, output_tokens: 5, cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 };
const result = (text: string): GenerationResult => ({ text, tool_calls: [], finish_reason: 'stop', usage });

/** What each provider does when called: answer, fail, or stream until told otherwise. */
interface Behaviour {
  generate?: (request: GenerationRequest, signal: AbortSignal) => Promise<GenerationResult>;
  stream?: (request: GenerationRequest, signal: AbortSignal) => AsyncIterable<StreamEvent>;
}

const failing = (status: number): Behaviour => ({
  generate: async () => { throw new ProviderError({ provider: 'upstream', kind: 'http', status, message: `upstream said ${status}` }); },
  // eslint-disable-next-line require-yield
  stream: async function* () { throw new ProviderError({ provider: 'upstream', kind: 'http', status, message: `upstream said ${status}` }); },
});

/** Streams `first`, then waits until the attempt is aborted (the adapters report that as an aborted error). */
const stalling = (first: string, closed: { value: boolean }): Behaviour => ({
  stream: async function* (_request, signal) {
    try {
      yield { type: 'text-delta', delta: first };
      await new Promise((_resolve, reject) => {
        const aborted = () => reject(new ProviderError({ provider: 'alpha', kind: 'aborted', status: 499, message: 'aborted' }));
        if (signal.aborted) aborted();
        else signal.addEventListener('abort', aborted, { once: true });
      });
    } finally {
      closed.value = true;
    }
  },
});

const streaming = (...deltas: string[]): Behaviour => ({
  stream: async function* () {
    for (const delta of deltas) yield { type: 'text-delta', delta };
    yield { type: 'finish', finish_reason: 'stop', usage };
  },
});

class FakeLedger {
  readonly reserved: string[] = [];
  readonly released: HoldRef[] = [];
  readonly pages = new FakePages();

  async reserve(generationId: string): Promise<Hold> {
    this.reserved.push(generationId);
    return { generationId, orgId: 'org-1', workspaceId: 'ws-1', keyHash: 'k', amount: 1_000_000n, writeUnits: 1, attempts: 1, readUnits: 0 };
  }

  /** Nothing to read ahead: reserve() reads no workspace. */
  warmWorkspace(): void {}

  async release(hold: HoldRef) {
    this.released.push(hold);
    return { outcome: 'released' as const, writeUnits: 1, attempts: 1 };
  }

  /** Records handed to the page writer (each settles its hold when the aggregator applies it). */
  get settled() {
    return this.pages.added;
  }

  /** How the hold ended, one entry per ending. */
  get endings(): string[] {
    return [...this.released.map(() => 'released'), ...this.settled.map((entry) => `settled ${String(entry.record?.status)}`)];
  }
}

function setup(behaviours: Record<string, Behaviour>) {
  const ledger = new FakeLedger();
  const calls: string[] = [];
  const adapters = {
    async get(endpoint: CatalogEndpoint): Promise<ProviderAdapter> {
      const behaviour = behaviours[endpoint.provider];
      if (!behaviour) throw new Error(`no behaviour for ${endpoint.provider}`);
      return {
        provider: endpoint.provider,
        generate: (request, options) => { calls.push(endpoint.provider); return behaviour.generate!(request, options!.signal!); },
        stream: (request, options) => { calls.push(endpoint.provider); return behaviour.stream!(request, options!.signal!); },
      };
    },
  };
  let time = 1_000_000;
  // No retries: each failing candidate is tried once.
  const deps = fakeEngineDeps({
    catalog, adapters, ledger, pages: ledger.pages,
    config: { retry: { ...DEFAULT_ENGINE_CONFIG.retry, attemptsPerEndpoint: 1 } },
    now: () => time,
    sleep: async (ms) => { time += ms; },
  });
  return { deps, ledger, calls };
}

function inference(overrides: Partial<InferenceRequest> = {}): InferenceRequest {
  return chatRequest(['m/alpha', 'm/beta'], overrides);
}

const caller: Caller = { orgId: 'org-1', workspaceId: 'ws-1', keyHash: 'a'.repeat(64), key: {} as ApiKey };
const errorStatus = (error: DomainError) => httpErrorOf(error).status;
/** Lets the settlement's promise chain run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

async function collect(stream: GenerationStream): Promise<GenerationEvent[]> {
  const out: GenerationEvent[] = [];
  for await (const event of stream) out.push(event);
  return out;
}

describe('runGeneration, buffered', () => {
  it('settles the hold once, at the generation\'s cost, on success', async () => {
    const { deps, ledger } = setup({ alpha: { generate: async () => result('done') } });
    const run = runGeneration({ request: inference(), caller, deps, stream: false, errorStatus });
    const outcome = await run.result;
    expect(outcome.result.text).toBe('done');
    expect(outcome.cost.total).toBe(20_000n);
    expect(ledger.reserved).toEqual([run.trace.generationId]);
    expect(ledger.endings).toEqual(['settled completed']);
    expect(ledger.settled[0]!.charge).toEqual({ credits: 20_000n, byok: 0n });
  });

  it('releases the hold exactly once when the provider fails on every candidate', async () => {
    const { deps, ledger, calls } = setup({ alpha: failing(503), beta: failing(500) });
    const run = runGeneration({ request: inference(), caller, deps, stream: false, errorStatus });
    const error = await run.result.catch((err: unknown) => err);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(httpErrorOf(error as DomainError).status).toBe(502);
    expect(calls).toEqual(['alpha', 'beta']);
    await settle();
    expect(ledger.endings).toEqual(['released']);
  });

  it('hands the settlement to `defer` instead of waiting for it', async () => {
    const { deps, ledger } = setup({ alpha: { generate: async () => result('done') } });
    const deferred: Array<Promise<unknown>> = [];
    await runGeneration({ request: inference(), caller, deps, stream: false, errorStatus, defer: (work) => { deferred.push(work); } }).result;
    expect(deferred).toHaveLength(1);
    await Promise.all(deferred);
    expect(ledger.endings).toEqual(['settled completed']);
  });

  it('refuses new work while shutting down, before anything is reserved', () => {
    const { deps, ledger } = setup({ alpha: { generate: async () => result('never') } });
    deps.shutdown.trigger();
    expect(() => runGeneration({ request: inference(), caller, deps, stream: false, errorStatus })).toThrow('The gateway is shutting down; retry the request');
    expect(ledger.reserved).toEqual([]);
  });
});

/** Waits until aborted, then rejects as the HTTP client does: `unsent` when the request had not left the process. */
const awaitingAbort = (unsent: boolean): Behaviour => ({
  generate: (_request, signal) => new Promise((_resolve, reject) => {
    signal.addEventListener('abort', () => reject(Object.assign(new Error('The operation was aborted'), { name: 'AbortError', ...(unsent ? { unsent: true } : {}) })), { once: true });
  }),
});

describe('runGeneration, client gone while upstream', () => {
  it.each([
    [false, 'charges the prompt of a request the provider was sent (settled cancelled, the provisional record replaced)', ['settled cancelled'], []],
    [true, 'releases the hold of a request aborted before it left the process (the provider never got it), withdrawing its provisional record', ['released'], ['withdrawn']],
  ] as const)('unsent %s: %s', async (unsent, _title, endings, withdrawals) => {
    const { deps, ledger } = setup({ alpha: awaitingAbort(unsent) });
    ledger.pages.journaled = true;
    const client = new AbortController();
    const run = runGeneration({ request: inference(), caller, deps, stream: false, errorStatus, signal: client.signal });
    await settle();
    expect(ledger.pages.provisionals).toHaveLength(1);
    client.abort(new Error('client gone'));
    await expect(run.result).rejects.toBeInstanceOf(DomainError);
    await settle();
    expect(ledger.endings).toEqual(endings);
    // The provisional record's withdrawal (the release's own one follows it, a no-op in a real journal).
    expect(ledger.pages.withdrawn.slice(0, 1).map(() => 'withdrawn')).toEqual(withdrawals);
  });
});

describe('runGeneration, client gone before its attempt went upstream', () => {
  it('releases the hold and journals nothing when the client leaves while the adapter is made ready (a customer key being opened)', async () => {
    const { deps, ledger, calls } = setup({ alpha: { generate: async () => result('done') } });
    ledger.pages.journaled = true;
    let ready!: () => void;
    const gate = new Promise<void>((resolve) => { ready = resolve; });
    const get = deps.adapters.get.bind(deps.adapters);
    deps.adapters.get = (async (...args: Parameters<typeof get>) => { await gate; return get(...args); }) as typeof deps.adapters.get;
    const client = new AbortController();
    const run = runGeneration({ request: inference(), caller, deps, stream: false, errorStatus, signal: client.signal });
    await settle();
    client.abort(new Error('client gone'));
    ready();
    await expect(run.result).rejects.toBeInstanceOf(DomainError);
    await settle();
    expect(ledger.endings).toEqual(['released']);
    expect(ledger.pages.provisionals).toEqual([]);
    // The provider was never called.
    expect(calls).toEqual([]);
  });
});

describe('runGeneration, streamed', () => {
  it('settles once when the stream ends, after its events and before its end event', async () => {
    const { deps, ledger } = setup({ alpha: streaming('hel', 'lo') });
    const run = runGeneration({ request: inference({ stream: true }), caller, deps, stream: true, errorStatus });
    const events = await collect(await run.result);
    expect(events.map((event) => event.type)).toEqual(['start', 'text-delta', 'text-delta', 'finish', 'end']);
    const end = events.at(-1) as Extract<GenerationEvent, { type: 'end' }>;
    expect(end).toMatchObject({ status: 'completed', failure: undefined, usage });
    expect(ledger.endings).toEqual(['settled completed']);
    expect(ledger.settled[0]!.record).toMatchObject({ streamed: true, usage_estimated: false });
  });

  it('releases the hold exactly once when every candidate fails before the first event', async () => {
    const { deps, ledger } = setup({ alpha: failing(503), beta: failing(429) });
    const stream = await runGeneration({ request: inference({ stream: true }), caller, deps, stream: true, errorStatus }).result;
    const error = await stream.next().catch((err: unknown) => err);
    expect(httpErrorOf(error as DomainError).status).toBe(429);
    // A stream that failed is over: stopping it afterwards ends nothing a second time.
    await stream.return(undefined);
    await settle();
    expect(ledger.endings).toEqual(['released']);
  });

  it('settles as cancelled, once, when the consumer aborts mid-stream, and stops the upstream call', async () => {
    const closed = { value: false };
    const { deps, ledger } = setup({ alpha: stalling('partial', closed) });
    const run = runGeneration({ request: inference({ stream: true }), caller, deps, stream: true, errorStatus });
    const stream = await run.result;
    const seen: GenerationEvent[] = [];
    for await (const event of stream) {
      seen.push(event);
      if (event.type === 'text-delta') run.abort(new Error('client disconnected'));
    }
    expect(seen.map((event) => event.type)).toEqual(['start', 'text-delta', 'end']);
    const end = seen.at(-1) as Extract<GenerationEvent, { type: 'end' }>;
    expect(end.status).toBe('cancelled');
    expect(end.failure).toBeInstanceOf(ClientClosedError);
    expect(closed.value).toBe(true);
    expect(ledger.endings).toEqual(['settled cancelled']);
    // What was produced is charged: the prompt and an estimate of the partial output.
    expect(ledger.settled[0]!.record).toMatchObject({ usage_estimated: true, error: { status: 499, message: 'Client closed the request' } });
  });

  it('settles as cancelled, once, when the consumer stops iterating, and closes the upstream call', async () => {
    const closed = { value: false };
    const { deps, ledger } = setup({ alpha: stalling('partial', closed) });
    const stream = await runGeneration({ request: inference({ stream: true }), caller, deps, stream: true, errorStatus }).result;
    for await (const event of stream) if (event.type === 'text-delta') break;
    expect(closed.value).toBe(true);
    expect(ledger.endings).toEqual(['settled cancelled']);
    expect(ledger.settled[0]!.record).toMatchObject({ status: 'cancelled', error: null });
  });

  it('releases the hold of a stream stopped before it was read: nothing was sent upstream', async () => {
    const { deps, ledger, calls } = setup({ alpha: streaming('never') });
    const stream = await runGeneration({ request: inference({ stream: true }), caller, deps, stream: true, errorStatus }).result;
    await stream.return(undefined);
    await stream.return(undefined);
    expect(calls).toEqual([]);
    expect(ledger.endings).toEqual(['released']);
  });

  it('reports the gateway\'s shutdown mid-stream as a failure (not a cancellation) and settles once', async () => {
    const closed = { value: false };
    const { deps, ledger } = setup({ alpha: stalling('partial', closed) });
    const stream = await runGeneration({ request: inference({ stream: true }), caller, deps, stream: true, errorStatus }).result;
    const seen: GenerationEvent[] = [];
    for await (const event of stream) {
      seen.push(event);
      if (event.type === 'text-delta') deps.shutdown.trigger();
    }
    const end = seen.at(-1) as Extract<GenerationEvent, { type: 'end' }>;
    expect(end.status).toBe('error');
    expect(end.failure?.message).toBe('The gateway is shutting down; retry the request');
    expect(ledger.endings).toEqual(['settled error']);
    expect(ledger.settled[0]!.record).toMatchObject({ error: { status: 503 } });
  });
});

describe('provisional records (a process that journals its records: npm start)', () => {
  it('journals, as each attempt goes upstream, what the request is charged should the process die: its prompt at an estimate, no output, from its hold; withdrawn when the attempt fails at the provider', async () => {
    const { deps, ledger } = setup({ alpha: failing(503), beta: streaming('hel', 'lo') });
    ledger.pages.journaled = true;
    const run = runGeneration({ request: inference({ stream: true }), caller, deps, stream: true, errorStatus });
    const stream = await run.result;
    const first = await stream.next();
    expect(first.value).toMatchObject({ type: 'start' });
    // One per attempt (alpha's, withdrawn when it failed, then beta's); the record itself is not added yet.
    expect(ledger.pages.provisionals.map((entry) => entry.record.provider)).toEqual(['alpha', 'beta']);
    expect(ledger.pages.withdrawn).toEqual([run.trace.generationId]);
    expect(ledger.settled).toEqual([]);
    const { record, claim } = ledger.pages.provisionals[1]!;
    expect(record).toMatchObject({
      id: run.trace.generationId, model: 'm/beta', provider: 'beta', streamed: true, status: 'error', finish_reason: 'error',
      usage_estimated: true, attempts: 2, first_token_ms: null, error: { status: 503, message: 'The gateway is shutting down; retry the request' },
      usage: { output_tokens: 0 }, reserved: 1_000_000n,
      // The failed attempt, and the one in flight, whose answer is not known yet.
      provider_responses: [{ provider: 'alpha', model: 'm/alpha', status: 503 }, { provider: 'beta', model: 'm/beta', status: null }],
    });
    expect(record.usage.input_tokens).toBeGreaterThan(0);
    // The estimate's prompt at the endpoint's price (0.000001 per token), nothing for output.
    expect(record.cost.total).toBe(BigInt(record.usage.input_tokens) * 1_000n);
    expect(claim).toEqual({ kind: 'hold', amount: 1_000_000n });
    // The stream ends as usual: its own record is added (it takes the provisional one's place), nothing more withdrawn.
    await collect(stream);
    expect(ledger.endings).toEqual(['settled completed']);
    expect(ledger.pages.withdrawn).toEqual([run.trace.generationId]);
  });

  it('journals a buffered request\'s attempt the same way (its provider may have answered when the process dies)', async () => {
    const buffered = setup({ alpha: { generate: async () => result('done') } });
    buffered.ledger.pages.journaled = true;
    const run = runGeneration({ request: inference(), caller, deps: buffered.deps, stream: false, errorStatus });
    await run.result;
    expect(buffered.ledger.pages.provisionals.map((entry) => [entry.record.id, entry.record.provider, entry.record.streamed])).toEqual([[run.trace.generationId, 'alpha', false]]);
    expect(buffered.ledger.endings).toEqual(['settled completed']);
    expect(buffered.ledger.pages.withdrawn).toEqual([]);
  });

  it('withdraws each attempt that failed at the provider (a request failing on all is released, nothing left standing); journals nothing without a journal', async () => {
    const failed = setup({ alpha: failing(503), beta: failing(500) });
    failed.ledger.pages.journaled = true;
    const stream = await runGeneration({ request: inference({ stream: true }), caller, deps: failed.deps, stream: true, errorStatus }).result;
    await expect(stream.next()).rejects.toBeInstanceOf(DomainError);
    await settle();
    expect(failed.ledger.endings).toEqual(['released']);
    expect(failed.ledger.pages.provisionals.map((entry) => entry.record.provider)).toEqual(['alpha', 'beta']);
    // Each failed attempt's, then the release's (a no-op in the journal once nothing stands).
    const id = failed.ledger.reserved[0]!;
    expect(failed.ledger.pages.withdrawn).toEqual([id, id, id]);

    const unjournaled = setup({ alpha: streaming('hi') });
    await collect(await runGeneration({ request: inference({ stream: true }), caller, deps: unjournaled.deps, stream: true, errorStatus }).result);
    expect(unjournaled.ledger.pages.provisionals).toEqual([]);
    expect(unjournaled.ledger.endings).toEqual(['settled completed']);
  });
});

describe('provisional records: what they claim', () => {
  it('claims from a lease what its settlement would (the charge, up to the draw), nothing of credits with BYOK, and nothing when unheld', async () => {
    const { deps, ledger } = setup({ alpha: streaming('x') });
    ledger.pages.journaled = true;
    const run = runGeneration({ request: inference({ stream: true }), caller, deps, stream: true, errorStatus });
    await collect(await run.result);
    const base = ledger.pages.provisionals[0]!;
    const prompt = base.record.cost.total;
    const candidate = run.trace.plan.candidates[0]!;
    const options = { request: inference({ stream: true }), caller, trace: run.trace, deps, candidate, streamed: true };
    const hold = { generationId: run.trace.generationId, orgId: 'org-1', workspaceId: 'ws-1', keyHash: 'k', amount: 1_000_000n, writeUnits: 0, attempts: 0, readUnits: 0 };
    journalProvisional({ ...options, hold: { ...hold, draw: { leaseId: 'lease-9', amount: 1_000_000n } } });
    journalProvisional({ ...options, hold: { ...hold, draw: { leaseId: 'lease-9', amount: prompt - 1n } } });
    journalProvisional({ ...options, candidate: { ...candidate, byok: { id: 'byok-1' } as never }, hold: { ...hold, draw: { leaseId: 'lease-9', amount: 1_000_000n } } });
    journalProvisional({ ...options, hold: { ...hold, amount: 0n, unheld: true } });
    expect(ledger.pages.provisionals.slice(1).map((entry) => [entry.claim, entry.record.is_byok])).toEqual([
      [{ kind: 'lease', leaseId: 'lease-9', amount: prompt }, false],
      [{ kind: 'lease', leaseId: 'lease-9', amount: prompt - 1n }, false],
      [{ kind: 'lease', leaseId: 'lease-9', amount: 0n }, true],
      [{ kind: 'none', amount: 0n }, false],
    ]);
  });

  it('is withdrawn when the stream\'s settlement fails before its record is added (the hold is released instead)', async () => {
    const { deps, ledger } = setup({ alpha: streaming('x') });
    ledger.pages.journaled = true;
    ledger.pages.add = () => { throw new Error('page writer broken'); };
    const run = runGeneration({ request: inference({ stream: true }), caller, deps, stream: true, errorStatus });
    await collect(await run.result).catch(() => undefined);
    await settle();
    expect(ledger.pages.provisionals).toHaveLength(1);
    expect(ledger.pages.withdrawn).toEqual([run.trace.generationId]);
    expect(ledger.endings).toEqual(['released']);
  });
});

describe('middleware', () => {
  it('applies transformParams in order, then wraps the call with the first middleware outermost', async () => {
    const { deps, ledger } = setup({ alpha: { generate: async () => result('from alpha') }, beta: { generate: async () => result('from beta') } });
    const log: string[] = [];
    const middleware = (name: string): GenerationMiddleware => ({
      transformParams: ({ params }) => {
        log.push(`${name} transform (${params.candidates.map((candidate) => candidate.endpoint.provider).join(',')})`);
        return name === 'first' ? { ...params, candidates: params.candidates.slice(1) } : params;
      },
      wrapGenerate: async ({ doGenerate }) => {
        log.push(`${name} before`);
        const generated = await doGenerate();
        log.push(`${name} after ${generated.result.text}`);
        return { ...generated, result: { ...generated.result, text: `${generated.result.text} (${name})` } };
      },
    });
    const outcome = await runGeneration({ request: inference(), caller, deps, stream: false, errorStatus, middleware: [middleware('first'), middleware('second')] }).result;
    expect(log).toEqual(['first transform (alpha,beta)', 'second transform (beta)', 'first before', 'second before', 'second after from beta', 'first after from beta (second)']);
    expect(outcome.result.text).toBe('from beta (second) (first)');
    expect(ledger.endings).toEqual(['settled completed']);
  });

  it('wraps the stream with the first middleware outermost, and may rewrite its events', async () => {
    const { deps, ledger } = setup({ alpha: streaming('a', 'b') });
    const log: string[] = [];
    const upper = (name: string): GenerationMiddleware => ({
      wrapStream: async ({ doStream }) => {
        log.push(name);
        const started = await doStream();
        async function* events() {
          for await (const event of started.events) yield event.type === 'text-delta' ? { ...event, delta: `${event.delta}${name}` } : event;
        }
        return { ...started, events: events() };
      },
    });
    const stream = await runGeneration({ request: inference({ stream: true }), caller, deps, stream: true, errorStatus, middleware: [upper('1'), upper('2')] }).result;
    const deltas = (await collect(stream)).flatMap((event) => (event.type === 'text-delta' ? [event.delta] : []));
    expect(log).toEqual(['1', '2']);
    expect(deltas).toEqual(['a21', 'b21']);
    expect(ledger.endings).toEqual(['settled completed']);
  });

  it('releases the hold once when a middleware throws around the call', async () => {
    const { deps, ledger, calls } = setup({ alpha: { generate: async () => result('never') } });
    const broken: GenerationMiddleware = { wrapGenerate: async () => { throw new Error('middleware bug'); } };
    const run = runGeneration({ request: inference(), caller, deps, stream: false, errorStatus, middleware: [broken] });
    await expect(run.result).rejects.toThrow('middleware bug');
    await settle();
    expect(calls).toEqual([]);
    expect(ledger.endings).toEqual(['released']);
  });

  it('releases the hold once when a stream middleware throws', async () => {
    const { deps, ledger } = setup({ alpha: streaming('never') });
    const broken: GenerationMiddleware = { wrapStream: async () => { throw new Error('middleware bug'); } };
    const stream = await runGeneration({ request: inference({ stream: true }), caller, deps, stream: true, errorStatus, middleware: [broken] }).result;
    await expect(stream.next()).rejects.toThrow('middleware bug');
    await settle();
    expect(ledger.endings).toEqual(['released']);
  });

  it('reserves nothing when transformParams refuses the request', async () => {
    const { deps, ledger } = setup({ alpha: { generate: async () => result('never') } });
    const refusing: GenerationMiddleware = { transformParams: async () => { throw new UpstreamError('No endpoint is available', { reason: 'unavailable' }); } };
    const error = await runGeneration({ request: inference(), caller, deps, stream: false, errorStatus, middleware: [refusing] }).result.catch((err: unknown) => err);
    expect(httpErrorOf(error as DomainError).status).toBe(502);
    expect(ledger.reserved).toEqual([]);
    expect(ledger.endings).toEqual([]);
  });
});

describe('the hold when the pipeline is misused or fails around the provider call', () => {
  it('settles what the provider served when a middleware throws after doGenerate: the usage is charged, nothing released', async () => {
    const { deps, ledger, calls } = setup({ alpha: { generate: async () => result('served') } });
    const late: GenerationMiddleware = { wrapGenerate: async ({ doGenerate }) => { await doGenerate(); throw new Error('middleware bug after the call'); } };
    const run = runGeneration({ request: inference(), caller, deps, stream: false, errorStatus, middleware: [late] });
    await expect(run.result).rejects.toThrow('middleware bug after the call');
    await settle();
    expect(calls).toEqual(['alpha']);
    expect(ledger.endings).toEqual(['settled cancelled']);
    expect(ledger.settled[0]!.charge).toEqual({ credits: 20_000n, byok: 0n });
    expect(ledger.settled[0]!.record).toMatchObject({ usage, usage_estimated: false });
  });

  it('closes the upstream stream and charges its prompt when a stream middleware throws after doStream', async () => {
    const closed = { value: false };
    const { deps, ledger } = setup({ alpha: stalling('partial', closed) });
    const late: GenerationMiddleware = { wrapStream: async ({ doStream }) => { await doStream(); throw new Error('middleware bug after the call'); } };
    const stream = await runGeneration({ request: inference({ stream: true }), caller, deps, stream: true, errorStatus, middleware: [late] }).result;
    await expect(stream.next()).rejects.toThrow('middleware bug after the call');
    await settle();
    expect(closed.value).toBe(true);
    expect(ledger.endings).toEqual(['settled cancelled']);
    expect(ledger.settled[0]!.record).toMatchObject({ provider: 'alpha', usage_estimated: true });
  });

  it('starts nothing upstream when next() follows return() at once on an unread stream', async () => {
    const { deps, ledger, calls } = setup({ alpha: streaming('never') });
    const stream = await runGeneration({ request: inference({ stream: true }), caller, deps, stream: true, errorStatus }).result;
    const returned = stream.return(undefined);
    const next = stream.next();
    await returned;
    expect(await next).toEqual({ done: true, value: undefined });
    await settle();
    expect(calls).toEqual([]);
    expect(ledger.endings).toEqual(['released']);
  });

  it('awaits a transformParams that returns a thenable other than a native promise', async () => {
    const { deps, ledger } = setup({ alpha: { generate: async () => result('from alpha') }, beta: { generate: async () => result('from beta') } });
    const thenable: GenerationMiddleware = {
      transformParams: ({ params }) => ({ then: (resolve: (value: typeof params) => void) => resolve({ ...params, candidates: params.candidates.slice(1) }) }) as unknown as Promise<typeof params>,
    };
    const outcome = await runGeneration({ request: inference(), caller, deps, stream: false, errorStatus, middleware: [thenable] }).result;
    expect(outcome.result.text).toBe('from beta');
    expect(ledger.endings).toEqual(['settled completed']);
  });

  it('hands the settlement to `defer` and unhooks the request with the end event, for a consumer that stops there', async () => {
    const { deps, ledger } = setup({ alpha: streaming('hel', 'lo') });
    const deferred: Array<Promise<unknown>> = [];
    const stream = await runGeneration({ request: inference({ stream: true }), caller, deps, stream: true, errorStatus, defer: (work) => { deferred.push(work); } }).result;
    let step = await stream.next();
    while (!step.done && step.value.type !== 'end') step = await stream.next();
    // No next() or return() after the end event.
    expect(deferred).toHaveLength(1);
    expect(deps.shutdown.listening).toBe(0);
    await Promise.all(deferred);
    expect(ledger.endings).toEqual(['settled completed']);
  });

  it('never releases a hold whose settlement has begun, even when recording failed attempts throws', async () => {
    let served = false;
    let clockCalls = 0;
    const { deps, ledger } = setup({ alpha: failing(503), beta: { generate: async () => { served = true; return result('done'); } } });
    const time = deps.clock().getTime();
    // After the provider served: the record's timestamp is fine, the failed attempts' hour is not.
    deps.clock = () => (served && ++clockCalls === 2 ? new Date(Number.NaN) : new Date(time));
    const outcome = await runGeneration({ request: inference(), caller, deps, stream: false, errorStatus }).result;
    expect(outcome.result.text).toBe('done');
    await settle();
    expect(ledger.endings).toEqual(['settled completed']);
  });

  it('shows no available endpoint in the trace when the BYOK credentials that must be used do not apply', async () => {
    const { deps, ledger } = setup({ alpha: { generate: async () => result('never') } });
    const onlyOther = {
      id: 'cred-1', org_id: 'org-1', provider: 'alpha', name: null, label: 'sk-…0000', disabled: false, is_fallback: false,
      is_required: false, is_byok_only: true, sort_order: 0, allowed_models: ['m/other'], allowed_user_ids: null, allowed_api_key_hashes: null,
      declared_zdr: null, workspace_id: null, sealed: '', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z',
    };
    deps.byok = { credentialsFor: async () => [onlyOther], warm: () => undefined, apiKey: async () => 'key', kmsCalls: 0 } as unknown as EngineDeps['byok'];
    const run = runGeneration({ request: inference({ models: ['m/alpha'] }), caller, deps, stream: false, errorStatus });
    const error = await run.result.catch((err: unknown) => err);
    expect((error as Error).message).toBe('No endpoint is available: the BYOK credentials that must be used do not apply to this request');
    expect(serviceMetadata(run.trace, undefined, deps).endpoints.available).toEqual([]);
    expect(ledger.reserved).toEqual([]);
  });
});

describe('the SSE reply (operations)', () => {
  const principal = { key: { org_id: 'org-1', workspace_id: 'ws-1', hash: 'a'.repeat(64) } as ApiKey, isManagement: false, readUnits: 0 } as Principal;
  const http = (): GatewayRequest => ({ method: 'POST', path: '/api/v1/chat/completions', headers: {}, query: {}, body: undefined, requestId: 'req-1', sourceIp: '127.0.0.1', host: 'localhost' });

  async function streamChat(deps: EngineDeps) {
    const operations = createInferenceOperations({ engine: deps });
    const body = { model: 'm/alpha', messages: [{ role: 'user', content: 'hello' }], stream: true };
    return operations.chatCompletions({ body, principal, request: http(), defer: undefined } as unknown as Parameters<typeof operations.chatCompletions>[0]);
  }

  /** The reply's text, and the error that cut it (none for a clean end). */
  function read(body: Readable): Promise<{ text: string; error: Error | undefined }> {
    return new Promise((resolve) => {
      let text = '';
      body.on('data', (chunk: Buffer | string) => { text += chunk.toString(); });
      body.on('end', () => resolve({ text, error: undefined }));
      body.on('error', (error) => resolve({ text, error }));
    });
  }

  it('turns a formatter failure mid-stream into the stream\'s failure: a 502 error event, a clean end, settled as an error', async () => {
    const { deps, ledger } = setup({ alpha: streaming('hel', 'lo') });
    const original = ChatStreamWriter.prototype.event;
    const spy = jest.spyOn(ChatStreamWriter.prototype, 'event').mockImplementation(function (this: ChatStreamWriter, event: StreamEvent) {
      if (event.type === 'text-delta' && event.delta === 'lo') throw new Error('formatter bug');
      return original.call(this, event);
    });
    try {
      const reply = await streamChat(deps);
      expect(reply.status).toBe(200);
      const { text, error } = await read((reply as { body: Readable }).body);
      expect(error).toBeUndefined();
      expect(text).toContain('"code":502');
      expect(text).toContain('formatter bug');
      expect(ledger.endings).toEqual(['settled error']);
      expect(ledger.settled[0]!.record).toMatchObject({ status: 'error', error: { status: 502 } });
      expect(deps.shutdown.listening).toBe(0);
    } finally {
      spy.mockRestore();
    }
  });

  it('ends the generation when the reply fails before its first frame: the stream is cut as before, the hold settled, the request unhooked', async () => {
    const closed = { value: false };
    const { deps, ledger } = setup({ alpha: stalling('partial', closed) });
    const spy = jest.spyOn(ChatStreamWriter.prototype, 'start').mockImplementation(() => { throw new Error('formatter bug'); });
    try {
      const reply = await streamChat(deps);
      expect(reply.status).toBe(200);
      const { error } = await read((reply as { body: Readable }).body);
      expect(error?.message).toBe('formatter bug');
      await settle();
      expect(closed.value).toBe(true);
      expect(ledger.endings).toEqual(['settled cancelled']);
      expect(deps.shutdown.listening).toBe(0);
    } finally {
      spy.mockRestore();
    }
  });
});
