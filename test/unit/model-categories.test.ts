// GET /models?category=: the models the catalog file lists under that use case, and none when it lists none.
import { describe, expect, it } from '@jest/globals';
import { buildCatalog, catalogFileSchema } from '../../lambdas/catalog/catalog-config.js';
import { createCatalogOperations, type CatalogPorts } from '../../lambdas/catalog/operations.js';

const endpoint = { provider: 'acme', adapter: 'openai-chat', base_url: 'https://acme.example/v1', upstream_model: 'm', pricing: { prompt: '0.000001', completion: '0.000001' }, context_length: 8192 };
const catalog = buildCatalog(catalogFileSchema.parse({
  models: [
    { id: 'acme/coder', categories: ['programming', 'technology'], endpoints: [endpoint] },
    { id: 'acme/writer', categories: ['marketing/seo', 'translation'], endpoints: [endpoint] },
    { id: 'acme/plain', endpoints: [endpoint] },
  ],
}));
const operations = createCatalogOperations({ catalog } as unknown as CatalogPorts);
const ids = async (query: Record<string, unknown>) => {
  const reply = await operations.listModels({ principal: null, query } as never);
  return (reply.body as { data: Array<{ id: string }>; total_count: number });
};

describe('GET /models?category=', () => {
  it('lists the models of that use case only, whatever its case', async () => {
    expect((await ids({ category: 'programming' })).data.map((model) => model.id)).toEqual(['acme/coder']);
    expect((await ids({ category: 'Marketing/SEO' })).data.map((model) => model.id)).toEqual(['acme/writer']);
    expect((await ids({ category: 'roleplay' }))).toMatchObject({ data: [], total_count: 0 });
  });

  it('lists every model without one', async () => {
    expect((await ids({})).data.map((model) => model.id)).toEqual(['acme/coder', 'acme/writer', 'acme/plain']);
  });

  it('refuses categories that are not lowercase words in the catalog file', () => {
    expect(catalogFileSchema.safeParse({ models: [{ id: 'acme/x', categories: ['Has Space'], endpoints: [endpoint] }] }).success).toBe(false);
  });
});
