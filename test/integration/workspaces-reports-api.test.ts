// Workspaces, generation lookup, feedback, activity and analytics routes through the management handler
// over DynamoDB Local: shapes, scoping to the caller's organization, and the 4xx answers to bad input.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { installAwsLambdaShim } from '../../bin/local/awslambda-shim.js';
import { createSimulatorStore, type SimulatorStore } from '../support/store.js';
import { createTenant, type Tenant } from '../support/tenants.js';
import { httpEvent } from '../support/events.js';

installAwsLambdaShim();
const { handleInference } = await import('../../lambdas/handlers/inference.js');
const { handleManagement } = await import('../../lambdas/handlers/management.js');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

let store: SimulatorStore;
let tenant: Tenant;
let admin: string;
let otherAdmin: string;
let regular: string;

beforeAll(async () => {
  store = await createSimulatorStore();
  tenant = await createTenant(store.deps, 'organization', 'Acme');
  admin = (await tenant.addKey('management')).text;
  regular = (await tenant.addKey('standard')).text;
  otherAdmin = (await (await createTenant(store.deps, 'organization', 'Other')).addKey('management')).text;
});
afterAll(async () => {
  await store.drop();
});

async function manage(key: string, method: string, path: string, body?: unknown, query?: Record<string, string>): Promise<{ status: number; json: Json }> {
  const reply = await handleManagement(httpEvent({ method, path: `/api/v1${path}`, key, ...(body === undefined ? {} : { body }), ...(query ? { query } : {}) }), store.deps);
  return { status: reply.statusCode ?? 200, json: JSON.parse(String(reply.body)) as Json };
}

/** A request whose body is sent as this exact JSON text (numbers as a client's serializer writes them). */
async function manageText(key: string, method: string, path: string, rawBody: string): Promise<{ status: number; json: Json }> {
  const reply = await handleManagement(httpEvent({ method, path: `/api/v1${path}`, key, rawBody }), store.deps);
  return { status: reply.statusCode ?? 200, json: JSON.parse(String(reply.body)) as Json };
}

describe('workspaces', () => {
  it('creates, reads (by id or slug), lists, renames and deletes workspaces', async () => {
    const created = await manage(admin, 'POST', '/workspaces', { name: 'Data Science', slug: 'data-science', description: 'models for DS', default_provider_sort: 'price' });
    expect(created.status).toBe(201);
    const workspace = created.json.data as Json;
    expect(workspace).toMatchObject({
      name: 'Data Science', slug: 'data-science', description: 'models for DS', default_provider_sort: 'price', default_text_model: null,
      io_logging_sampling_rate: 1, is_observability_io_logging_enabled: false, include_byok_in_budgets: false, default_guardrail_id: `grd_${workspace.id}`,
    });
    expect((await manage(admin, 'GET', `/workspaces/${workspace.id}`)).json.data).toEqual(workspace);
    expect((await manage(admin, 'GET', '/workspaces/data-science')).json.data).toEqual(workspace);

    const listed = await manage(admin, 'GET', '/workspaces');
    expect(listed.json.total_count).toBe(2);
    expect((listed.json.data as Json[]).map((entry) => entry.slug)).toEqual(['default', 'data-science']);
    expect((await manage(admin, 'GET', '/workspaces', undefined, { offset: '1', limit: '1' })).json.data).toHaveLength(1);

    const renamed = await manage(admin, 'PATCH', '/workspaces/data-science', { slug: 'ds', name: 'DS', description: null });
    expect(renamed.status).toBe(200);
    expect(renamed.json.data).toMatchObject({ id: workspace.id, slug: 'ds', name: 'DS', description: null });
    expect((await manage(admin, 'GET', '/workspaces/data-science')).status).toBe(404);
    expect((await manage(admin, 'GET', '/workspaces/ds')).json.data.id).toBe(workspace.id);

    const key = await manage(admin, 'POST', '/keys', { name: 'ds key', workspace_id: workspace.id });
    const blocked = await manage(admin, 'DELETE', '/workspaces/ds');
    expect(blocked.status).toBe(409);
    expect(blocked.json.error.message).toMatch(/still has API keys/);
    expect((await manage(admin, 'DELETE', `/keys/${key.json.data.hash}`)).status).toBe(200);
    // A guardrail scoped to it would outlive it, still naming it: the workspace is not deleted while it has one.
    const guardrail = await manage(admin, 'POST', '/guardrails', { name: 'DS only', workspace_id: workspace.id });
    expect(guardrail.status).toBe(201);
    const scoped = await manage(admin, 'DELETE', '/workspaces/ds');
    expect(scoped).toMatchObject({ status: 409, json: { error: { message: 'Workspace ds still has 1 guardrail; delete them first' } } });
    expect((await manage(admin, 'DELETE', `/guardrails/${guardrail.json.data.id}`)).status).toBe(200);
    expect((await manage(admin, 'DELETE', '/workspaces/ds')).json).toEqual({ deleted: true });
    expect((await manage(admin, 'GET', `/workspaces/${workspace.id}`)).status).toBe(404);
    // The slug is free again.
    expect((await manage(admin, 'POST', '/workspaces', { name: 'Again', slug: 'ds' })).status).toBe(201);
  });

  it('keeps slugs unique per organization and refuses bad input with 400 naming the field', async () => {
    expect((await manage(admin, 'POST', '/workspaces', { name: 'One', slug: 'unique-one' })).status).toBe(201);
    const duplicate = await manage(admin, 'POST', '/workspaces', { name: 'Two', slug: 'unique-one' });
    expect(duplicate.status).toBe(409);
    expect(duplicate.json.error.message).toMatch(/slug "unique-one" already exists/);
    expect((await manage(otherAdmin, 'POST', '/workspaces', { name: 'Mine', slug: 'unique-one' })).status).toBe(201);
    expect((await manage(admin, 'POST', '/workspaces', { name: 'Three', slug: 'two' })).status).toBe(201);
    expect((await manage(admin, 'PATCH', '/workspaces/two', { slug: 'unique-one' })).status).toBe(409);

    for (const [body, field] of [
      [{ name: 'x', slug: 'Bad Slug' }, 'slug'],
      [{ name: 'x', slug: '-lead' }, 'slug'],
      [{ name: 'x', slug: 'a--b' }, 'slug'],
      [{ name: '', slug: 'ok' }, 'name'],
      [{ slug: 'ok' }, 'name'],
      [{ name: 'x', slug: 'ok', color: 'red' }, 'color'],
      [{ name: 'x', slug: 'ok', io_logging_sampling_rate: 2 }, 'io_logging_sampling_rate'],
      [{ name: 'x', slug: 'ok', disabled_server_tools: ['openrouter:nope'] }, 'disabled_server_tools'],
      // Shaped like a UUID (here another workspace's id): paths would read it as an id.
      [{ name: 'x', slug: tenant.workspaceId }, 'slug'],
    ] as Array<[Json, string]>) {
      const reply = await manage(admin, 'POST', '/workspaces', body);
      expect(reply.status).toBe(400);
      expect(reply.json.error.message).toContain(field);
    }
    const renamed = await manage(admin, 'PATCH', '/workspaces/two', { slug: '00000000-0000-4000-8000-000000000000' });
    expect(renamed.status).toBe(400);
    expect(renamed.json.error.message).toMatch(/slug.*must not be shaped like a UUID/);
    const twice = await manage(admin, 'POST', '/workspaces', { name: 'Twice', slug: 'twice', disabled_server_tools: ['openrouter:bash', 'openrouter:bash'] });
    expect(twice.json.data.disabled_server_tools).toEqual(['openrouter:bash']);
  });

  it('answers 404, not a store error, to identifiers longer than any real one', async () => {
    const long = 'w'.repeat(600);
    for (const [key, path] of [[admin, `/workspaces/${long}`], [admin, `/workspaces/${long}/budgets/daily`], [admin, `/byok/${long}`], [admin, `/keys/${long}`], [regular, `/interns/${long}`]] as const) {
      const reply = await manage(key, 'GET', path);
      expect([path.slice(0, 12), reply.status]).toEqual([path.slice(0, 12), 404]);
      expect(reply.json.error.code).toBe(404);
    }
    const unicode = await manage(admin, 'GET', `/workspaces/${encodeURIComponent('é'.repeat(300))}`);
    expect(unicode.status).toBe(404);
  });

  it('is invisible to other organizations and closed to regular keys', async () => {
    const created = await manage(admin, 'POST', '/workspaces', { name: 'Private', slug: 'private' });
    const id = created.json.data.id as string;
    for (const [method, path, body] of [['GET', `/workspaces/${id}`], ['PATCH', `/workspaces/${id}`, { name: 'x' }], ['DELETE', `/workspaces/${id}`], ['GET', `/workspaces/${id}/budgets`], ['PUT', `/workspaces/${id}/budgets/daily`, { limit_usd: 1 }]] as Array<[string, string, Json?]>) {
      expect((await manage(otherAdmin, method, path, body)).status).toBe(404);
    }
    const forbidden = await manage(regular, 'GET', '/workspaces');
    expect(forbidden.status).toBe(403);
    expect(forbidden.json.error.message).toBe('Only management keys can perform this operation');
  });
});

describe('workspace budgets sent as JSON numbers', () => {
  it('takes limit_usd to the nearest nano-dollar and replies with the rounded budget', async () => {
    expect((await manage(admin, 'POST', '/workspaces', { name: 'Floats', slug: 'floats' })).status).toBe(201);
    const put = await manageText(admin, 'PUT', '/workspaces/floats/budgets/monthly', '{"limit_usd":0.000036750000000000004}');
    expect(put.status).toBe(200);
    expect(put.json.data).toMatchObject({ limit_usd: 0.00003675, remaining_usd: 0.00003675, reset_interval: 'monthly' });
    expect((await store.deps.workspaces.findWorkspace(tenant.orgId, 'floats'))!.budgets.monthly!.limit).toBe(36_750n);
    expect((await manage(admin, 'GET', '/workspaces/floats/budgets/monthly')).json.data.limit_usd).toBe(0.00003675);

    const tie = await manage(admin, 'PUT', '/workspaces/floats/budgets/lifetime', { limit_usd: 0.0000000025 });
    expect(tie.json.data.limit_usd).toBe(0.000000003);
    expect((await store.deps.workspaces.findWorkspace(tenant.orgId, 'floats'))!.budgets.lifetime!.limit).toBe(3n);
  });

  it('refuses negative, infinite, huge and non-number budgets with a 400 naming the field and the problem', async () => {
    expect((await manage(admin, 'POST', '/workspaces', { name: 'Bounds', slug: 'bounds' })).status).toBe(201);
    for (const [value, problem] of [
      ['-1', 'must not be negative'],
      ['1e400', 'must be a finite number'],
      ['1e10', 'must be at most 1000000000 (USD)'],
      ['null', 'must be a number (USD)'],
      ['"0.5"', 'must be a number (USD)'],
    ] as Array<[string, string]>) {
      const reply = await manageText(admin, 'PUT', '/workspaces/bounds/budgets/daily', `{"limit_usd":${value}}`);
      expect([value, reply.status, reply.json.error?.message]).toEqual([value, 400, `Invalid body.limit_usd: ${problem}`]);
    }
    expect((await store.deps.workspaces.findWorkspace(tenant.orgId, 'bounds'))!.budgets.daily).toBeFalsy();
  });
});

describe('generations and reports', () => {
  let generationId: string;

  beforeAll(async () => {
    const reply = await handleInference(httpEvent({ method: 'POST', path: '/api/v1/chat/completions', key: regular, body: { model: 'simulator/echo', messages: [{ role: 'user', content: 'report me' }], max_tokens: 10, user: 'end-user-1', session_id: 's-1' } }), store.deps);
    generationId = (JSON.parse(reply.body as string) as Json).id as string;
  });

  it('GET /generation answers the organization\'s keys, regular ones included, and no one else', async () => {
    const own = await manage(regular, 'GET', '/generation', undefined, { id: generationId });
    expect(own.status).toBe(200);
    expect(own.json.data).toMatchObject({
      id: generationId, model: 'simulator/echo', provider_name: 'Simulator', streamed: false, cancelled: false, finish_reason: 'stop', session_id: 's-1',
      workspace_id: tenant.workspaceId, status: 'completed', is_byok: false, upstream_inference_cost: null,
      provider_responses: [{ provider_name: 'Simulator', model_permaslug: 'simulator/echo', status: 200 }],
    });
    expect(own.json.data.external_user).toMatch(/^[0-9a-f]{32}$/);
    expect(own.json.data.total_cost).toBe(own.json.data.upstream_cost.total);
    expect(own.json.data.reserved).toBeGreaterThanOrEqual(own.json.data.total_cost);
    expect((await manage(otherAdmin, 'GET', '/generation', undefined, { id: generationId })).status).toBe(404);
    expect((await manage(admin, 'GET', '/generation', undefined, { id: 'gen-missing' })).status).toBe(404);
    expect((await manage(admin, 'GET', '/generation')).status).toBe(400);
  });

  it('takes feedback on the organization\'s generations', async () => {
    expect((await manage(admin, 'POST', '/generation/feedback', { generation_id: generationId, category: 'latency', comment: 'slow' })).json).toEqual({ data: { success: true } });
    expect((await manage(otherAdmin, 'POST', '/generation/feedback', { generation_id: generationId, category: 'other' })).status).toBe(404);
    expect((await manage(admin, 'POST', '/generation/feedback', { generation_id: generationId, category: 'vibes' })).status).toBe(400);
    expect((await manage(regular, 'POST', '/generation/feedback', { generation_id: generationId, category: 'other' })).status).toBe(403);
  });

  it('GET /activity groups by workspace on request and refuses dates outside the last 30 days', async () => {
    const today = new Date().toISOString().slice(0, 10);
    // Reports read the rollups, which follow once the aggregator has applied the records.
    await store.converge();
    const grouped = await manage(admin, 'GET', '/activity', undefined, { group_by: 'workspace', date: today });
    expect(grouped.status).toBe(200);
    expect(grouped.json.data).toEqual([expect.objectContaining({ date: today, model: 'simulator/echo', endpoint_id: 'simulator/echo@simulator', requests: 1, workspace_id: tenant.workspaceId })]);
    expect((await manage(admin, 'GET', '/activity', undefined, { workspace_id: 'elsewhere' })).json.data).toEqual([]);
    expect((await manage(otherAdmin, 'GET', '/activity')).json.data).toEqual([]);
    expect((await manage(admin, 'GET', '/activity', undefined, { date: '2020-01-01' })).status).toBe(400);
    expect((await manage(admin, 'GET', '/activity', undefined, { date: 'yesterday' })).status).toBe(400);
    expect((await manage(admin, 'GET', '/activity', undefined, { api_key_hash: 'xyz' })).status).toBe(400);
    expect((await manage(admin, 'GET', '/activity', undefined, { group_by: 'model' })).status).toBe(400);
  });

  it('GET /analytics/meta lists what /analytics/query accepts', async () => {
    const meta = await manage(admin, 'GET', '/analytics/meta');
    expect(meta.status).toBe(200);
    expect((meta.json.data.dimensions as Json[]).map((d) => d.name)).toEqual(['model', 'provider', 'api_key', 'workspace']);
    expect((meta.json.data.granularities as Json[]).map((g) => g.name)).toEqual(['hour', 'day', 'week', 'month']);
    expect(meta.json.data.metrics).toEqual(expect.arrayContaining([{ name: 'cost', display_label: 'Spend (credits)', display_format: 'currency', is_rate: false }]));
    expect(meta.json.data.operators).toEqual(expect.arrayContaining([{ name: 'in', value_type: 'array' }, { name: 'eq', value_type: 'scalar' }]));
  });

  it('POST /analytics/query answers from the rollups and refuses bad queries', async () => {
    await store.converge();
    const reply = await manage(admin, 'POST', '/analytics/query', { metrics: ['requests', 'prompt_tokens'], dimensions: ['workspace'], granularity: 'hour' });
    expect(reply.status).toBe(200);
    expect(reply.json.data.data).toEqual([expect.objectContaining({ workspace: tenant.workspaceId, requests: 1 })]);
    expect(reply.json.data.metadata).toMatchObject({ row_count: 1, truncated: false });
    const classifier = await manage(admin, 'POST', '/analytics/query', { metrics: ['requests'], classifier_dimensions: { classifier_id: 'c' } });
    expect(classifier.json.data.warnings).toEqual([expect.stringMatching(/not supported/)]);
    const end = new Date().toISOString();
    for (const body of [
      {},
      { metrics: [] },
      { metrics: ['requests'], time_range: { start: end, end: '2020-01-01T00:00:00Z' } },
      { metrics: ['requests'], time_range: { start: '2020-01-01T00:00:00Z', end } },
      { metrics: ['requests'], time_range: { start: 'soon', end } },
      { metrics: ['requests'], limit: 0 },
      { metrics: ['requests'], surprise: true },
    ]) {
      expect((await manage(admin, 'POST', '/analytics/query', body)).status).toBe(400);
    }
  });
});
