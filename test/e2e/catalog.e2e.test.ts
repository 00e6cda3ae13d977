// The catalog routes as the official clients call them against `npm start`: openai's models.retrieve (which
// encodes the slash of the model id) and @openrouter/sdk's models.get, models.count, endpoints.list and
// providers.list, each parsed by the client's own models.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import OpenAI from 'openai';
import { OpenRouter } from '@openrouter/sdk';
import { NotFoundResponseError } from '@openrouter/sdk/models/errors';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';
import { generateKeyText } from '../../lambdas/keys/key-format.js';

const ADMIN_KEY = generateKeyText();
let gateway: GatewayProcess;
let router: OpenRouter;

beforeAll(async () => {
  gateway = await startGatewayProcess({ GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_INITIAL_CREDITS: '5' });
  router = new OpenRouter({ apiKey: ADMIN_KEY, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
}, 150_000);

afterAll(async () => {
  await gateway?.stop();
});

describe('catalog routes through the official clients', () => {
  it('openai models.retrieve reads one model by its id', async () => {
    const openai = new OpenAI({ apiKey: ADMIN_KEY, baseURL: gateway.baseUrl, maxRetries: 0 });
    const model = await openai.models.retrieve('simulator/echo');
    expect(model).toMatchObject({ id: 'simulator/echo', created: expect.any(Number) });
    await expect(openai.models.retrieve('simulator/nope')).rejects.toMatchObject({ status: 404 });
  });

  it('@openrouter/sdk models.get, models.count, endpoints.list and providers.list parse', async () => {
    const model = await router.models.get({ author: 'simulator', slug: 'echo' });
    expect(model.data).toMatchObject({ id: 'simulator/echo', contextLength: 131072 });
    await expect(router.models.get({ author: 'simulator', slug: 'nope' })).rejects.toBeInstanceOf(NotFoundResponseError);

    const listed = (await (await fetch(`${gateway.baseUrl}/models`)).json()) as { total_count: number };
    expect((await router.models.count()).data.count).toBe(listed.total_count);

    const endpoints = await router.endpoints.list({ author: 'simulator', slug: 'echo' });
    expect(endpoints.data.id).toBe('simulator/echo');
    expect(endpoints.data.endpoints).toEqual([expect.objectContaining({ providerName: 'Simulator', contextLength: 131072, tag: 'simulator' })]);

    const providers = await router.providers.list();
    expect(providers.data).toContainEqual(expect.objectContaining({ slug: 'simulator', name: 'Simulator' }));
  });
});
