// GET /models (public, and per key for organizations that filter their catalog), GET /models/user, one
// model, the count, the providers and a model's endpoints with their live status, over DynamoDB Local.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { ListEndpointsResponse$inboundSchema, ListProvidersResponse$inboundSchema } from '@openrouter/sdk/models/operations';
import { ModelResponse$inboundSchema, ModelsCountResponse$inboundSchema } from '@openrouter/sdk/models';
import { installAwsLambdaShim } from '../../bin/local/awslambda-shim.js';
import { createSimulatorStore, type SimulatorStore } from '../support/store.js';
import { createTenant } from '../support/tenants.js';
import { httpEvent, type EventInput } from '../support/events.js';

installAwsLambdaShim();
const { handleInference } = await import('../../lambdas/handlers/inference.js');
const { handleManagement } = await import('../../lambdas/handlers/management.js');
const { ENDPOINT_STATUS_TTL_MS } = await import('../../lambdas/catalog/operations.js');

let store: SimulatorStore;

async function call(input: EventInput) {
  const result = await handleManagement(httpEvent(input), store.deps);
  return { status: result.statusCode, json: JSON.parse(String(result.body)) };
}

async function chat(key: string, model: string) {
  const reply = await handleInference(httpEvent({ method: 'POST', path: '/api/v1/chat/completions', key, body: { model, messages: [{ role: 'user', content: 'hi' }] } }), store.deps);
  return { status: reply.statusCode, json: JSON.parse(String(reply.body)) };
}

/** The only model served by the simulator-anthropic provider. */
const HIDDEN = 'simulator/echo-anthropic';

/**
 * An organization (filtering its catalog unless told otherwise) whose BYOK credential for the provider of
 * HIDDEN is `is_byok_only` yet applies only to another model: no endpoint of HIDDEN is left to its keys.
 */
async function restrictedOrganization(options: { filtered?: boolean } = {}) {
  const org = await createTenant(store.deps);
  const admin = (await org.addKey('management')).text;
  const user = (await org.addKey('standard')).text;
  if (options.filtered !== false) {
    expect((await call({ method: 'PATCH', path: '/api/v1/organization/settings', key: admin, body: { is_filtered_model_catalog_enabled: true } })).status).toBe(200);
  }
  const credential = await call({ method: 'POST', path: '/api/v1/byok', key: admin, body: { provider: 'simulator-anthropic', key: 'sk-customer-0000', is_byok_only: true, allowed_models: ['simulator/echo'] } });
  expect(credential.status).toBe(201);
  return { admin, user };
}

beforeAll(async () => {
  store = await createSimulatorStore();
});
afterAll(async () => {
  await store.drop();
});

describe('models', () => {
  it('serves the public catalog without a key, in the OpenRouter model shape with decimal prices', async () => {
    const reply = await call({ method: 'GET', path: '/api/v1/models' });
    expect(reply.status).toBe(200);
    expect(reply.json.total_count).toBe(reply.json.data.length);
    const echo = reply.json.data.find((model: { id: string }) => model.id === 'simulator/echo');
    expect(echo).toMatchObject({
      id: 'simulator/echo', canonical_slug: 'simulator/echo', context_length: 131072,
      pricing: { prompt: '0.000001', completion: '0.000002', request: '0' },
      top_provider: { context_length: 131072, max_completion_tokens: 16384, is_moderated: false },
      architecture: { input_modalities: ['text', 'image'], output_modalities: ['text'] },
      links: { details: '/api/v1/models/simulator/echo/endpoints' },
    });
    expect(echo.supported_parameters).toEqual(expect.arrayContaining(['max_tokens', 'temperature', 'tools']));
  });

  it('pages with offset and limit, and filters by supported parameters', async () => {
    const all = (await call({ method: 'GET', path: '/api/v1/models' })).json;
    const page = (await call({ method: 'GET', path: '/api/v1/models', query: { offset: '2', limit: '3' } })).json;
    expect(page.data.map((model: { id: string }) => model.id)).toEqual(all.data.slice(2, 5).map((model: { id: string }) => model.id));
    expect(page.links.next).toBe('/api/v1/models?offset=5&limit=3');
    const none = (await call({ method: 'GET', path: '/api/v1/models', query: { supported_parameters: 'no_such_parameter' } })).json;
    expect(none.data).toEqual([]);
    expect((await call({ method: 'GET', path: '/api/v1/models', query: { limit: '0' } })).status).toBe(400);
    // The next page of a filtered list keeps its filters: following the links walks the filtered list.
    const filter = { supported_parameters: 'tools,max_tokens', output_modalities: 'text' };
    const filtered = (await call({ method: 'GET', path: '/api/v1/models', query: filter })).json;
    expect(filtered.data.length).toBeGreaterThan(2);
    expect(filtered.data.length).toBeLessThan(all.data.length);
    const walked: string[] = [];
    let link: string | null = `/api/v1/models?${new URLSearchParams({ ...filter, limit: '2' }).toString()}`;
    while (link) {
      const url: URL = new URL(link, 'http://gateway');
      const reply: { data: Array<{ id: string }>; links: { next: string | null } } = (await call({ method: 'GET', path: url.pathname, query: Object.fromEntries(url.searchParams) })).json;
      walked.push(...reply.data.map((model: { id: string }) => model.id));
      link = reply.links.next;
    }
    expect(walked).toEqual(filtered.data.map((model: { id: string }) => model.id));
  });

  it('gives an organization key that filters its catalog the same list as /models/user: the models it can route to; others the public one', async () => {
    const { user } = await restrictedOrganization();
    const everything = await call({ method: 'GET', path: '/api/v1/models' });
    const filtered = await call({ method: 'GET', path: '/api/v1/models', key: user });
    const mine = await call({ method: 'GET', path: '/api/v1/models/user', key: user });
    expect(filtered.status).toBe(200);
    expect(filtered.json).toEqual(mine.json);
    // A strict subset of the catalog: every model but the one no endpoint of which the key can use.
    const ids = (reply: typeof filtered) => reply.json.data.map((model: { id: string }) => model.id);
    expect(ids(mine)).toEqual(ids(everything).filter((id: string) => id !== HIDDEN));
    expect(mine.json.total_count).toBe(everything.json.total_count - 1);
    // Routing agrees: the model left out cannot be served to this key; the others can.
    expect((await chat(user, HIDDEN)).status).toBe(502);
    expect((await chat(user, 'simulator/echo')).status).toBe(200);
    // The model's own routes follow the filtered list.
    expect((await call({ method: 'GET', path: `/api/v1/models/${HIDDEN}`, key: user })).status).toBe(404);
    expect((await call({ method: 'GET', path: `/api/v1/models/${HIDDEN}` })).status).toBe(200);
    // Without the setting, /models stays the public catalog for the same organization's keys.
    const other = await restrictedOrganization({ filtered: false });
    expect((await call({ method: 'GET', path: '/api/v1/models', key: other.user })).json).toEqual(everything.json);
    expect(ids(await call({ method: 'GET', path: '/api/v1/models/user', key: other.user }))).not.toContain(HIDDEN);
    expect((await call({ method: 'GET', path: '/api/v1/models/user' })).status).toBe(401);
    expect((await call({ method: 'GET', path: '/api/v1/models', key: 'sk-gw-v1-broken' })).status).toBe(401);
  });
});

describe('one model, the count, the providers and the endpoints', () => {
  it('serves one model as an item of GET /models, by author/slug and by the encoded id the openai client sends', async () => {
    const listed = (await call({ method: 'GET', path: '/api/v1/models' })).json.data.find((model: { id: string }) => model.id === 'simulator/echo');
    for (const path of ['/api/v1/models/simulator/echo', '/api/v1/models/simulator%2Fecho', '/api/v1/models/simulator%2fecho']) {
      expect(await call({ method: 'GET', path })).toEqual({ status: 200, json: listed });
    }
    const wrapped = await call({ method: 'GET', path: '/api/v1/model/simulator/echo' });
    expect(wrapped).toEqual({ status: 200, json: { data: listed } });
    expect(ModelResponse$inboundSchema.safeParse(wrapped.json).success).toBe(true);
    for (const path of ['/api/v1/models/simulator/nope', '/api/v1/models/nobody%2Fecho', '/api/v1/models/simulator/nope/endpoints']) {
      const missing = await call({ method: 'GET', path });
      expect(missing).toMatchObject({ status: 404, json: { error: { code: 404, message: expect.stringContaining('Model not found') } } });
    }
    // The static routes beside it keep winning.
    expect((await call({ method: 'GET', path: '/api/v1/models/user' })).status).toBe(401);
    expect((await call({ method: 'GET', path: '/api/v1/models/count' })).status).toBe(200);
  });

  it('counts what GET /models lists for the caller, in the @openrouter/sdk shape', async () => {
    const all = (await call({ method: 'GET', path: '/api/v1/models' })).json;
    const count = await call({ method: 'GET', path: '/api/v1/models/count' });
    expect(count).toEqual({ status: 200, json: { data: { count: all.total_count } } });
    expect(ModelsCountResponse$inboundSchema.safeParse(count.json).success).toBe(true);
    // The simulator's two embeddings models and five speech models are all but the text ones.
    expect((await call({ method: 'GET', path: '/api/v1/models/count', query: { output_modalities: 'text' } })).json.data.count).toBe(all.total_count - 7);
    expect((await call({ method: 'GET', path: '/api/v1/models/count', query: { output_modalities: 'embeddings' } })).json.data.count).toBe(2);
    expect((await call({ method: 'GET', path: '/api/v1/models/count', query: { output_modalities: 'audio' } })).json.data.count).toBe(5);
    const { user } = await restrictedOrganization();
    const mine = (await call({ method: 'GET', path: '/api/v1/models/user', key: user })).json;
    expect(mine.total_count).toBe(all.total_count - 1);
    expect((await call({ method: 'GET', path: '/api/v1/models/count', key: user })).json.data.count).toBe(mine.total_count);
    expect((await call({ method: 'GET', path: '/api/v1/models/count', key: 'sk-gw-v1-broken' })).status).toBe(401);
  });

  it('lists the providers of the catalog in the @openrouter/sdk shape', async () => {
    const reply = await call({ method: 'GET', path: '/api/v1/providers' });
    expect(reply.status).toBe(200);
    expect(reply.json.data).toContainEqual({ name: 'Simulator', slug: 'simulator', privacy_policy_url: null, terms_of_service_url: null, status_page_url: null });
    expect(new Set(reply.json.data.map((provider: { slug: string }) => provider.slug)).size).toBe(reply.json.data.length);
    expect(ListProvidersResponse$inboundSchema.safeParse(reply.json).success).toBe(true);
  });

  it('lists a model\'s endpoints with pricing, limits and parameters, and null status before any traffic', async () => {
    const reply = await call({ method: 'GET', path: '/api/v1/models/simulator/echo-anthropic/endpoints' });
    expect(reply.status).toBe(200);
    expect(reply.json.data).toMatchObject({ id: 'simulator/echo-anthropic', name: 'Simulator: echo-anthropic', architecture: { input_modalities: ['text', 'image'] } });
    expect(reply.json.data.endpoints).toEqual([expect.objectContaining({
      name: 'Simulator (anthropic) | simulator/echo-anthropic', model_id: 'simulator/echo-anthropic', provider_name: 'Simulator (anthropic)', tag: 'simulator-anthropic',
      context_length: 131072, max_completion_tokens: 16384, pricing: expect.objectContaining({ prompt: '0.000001', completion: '0.000002' }),
      supported_parameters: expect.arrayContaining(['max_tokens', 'tools']),
      uptime_last_5m: null, uptime_last_30m: null, uptime_last_1d: null, latency_last_30m: null, throughput_last_30m: null,
    })]);
    const parsed = ListEndpointsResponse$inboundSchema.safeParse(reply.json);
    expect(parsed.error).toBeUndefined();
    expect((await call({ method: 'GET', path: '/api/v1/models/simulator%2Fecho-anthropic/endpoints' })).json).toEqual(reply.json);
  });

  it('reads an endpoint\'s rollups at most once per minute per instance, however often the public route is called', async () => {
    const reads = jest.spyOn(store.deps.rollups, 'endpointRange');
    try {
      const path = '/api/v1/models/simulator/echo-gemini/endpoints';
      const replies = await Promise.all([call({ method: 'GET', path }), call({ method: 'GET', path }), call({ method: 'GET', path })]);
      expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200]);
      expect((await call({ method: 'GET', path })).status).toBe(200);
      expect(reads).toHaveBeenCalledTimes(1);
      store.setNow(new Date(Date.now() + ENDPOINT_STATUS_TTL_MS + 1000));
      expect((await call({ method: 'GET', path })).status).toBe(200);
      expect(reads).toHaveBeenCalledTimes(2);
    } finally {
      store.setNow(undefined);
      reads.mockRestore();
    }
  });

  it('derives uptime, latency and throughput from the settled generations of every organization', async () => {
    const first = await (await createTenant(store.deps)).addKey('standard');
    const second = await (await createTenant(store.deps)).addKey('standard');
    const chat = async (key: string, model: string, stream: boolean) => {
      const reply = await handleInference(httpEvent({ method: 'POST', path: '/api/v1/chat/completions', key, body: { model, stream, messages: [{ role: 'user', content: 'how fast are you' }] } }), store.deps);
      if (typeof reply.body !== 'string') for await (const _chunk of reply.body) { /* drain */ }
      return reply.statusCode;
    };
    // Two organizations, JSON and streamed; each record is in its page before the reply returns here, and
    // applied to the rollups (which the endpoint figures read) by converge().
    expect(await chat(first.text, 'simulator/echo', false)).toBe(200);
    expect(await chat(first.text, 'simulator/echo', true)).toBe(200);
    expect(await chat(second.text, 'simulator/echo', true)).toBe(200);
    // A stream cut mid-reply is a failed generation of its endpoint.
    expect(await chat(first.text, 'simulator/cut-stream', true)).toBe(200);
    await store.converge();

    const echo = (await call({ method: 'GET', path: '/api/v1/models/simulator/echo/endpoints' })).json.data.endpoints[0];
    expect(echo).toMatchObject({ uptime_last_5m: 100, uptime_last_30m: 100, uptime_last_1d: 100 });
    expect(echo.latency_last_30m).toEqual({ p50: expect.any(Number), p75: expect.any(Number), p90: expect.any(Number), p99: expect.any(Number) });
    expect(echo.latency_last_30m.p50).toBeGreaterThan(0);
    expect(echo.latency_last_30m.p99).toBeGreaterThanOrEqual(echo.latency_last_30m.p50);
    expect(echo.throughput_last_30m).toEqual({ p50: expect.any(Number), p75: expect.any(Number), p90: expect.any(Number), p99: expect.any(Number) });
    const cut = (await call({ method: 'GET', path: '/api/v1/models/simulator/cut-stream/endpoints' })).json.data.endpoints[0];
    expect(cut).toMatchObject({ uptime_last_30m: 0, latency_last_30m: null });
    // Untouched endpoints stay without data.
    expect((await call({ method: 'GET', path: '/api/v1/models/simulator/tool-call/endpoints' })).json.data.endpoints[0].uptime_last_30m).toBeNull();
  });
});
