// GET /models (public; filtered for organization keys when the organization asks for it) and GET /models/user.
import type { z } from 'zod';
import type { ManagementOperations } from '../http/route-table.js';
import type { Principal } from '../http/auth.js';
import type { GatewayDeps } from '../http/deps.js';
import { nanosToDecimal } from '../shared/money.js';
import type { Catalog, CatalogEndpoint, CatalogModel } from './types.js';
import type { listModelsQuery, modelSchema } from './schemas.js';

function cheapest(endpoints: CatalogEndpoint[]): CatalogEndpoint {
  return endpoints.reduce((best, endpoint) => (endpoint.pricing.prompt + endpoint.pricing.completion < best.pricing.prompt + best.pricing.completion ? endpoint : best));
}

export function modelView(model: CatalogModel): z.infer<typeof modelSchema> {
  const top = cheapest(model.endpoints);
  const input = [...new Set(model.endpoints.flatMap((endpoint) => endpoint.input_modalities))];
  const output = [...new Set(model.endpoints.flatMap((endpoint) => endpoint.output_modalities))];
  return {
    id: model.id,
    canonical_slug: model.id,
    hugging_face_id: null,
    name: model.name,
    created: model.created,
    description: model.description,
    context_length: Math.max(...model.endpoints.map((endpoint) => endpoint.context_length)),
    architecture: { modality: `${input.join('+')}->${output.join('+')}`, input_modalities: input, output_modalities: output, tokenizer: 'Other', instruct_type: null },
    pricing: {
      prompt: nanosToDecimal(top.pricing.prompt),
      completion: nanosToDecimal(top.pricing.completion),
      request: nanosToDecimal(top.pricing.request),
      image: '0',
      web_search: '0',
      internal_reasoning: nanosToDecimal(top.pricing.internal_reasoning),
      input_cache_read: nanosToDecimal(top.pricing.input_cache_read),
      input_cache_write: nanosToDecimal(top.pricing.input_cache_write),
    },
    top_provider: { context_length: top.context_length, max_completion_tokens: top.max_completion_tokens, is_moderated: false },
    per_request_limits: null,
    supported_parameters: [...new Set(model.endpoints.flatMap((endpoint) => endpoint.supported_parameters))].sort(),
    default_parameters: {},
    supported_voices: null,
    links: { details: `/api/v1/models/${model.id}/endpoints` },
    endpoints_count: model.endpoints.length,
  };
}

/**
 * The models a key may use. Guardrails and workspace provider preferences narrow this later; today every
 * catalog model is usable by every key.
 */
export function modelsForKey(catalog: Catalog, _principal: Principal): CatalogModel[] {
  return catalog.models;
}

function page(models: CatalogModel[], query: z.infer<typeof listModelsQuery> | undefined) {
  let list = models;
  if (query?.supported_parameters) {
    const wanted = query.supported_parameters.split(',').map((name) => name.trim()).filter(Boolean);
    list = list.filter((model) => wanted.every((name) => model.endpoints.some((endpoint) => endpoint.supported_parameters.includes(name))));
  }
  const offset = query?.offset ?? 0;
  const limit = query?.limit ?? Math.max(list.length, 1);
  const next = offset + limit < list.length ? `/api/v1/models?offset=${offset + limit}&limit=${limit}` : null;
  return { data: list.slice(offset, offset + limit).map(modelView), total_count: list.length, links: { next } };
}

async function filteredForOrganization(principal: Principal | null, deps: GatewayDeps): Promise<boolean> {
  if (!principal || principal.key.org_kind !== 'organization') return false;
  const org = await deps.organizations.get(principal.key.org_id);
  return org?.settings.is_filtered_model_catalog_enabled === true;
}

export const catalogOperations: Pick<ManagementOperations, 'listModels' | 'listModelsForUser'> = {
  async listModels({ principal, query, deps }) {
    const catalog = deps.engine.catalog;
    const models = principal && (await filteredForOrganization(principal, deps)) ? modelsForKey(catalog, principal) : catalog.models;
    return { body: page(models, query) };
  },
  async listModelsForUser({ principal, query, deps }) {
    return { body: page(modelsForKey(deps.engine.catalog, principal!), query) };
  },
};
