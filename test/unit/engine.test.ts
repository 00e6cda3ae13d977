// The engine's fallback and completion logic with small fakes for the adapters, the ledger and BYOK, and a
// clock the test moves: retries and Retry-After, what stops the search, BYOK key failures falling through,
// the request deadline (minAttemptMs), failing over before a stream's first event; then what complete()
// records, charges and remembers (health, sticky sessions).
import { describe, expect, it } from '@jest/globals';
import { chatRequest, fakeEngineDeps, FakePages } from '../support/engine-fakes.js';
import { buildCatalog, catalogFileSchema } from '../../lambdas/catalog/catalog-config.js';
import type { CatalogEndpoint } from '../../lambdas/catalog/types.js';
import { HttpError, httpErrorOf } from '../../lambdas/platform/http/errors.js';
import { DomainError } from '../../lambdas/platform/errors.js';
import { DEFAULT_ENGINE_CONFIG, type Caller, type EngineConfig, type EngineDeps } from '../../lambdas/inference/engine.js';
import { generate, NEVER_ABORTED, startStream } from '../../lambdas/inference/attempts.js';
import { applyByok } from '../../lambdas/inference/middleware/byok.js';
import { complete, type Completion } from '../../lambdas/inference/settlement.js';
import { hashedUser, startTrace, type RouteTrace } from '../../lambdas/inference/trace.js';
import type { InferenceRequest } from '../../lambdas/inference/inference-request.js';
import { shuttingDownError } from '../../lambdas/platform/shutdown.js';
import type { Hold } from '../../lambdas/billing/ledger.js';
import type { Invocation } from '../../lambdas/billing/infrastructure.js';
import type { ByokCredential } from '../../lambdas/byok/types.js';
import type { ApiKey } from '../../lambdas/keys/types.js';
import { ProviderError } from '../../lambdas/providers/provider-error.js';
import type { GenerationRequest, GenerationResult, ProviderAdapter, StreamEvent } from '../../lambdas/providers/types.js';

// One endpoint per model, so that `models` fixes the order of the candidates (no weighted choice).
const catalog = buildCatalog(catalogFileSchema.parse({
  models: ['alpha', 'beta', 'gamma', 'delta'].map((provider) => ({
    id: `m/${provider}`,
    endpoints: [{
      provider, adapter: 'openai-chat', base_url: `https://${provider}.example/v1`, upstream_model: `${provider}-upstream`,
      // 1000 and 2000 nano-dollars per prompt and completion token.
      pricing: { prompt: '0.000001', completion: '0.000002' }, context_length: 32768,
    }],
  })),
}));
const ALL = ['m/alpha', 'm/beta', 'm/gamma'];

/** What one upstream call does: answer (a result, or stream events), or throw. */
type Step = (call: { signal: AbortSignal; request: GenerationRequest }) => Promise<StreamEvent[] | GenerationResult> | StreamEvent[] | GenerationResult;

const result = (text: string): GenerationResult => ({
  text, tool_calls: [], finish_reason: 'stop', native_finish_reason: 'end_turn', provider_id: `up-${text}`,
  usage: { input_tokens: 10, output_tokens: 5, cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 },
});
const ok = (text: string): Step => () => result(text);
const events = (...deltas: string[]): Step => () => [...deltas.map((delta) => ({ type: 'text-delta', delta }) as StreamEvent)];
function fail(status: number, init: { retryAfterMs?: number; advance?: number } = {}): Step {
  return () => {
    if (init.advance) clock.advance(init.advance);
    throw new ProviderError({ provider: 'upstream', kind: 'http', status, message: `upstream said ${status}`, retryAfterMs: init.retryAfterMs });
  };
}
/** Never answers: fails only when the attempt is aborted (its timer, or the caller), moving the clock by `advance` then. */
const hang = (advance = 0): Step => ({ signal }) => new Promise((_resolve, reject) => {
  signal.addEventListener('abort', () => { clock.advance(advance); reject(signal.reason); }, { once: true });
});

/** The monotonic clock of the engine: moved by sleeps and by the steps, never by real time. */
const clock = {
  time: 0,
  advance(ms: number) { this.time += ms; },
};

/** Adapters by provider and key ("alpha" for the gateway's own key, "alpha:<key>" for a customer's), each a script of steps; the last step repeats. */
class FakeAdapters {
  readonly calls: string[] = [];
  private readonly scripts = new Map<string, Step[]>();

  script(name: string, ...steps: Step[]): this {
    this.scripts.set(name, steps);
    return this;
  }

  private next(name: string): Step {
    const steps = this.scripts.get(name);
    if (!steps) throw new Error(`no script for ${name}`);
    this.calls.push(name);
    return steps.length > 1 ? steps.shift()! : steps[0]!;
  }

  async get(endpoint: CatalogEndpoint, credential?: { id: string; apiKey: string }): Promise<ProviderAdapter> {
    const name = credential ? `${endpoint.provider}:${credential.apiKey}` : endpoint.provider;
    return {
      provider: endpoint.provider,
      generate: async (request, options) => {
        const answer = await this.next(name)({ signal: options!.signal!, request });
        if (Array.isArray(answer)) throw new Error('a stream step in a generate call');
        return answer;
      },
      stream: (request, options) => {
        const step = this.next(name);
        return (async function* () {
          const answer = await step({ signal: options!.signal!, request });
          if (!Array.isArray(answer)) throw new Error('a generate step in a stream call');
          yield* answer;
        })();
      },
    };
  }
}

class FakeLedger {
  readonly pages = new FakePages();

  /** Nothing to read ahead: the tests' leases read no workspace. */
  warmWorkspace(): void {}

  /** Records handed to the page writer (each settles its hold when the aggregator applies it). */
  get settled() {
    return this.pages.added;
  }
}

function credential(overrides: Partial<ByokCredential> = {}): ByokCredential {
  return {
    id: 'cred-1', org_id: 'org-1', provider: 'alpha', name: null, label: 'sk-…0000', disabled: false, is_fallback: false,
    is_required: false, is_byok_only: false, sort_order: 0, allowed_models: null, allowed_user_ids: null, allowed_api_key_hashes: null,
    declared_zdr: null, workspace_id: null, sealed: '', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z',
    ...overrides,
  };
}

/** BYOK as inference sees it: the organization's credentials, and each one's key "opened" with one KMS call. */
function fakeByok(credentials: ByokCredential[]) {
  let kmsCalls = 0;
  return {
    credentialsFor: async () => credentials,
    warm: () => undefined,
    apiKey: async (entry: ByokCredential) => { kmsCalls += 1; return `key-of-${entry.id}`; },
    get kmsCalls() { return kmsCalls; },
  };
}

interface Setup {
  deps: EngineDeps;
  adapters: FakeAdapters;
  ledger: FakeLedger;
  sleeps: number[];
  logs: string[];
}

function setup(config: Partial<EngineConfig> = {}, byok?: ReturnType<typeof fakeByok>): Setup {
  clock.time = 1_000_000;
  const adapters = new FakeAdapters();
  const ledger = new FakeLedger();
  const sleeps: number[] = [];
  const logs: string[] = [];
  const deps = fakeEngineDeps({
    catalog, adapters, ledger, pages: ledger.pages, byok, config,
    now: () => clock.time,
    sleep: async (ms) => { sleeps.push(ms); clock.advance(ms); },
    log: (line) => { logs.push(line); },
  });
  return { deps, adapters, ledger, sleeps, logs };
}

function inference(overrides: Partial<InferenceRequest> = {}): InferenceRequest {
  return chatRequest(ALL, overrides);
}

const caller: Caller = { orgId: 'org-1', workspaceId: 'ws-1', keyHash: 'a'.repeat(64), key: {} as ApiKey, readUnits: 2 };

async function run(setupResult: Setup, request = inference(), signal = NEVER_ABORTED) {
  const trace = startTrace(request, caller, setupResult.deps);
  await applyByok({ request, caller, trace, deps: setupResult.deps });
  return { trace, generated: await generate({ request, caller, trace, deps: setupResult.deps, signal }) };
}

async function failure(setupResult: Setup, request = inference(), signal = NEVER_ABORTED): Promise<{ error: HttpError; trace: RouteTrace }> {
  const trace = startTrace(request, caller, setupResult.deps);
  await applyByok({ request, caller, trace, deps: setupResult.deps });
  try {
    await generate({ request, caller, trace, deps: setupResult.deps, signal });
  } catch (err) {
    // The engine throws domain errors: the reply is what the HTTP error map makes of them.
    if (err instanceof DomainError) return { error: httpErrorOf(err), trace };
    throw err;
  }
  throw new Error('expected generate to fail');
}

const attempts = (trace: RouteTrace) => trace.attempts.map((attempt) => `${attempt.provider} ${attempt.status}`);

describe('retries and fallbacks', () => {
  it('retries a retryable failure on the same endpoint after a jittered backoff, and cools the endpoint down', async () => {
    const s = setup();
    s.adapters.script('alpha', fail(503), ok('second try'));
    const { trace, generated } = await run(s);
    expect(generated.result.text).toBe('second try');
    expect(generated.candidate.endpoint.provider).toBe('alpha');
    expect(attempts(trace)).toEqual(['alpha 503', 'alpha ok']);
    expect(s.sleeps).toEqual([100]);
    expect(s.deps.health.isCoolingDown('m/alpha@alpha', clock.time)).toBe(true);
  });

  it('moves to the next candidate after attemptsPerEndpoint tries of one', async () => {
    const s = setup();
    s.adapters.script('alpha', fail(500)).script('beta', ok('from beta'));
    const { trace, generated } = await run(s);
    expect(generated.result.text).toBe('from beta');
    expect(attempts(trace)).toEqual(['alpha 500', 'alpha 500', 'beta ok']);
    // No wait after the last try of an endpoint.
    expect(s.sleeps).toEqual([100]);
  });

  it('waits for Retry-After before the retry (when longer than the backoff), and skips the wait when it exceeds maxRetryAfterMs', async () => {
    const waited = setup();
    waited.adapters.script('alpha', fail(429, { retryAfterMs: 1_500 }), ok('after waiting'));
    expect((await run(waited)).generated.result.text).toBe('after waiting');
    expect(waited.sleeps).toEqual([1_500]);

    const skipped = setup();
    skipped.adapters.script('alpha', fail(429, { retryAfterMs: DEFAULT_ENGINE_CONFIG.retry.maxRetryAfterMs + 1 })).script('beta', ok('not waiting'));
    const { trace, generated } = await run(skipped);
    expect(generated.result.text).toBe('not waiting');
    expect(attempts(trace)).toEqual(['alpha 429', 'beta ok']);
    expect(skipped.sleeps).toEqual([]);
  });

  it('stops at a non-retryable failure with its status: no other candidate is tried, the endpoint is not cooled down', async () => {
    const s = setup();
    s.adapters.script('alpha', fail(400)).script('beta', ok('never'));
    const { error, trace } = await failure(s);
    expect(error.status).toBe(400);
    expect(error.message).toBe('Provider upstream returned 400: upstream said 400');
    expect(error.metadata).toMatchObject({ attempts: 1, generation_id: trace.generationId, raw: 'upstream said 400' });
    expect(s.adapters.calls).toEqual(['alpha']);
    expect(s.deps.health.isCoolingDown('m/alpha@alpha', clock.time)).toBe(false);
  });

  it('replies with the last failure once every candidate failed, with its Retry-After', async () => {
    const s = setup();
    s.adapters.script('alpha', fail(500)).script('beta', fail(503)).script('gamma', fail(429, { retryAfterMs: 3_000 }));
    const { error, trace } = await failure(s);
    expect(attempts(trace)).toEqual(['alpha 500', 'alpha 500', 'beta 503', 'beta 503', 'gamma 429']);
    expect(error.status).toBe(429);
    expect(error.headers).toEqual({ 'retry-after': '3' });
    expect(error.metadata).toMatchObject({ attempts: 5 });
  });

  it('maps an upstream 5xx to 502 once every model failed, each model tried at most maxAttempts times', async () => {
    const s = setup({ retry: { ...DEFAULT_ENGINE_CONFIG.retry, maxAttempts: 1 } });
    s.adapters.script('alpha', fail(503)).script('beta', fail(503)).script('gamma', fail(500));
    const { error, trace } = await failure(s);
    expect(attempts(trace)).toEqual(['alpha 503', 'beta 503', 'gamma 500']);
    expect(error.status).toBe(502);
  });

  it('makes at most three models\' worth of attempts in all, however many models fail', async () => {
    const s = setup({ retry: { ...DEFAULT_ENGINE_CONFIG.retry, maxAttempts: 1 } });
    // Four models: the fourth is not tried once three attempts (3 × maxAttempts) failed.
    s.adapters.script('alpha', fail(503)).script('beta', fail(503)).script('gamma', fail(503)).script('delta', ok('never'));
    const request = chatRequest([...ALL, 'm/delta'], {});
    const { error, trace } = await failure(s, request);
    expect(attempts(trace)).toEqual(['alpha 503', 'beta 503', 'gamma 503']);
    expect(error.status).toBe(502);
  });

  it('tries the next model once one model\'s candidates (several customer keys, then the gateway\'s) have used maxAttempts', async () => {
    const s = setup({ retry: { ...DEFAULT_ENGINE_CONFIG.retry, maxAttempts: 3 } }, fakeByok([credential(), credential({ id: 'cred-2', sort_order: 1 })]));
    s.adapters.script('alpha:key-of-cred-1', fail(503)).script('alpha:key-of-cred-2', fail(503)).script('alpha', ok('never')).script('beta', ok('from the next model'));
    const { trace, generated } = await run(s);
    expect(s.adapters.calls).toEqual(['alpha:key-of-cred-1', 'alpha:key-of-cred-1', 'alpha:key-of-cred-2', 'beta']);
    expect(attempts(trace)).toEqual(['alpha 503', 'alpha 503', 'alpha 503', 'beta ok']);
    expect(generated.result.text).toBe('from the next model');
  });

  it('falls through to the gateway\'s own key when a customer\'s key fails with a non-retryable status', async () => {
    const byok = fakeByok([credential()]);
    const s = setup({}, byok);
    s.adapters.script('alpha:key-of-cred-1', fail(401)).script('alpha', ok('own key'));
    const { trace, generated } = await run(s);
    expect(s.adapters.calls).toEqual(['alpha:key-of-cred-1', 'alpha']);
    expect(attempts(trace)).toEqual(['alpha 401', 'alpha ok']);
    expect(generated.candidate.byok).toBeUndefined();
    expect(generated.result.text).toBe('own key');
    // Opening the customer's key was one KMS request, counted for the cost ledger.
    expect(trace.kmsRequests).toBe(1);
    // The same failure with the gateway's own key ends the search (a 502: the gateway's credentials are its own problem).
    const own = setup();
    own.adapters.script('alpha', fail(401)).script('beta', ok('never'));
    expect((await failure(own)).error.status).toBe(502);
    expect(own.adapters.calls).toEqual(['alpha']);
  });

  it('serves with the customer\'s key first when it answers', async () => {
    const s = setup({}, fakeByok([credential()]));
    s.adapters.script('alpha:key-of-cred-1', ok('customer key'));
    const { generated } = await run(s);
    expect(generated.candidate.byok?.id).toBe('cred-1');
    expect(generated.result.text).toBe('customer key');
  });
});

describe('the request deadline', () => {
  it('starts no retry or fallback with less than minAttemptMs of the deadline left: the last failure is the reply', async () => {
    const s = setup({ requestTimeoutMs: 10_000, minAttemptMs: 1_000 });
    s.adapters.script('alpha', fail(503, { advance: 9_500 })).script('beta', ok('too late'));
    const { error, trace } = await failure(s);
    expect(attempts(trace)).toEqual(['alpha 503']);
    expect(error.status).toBe(502);
    expect(s.sleeps).toEqual([]);
  });

  it('tries the next candidate instead of a backoff that would leave less than minAttemptMs', async () => {
    const s = setup({ requestTimeoutMs: 10_000, minAttemptMs: 1_000 });
    // 1500 ms left after the failure: waiting 1000 ms for Retry-After would leave 500.
    s.adapters.script('alpha', fail(429, { retryAfterMs: 1_000, advance: 8_500 })).script('beta', ok('in time'));
    const { trace, generated } = await run(s);
    expect(generated.result.text).toBe('in time');
    expect(attempts(trace)).toEqual(['alpha 429', 'beta ok']);
    expect(s.sleeps).toEqual([]);
  });

  it('gives an attempt at most what is left of the deadline: past it the reply is a 408', async () => {
    // A real 50 ms timer: the deadline is shorter than the first-byte timeout.
    const s = setup({ requestTimeoutMs: 50, firstByteTimeoutMs: 120_000, minAttemptMs: 1 });
    s.adapters.script('alpha', hang(50)).script('beta', ok('never'));
    const { error, trace } = await failure(s);
    expect(error.status).toBe(408);
    expect(error.message).toContain('no reply within the request deadline of 50 ms');
    expect(attempts(trace)).toEqual(['alpha 408']);
    expect(s.adapters.calls).toEqual(['alpha']);
  });

  it('treats a first-byte timeout as retryable: retried, then the next candidate', async () => {
    const s = setup({ firstByteTimeoutMs: 20 });
    s.adapters.script('alpha', hang()).script('beta', ok('from beta'));
    const { trace, generated } = await run(s);
    expect(generated.result.text).toBe('from beta');
    expect(attempts(trace)).toEqual(['alpha 408', 'alpha 408', 'beta ok']);
    expect(trace.attempts[0]!.message).toBe('no reply within 20 ms');
  });

  it('stops at once with 499 when the caller goes away, and with 503 when the gateway shuts down', async () => {
    const s = setup();
    s.adapters.script('alpha', hang()).script('beta', ok('never'));
    const client = new AbortController();
    const pending = failure(s, inference(), client.signal);
    await new Promise((resolve) => setImmediate(resolve));
    client.abort(new Error('socket closed'));
    const { error } = await pending;
    expect(error.status).toBe(499);
    expect(s.adapters.calls).toEqual(['alpha']);

    const down = setup();
    down.adapters.script('alpha', hang()).script('beta', ok('never'));
    const stopping = failure(down, inference(), down.deps.shutdown.signal);
    await new Promise((resolve) => setImmediate(resolve));
    down.deps.shutdown.trigger();
    expect((await stopping).error.status).toBe(503);
  });

  it('names the attempt in flight when the caller goes away, and none when it goes away during a backoff after a failure', async () => {
    const s = setup();
    s.adapters.script('alpha', hang());
    const client = new AbortController();
    const pending = failure(s, inference(), client.signal);
    await new Promise((resolve) => setImmediate(resolve));
    client.abort(new Error('socket closed'));
    // In flight: the provider may bill it, so the caller charges an estimate against this candidate.
    expect((await pending).trace.lastCandidate?.endpoint.provider).toBe('alpha');

    const backoff = setup();
    backoff.adapters.script('alpha', fail(503), ok('never'));
    const gone = new AbortController();
    backoff.deps.sleep = async () => { gone.abort(new Error('socket closed')); };
    const { error, trace } = await failure(backoff, inference(), gone.signal);
    expect(error.status).toBe(499);
    expect(attempts(trace)).toEqual(['alpha 503']);
    // The only attempt failed at the provider: nothing in flight to pay for.
    expect(trace.lastCandidate).toBeUndefined();
  });
});

describe('streams', () => {
  async function drain(stream: AsyncIterable<StreamEvent>): Promise<string[]> {
    const out: string[] = [];
    for await (const event of stream) if (event.type === 'text-delta') out.push(event.delta);
    return out;
  }

  it('fails over until the first event arrives', async () => {
    const s = setup();
    s.adapters.script('alpha', fail(503)).script('beta', events('hel', 'lo'));
    const request = inference({ stream: true });
    const trace = startTrace(request, caller, s.deps);
    const streaming = await startStream({ request, caller, trace, deps: s.deps, signal: NEVER_ABORTED });
    expect(streaming.candidate.endpoint.provider).toBe('beta');
    expect(attempts(trace)).toEqual(['alpha 503', 'alpha 503', 'beta ok']);
    expect(await drain(streaming.events)).toEqual(['hel', 'lo']);
  });

  /** A stream step whose events tell when the adapter's stream stopped reading them early. */
  function closable(...deltas: string[]): { step: Step; closed: () => boolean } {
    let closed = false;
    const list = deltas.map((delta) => ({ type: 'text-delta', delta }) as StreamEvent);
    const answer = Object.assign(list, {
      [Symbol.iterator]() {
        const inner = Array.prototype[Symbol.iterator].call(list) as IterableIterator<StreamEvent>;
        return { next: () => inner.next(), return: () => { closed = true; return { done: true, value: undefined }; }, [Symbol.iterator]() { return this; } };
      },
    });
    return { step: () => answer, closed: () => closed };
  }

  it('closes the upstream when the stream is closed early, and reads nothing after', async () => {
    const s = setup();
    const upstream = closable('a', 'b', 'c');
    s.adapters.script('alpha', upstream.step);
    const request = inference({ stream: true });
    const trace = startTrace(request, caller, s.deps);
    const streaming = await startStream({ request, caller, trace, deps: s.deps, signal: NEVER_ABORTED });
    expect(await streaming.events.next()).toEqual({ done: false, value: { type: 'text-delta', delta: 'a' } });
    expect(await streaming.events.next()).toEqual({ done: false, value: { type: 'text-delta', delta: 'b' } });
    expect(upstream.closed()).toBe(false);
    expect(await streaming.events.return(undefined)).toEqual({ done: true, value: undefined });
    expect(upstream.closed()).toBe(true);
    expect(await streaming.events.next()).toEqual({ done: true, value: undefined });
  });

  it('hands on a failure after the first event, then is over', async () => {
    const s = setup();
    const first = { type: 'text-delta', delta: 'first' } as StreamEvent;
    // One event, then the upstream fails.
    const answer = Object.assign([first], {
      [Symbol.iterator]() {
        let sent = false;
        return {
          next: (): IteratorResult<StreamEvent> => {
            if (sent) throw new ProviderError({ provider: 'alpha', kind: 'network', status: 502, message: 'cut mid-way' });
            sent = true;
            return { done: false, value: first };
          },
          [Symbol.iterator]() { return this; },
        };
      },
    });
    s.adapters.script('alpha', () => answer);
    const request = inference({ stream: true });
    const trace = startTrace(request, caller, s.deps);
    const streaming = await startStream({ request, caller, trace, deps: s.deps, signal: NEVER_ABORTED });
    expect((await streaming.events.next()).value).toEqual({ type: 'text-delta', delta: 'first' });
    await expect(streaming.events.next()).rejects.toThrow('cut mid-way');
    expect(await streaming.events.next()).toEqual({ done: true, value: undefined });
  });

  it('replies 502 at once to a stream that ends without any event', async () => {
    const s = setup();
    s.adapters.script('alpha', events()).script('beta', events('never'));
    const request = inference({ stream: true });
    const trace = startTrace(request, caller, s.deps);
    const error = await startStream({ request, caller, trace, deps: s.deps, signal: NEVER_ABORTED }).catch((err: unknown) => (err instanceof DomainError ? httpErrorOf(err) : err));
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).status).toBe(502);
    expect((error as HttpError).message).toContain('Upstream stream ended without any event');
    expect(s.adapters.calls).toEqual(['alpha']);
  });
});

describe('complete', () => {
  const hold: Hold = { generationId: 'gen-x', orgId: 'org-1', workspaceId: 'ws-1', keyHash: 'a'.repeat(64), amount: 123_456n, writeUnits: 3, attempts: 1, readUnits: 4 };
  const invocation: Invocation = { startedAt: 0, coldStart: false, initMs: null, memoryMb: 1024, architecture: 'arm64', region: 'local', responseBytes: 100 };

  async function served(s: Setup, request: InferenceRequest) {
    const { trace, generated } = await run(s, request);
    clock.advance(40);
    return { trace, generated, completion: { status: 'completed', result: generated.result, firstTokenMs: 25, streamed: false } satisfies Completion };
  }

  it('records the generation, charges its exact cost to credits, and settles with the record', async () => {
    const s = setup();
    s.adapters.script('alpha', fail(503), ok('done'));
    const request = inference({ sessionId: 'session-1', user: 'end-user-7' });
    const startedAt = clock.time;
    const { trace, generated, completion } = await served(s, request);
    const accounted = complete({ request, caller, trace, candidate: generated.candidate, completion, deps: s.deps, hold });
    await accounted.persisted;
    // 10 prompt tokens at 1000 nano-dollars, 5 completion tokens at 2000.
    expect(accounted).toMatchObject({ isByok: false, usage: result('done').usage, cost: { prompt: 10_000n, completion: 10_000n, request: 0n, total: 20_000n } });
    expect(s.ledger.settled).toHaveLength(1);
    const [settled] = s.ledger.settled;
    expect(settled!.claim).toEqual({ kind: 'hold', amount: hold.amount });
    expect(settled!.charge).toEqual({ credits: 20_000n, byok: 0n });
    const latency = clock.time - startedAt;
    expect(settled!.record).toMatchObject({
      id: trace.generationId, org_id: 'org-1', workspace_id: 'ws-1', key_hash: caller.keyHash,
      model: 'm/alpha', provider: 'alpha', upstream_model: 'alpha-upstream', provider_id: 'up-done', api: 'chat', streamed: false,
      status: 'completed', finish_reason: 'stop', native_finish_reason: 'end_turn', is_byok: false, service_tier: null, attempts: 2,
      created_at: new Date(startedAt).toISOString(), latency_ms: latency, first_token_ms: 25, generation_time_ms: latency - 25,
      session_id: 'session-1', user_hash: hashedUser('org-1', 'end-user-7'), error: null, reserved: 123_456, usage_estimated: false,
      cost: { prompt: 10_000, completion: 10_000, total: 20_000 },
      provider_responses: [{ provider: 'alpha', model: 'm/alpha', status: 503 }, { provider: 'alpha', model: 'm/alpha', status: 200 }],
    });
    expect(settled!.record!.user_hash).not.toBe('end-user-7');
    // The EMF metrics line comes once the page is stored; without an invocation, no infrastructure cost.
    expect(settled!.record.infra).toBeUndefined();
    expect(JSON.parse(s.logs.at(-1)!)).toMatchObject({ Model: 'm/alpha', Provider: 'alpha', Requests: 1 });
  });

  it('clears the endpoint\'s cool-down and makes the session stick to it on success', async () => {
    const s = setup();
    s.adapters.script('alpha', fail(503), ok('done'));
    const request = inference({ sessionId: 'session-1' });
    const { trace, generated, completion } = await served(s, request);
    expect(s.deps.health.isCoolingDown('m/alpha@alpha', clock.time)).toBe(true);
    await complete({ request, caller, trace, candidate: generated.candidate, completion, deps: s.deps, hold }).persisted;
    expect(s.deps.health.isCoolingDown('m/alpha@alpha', clock.time)).toBe(false);
    expect(s.deps.sessions.get('org-1:session-1', clock.time)).toBe('m/alpha@alpha');
  });

  it('does not cool the endpoint down for a stream the gateway\'s own shutdown ended', async () => {
    const s = setup();
    s.adapters.script('alpha', ok('cut by shutdown'));
    const request = inference();
    const { trace, generated } = await served(s, request);
    const shutdown = shuttingDownError();
    await complete({ request, caller, trace, candidate: generated.candidate, completion: {
      status: 'error', result: { ...generated.result, finish_reason: 'error' }, firstTokenMs: 25, streamed: true, usageEstimated: true,
      error: { status: httpErrorOf(shutdown).status, message: shutdown.message },
    }, deps: s.deps, hold }).persisted;
    expect(s.deps.health.isCoolingDown('m/alpha@alpha', clock.time)).toBe(false);
    expect(s.ledger.settled[0]!.record).toMatchObject({ status: 'error', error: { status: 503 } });
  });

  it('on a failed generation cools the endpoint down, keeps the session unstuck, and records the error', async () => {
    const s = setup();
    s.adapters.script('alpha', ok('cut'));
    const request = inference({ sessionId: 'session-1' });
    const { trace, generated } = await served(s, request);
    const accounted = complete({ request, caller, trace, candidate: generated.candidate, completion: {
      status: 'error', result: { ...generated.result, finish_reason: 'error' }, firstTokenMs: 25, streamed: true, usageEstimated: true,
      error: { status: 502, message: 'Provider alpha connection dropped before the reply completed' },
    }, deps: s.deps, hold });
    await accounted.persisted;
    expect(s.deps.health.isCoolingDown('m/alpha@alpha', clock.time)).toBe(true);
    expect(s.deps.sessions.get('org-1:session-1', clock.time)).toBeUndefined();
    expect(s.ledger.settled[0]!.record).toMatchObject({
      status: 'error', streamed: true, finish_reason: 'error', usage_estimated: true,
      error: { status: 502, message: 'Provider alpha connection dropped before the reply completed' },
    });
    // What was used is still charged.
    expect(s.ledger.settled[0]!.charge).toEqual({ credits: 20_000n, byok: 0n });
  });

  it('charges a generation served with the customer\'s key to BYOK usage, not to credits', async () => {
    const s = setup({}, fakeByok([credential()]));
    s.adapters.script('alpha:key-of-cred-1', ok('customer key'));
    const request = inference();
    const { trace, generated, completion } = await served(s, request);
    const accounted = complete({ request, caller, trace, candidate: generated.candidate, completion, deps: s.deps, hold });
    await accounted.persisted;
    expect(accounted.isByok).toBe(true);
    expect(s.ledger.settled[0]!.charge).toEqual({ credits: 0n, byok: 20_000n });
    expect(s.ledger.settled[0]!.record).toMatchObject({ is_byok: true, cost: { total: 20_000 } });
  });

  it('records the infrastructure cost in the record: the capacity of every write and read of the request', async () => {
    const s = setup({}, fakeByok([credential()]));
    s.adapters.script('alpha:key-of-cred-1', ok('customer key'));
    const request = inference();
    const { trace, generated, completion } = await served(s, request);
    await complete({ request, caller, trace, candidate: generated.candidate, completion, deps: s.deps, hold, invocation }).persisted;
    // Reservation (3) + the record's share of its page (1 KB or less: 1) + the hold's delete by the aggregator
    // (2) writes; key lookup (2) + budgets (4) reads; one KMS request.
    expect(s.ledger.settled[0]!.record.infra).toMatchObject({ dynamodb_write_units: 6, dynamodb_read_units: 6, kms_requests: 1 });

    // A page that could not be stored logs no metrics.
    const again = setup();
    again.ledger.pages.stored = false;
    again.adapters.script('alpha', ok('done'));
    const second = await served(again, request);
    await complete({ request, caller, trace: second.trace, candidate: second.generated.candidate, completion: second.completion, deps: again.deps, hold, invocation }).persisted;
    expect(again.ledger.settled).toHaveLength(1);
    expect(again.logs).toEqual([]);
  });
});
