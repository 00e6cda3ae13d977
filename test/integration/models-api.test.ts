// GET /models (public, and per key for organizations that filter their catalog) and GET /models/user.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { handleManagement } from '../../lambdas/handlers/management.js';
import { createTestStore, type TestStore } from '../support/store.js';
import { createTenant } from '../support/tenants.js';
import { httpEvent, type EventInput } from '../support/events.js';

let store: TestStore;

async function call(input: EventInput) {
  const result = await handleManagement(httpEvent(input), store.deps);
  return { status: result.statusCode, json: JSON.parse(String(result.body)) };
}

beforeAll(async () => {
  store = await createTestStore({ SIMULATOR_URL: 'http://127.0.0.1:1' });
});
afterAll(() => store.drop());

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
  });

  it('gives an organization key that filters its catalog the same list as /models/user; others the public one', async () => {
    const org = await createTenant(store.deps);
    const admin = (await org.addKey('management')).text;
    const user = (await org.addKey('standard')).text;
    await call({ method: 'PATCH', path: '/api/v1/organization/settings', key: admin, body: { is_filtered_model_catalog_enabled: true } });
    const filtered = await call({ method: 'GET', path: '/api/v1/models', key: user });
    const mine = await call({ method: 'GET', path: '/api/v1/models/user', key: user });
    expect(filtered.status).toBe(200);
    expect(filtered.json).toEqual(mine.json);
    expect((await call({ method: 'GET', path: '/api/v1/models/user' })).status).toBe(401);
    expect((await call({ method: 'GET', path: '/api/v1/models', key: 'sk-gw-v1-broken' })).status).toBe(401);
  });
});
