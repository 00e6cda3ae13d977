// GET /models (public; filtered for organization keys when the organization asks for it), GET /models/user,
// one model, the model count, the providers, and one model's endpoints with their live status.
import type { z } from 'zod';
import type { Principal } from '../platform/http/auth.js';
import { nanosToDecimal } from '../platform/money.js';
import { echo } from '../platform/echo.js';
import { NotFoundError } from '../platform/errors.js';
import {
  hourOf, LATENCY_BUCKETS_MS, LATENCY_COUNTERS, THROUGHPUT_BUCKETS_TPS, THROUGHPUT_COUNTERS, type HealthCounter,
} from '../billing/rollups.js';
import type { EndpointRollupRow, RollupRepository } from '../billing/rollup-repository.js';
import type { Catalog, CatalogEndpoint, CatalogModel } from './types.js';
import type { ApiKey } from '../keys/index.js';
import type { OrganizationRepository } from '../organizations/index.js';
import type { endpointSchema, listModelsQuery, modelSchema } from './schemas.js';
import type { CatalogOperations } from './routes.js';
import type { EndpointFailureRepository } from './endpoint-failure-repository.js';
import type { Logger } from '../platform/logger.js';

export interface CatalogPorts {
  catalog: Catalog;
  /**
   * Which endpoints a key can call, decided as routing decides it (with the organization's BYOK
   * credentials); undefined when nothing narrows the catalog (no credentials, BYOK off).
   */
  usableEndpointsFor: (key: Pick<ApiKey, 'org_id' | 'workspace_id' | 'hash' | 'creator_user_id'>) => Promise<EndpointFilter | undefined>;
  /** Whether the organization filters its catalog. */
  organizations: Pick<OrganizationRepository, 'get'>;
  /** Endpoint health: hourly rollups and failed attempts. */
  rollups: Pick<RollupRepository, 'endpointRange'>;
  endpointFailures: Pick<EndpointFailureRepository, 'range'>;
  clock: () => Date;
  log: Logger;
}

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
    // Text-to-speech models: every voice of their endpoints (the first endpoint's default voice first).
    supported_voices: model.endpoints.some((endpoint) => endpoint.speech) ? [...new Set(model.endpoints.flatMap((endpoint) => endpoint.speech?.voices ?? []))] : null,
    links: { details: `/api/v1/models/${model.id}/endpoints` },
    endpoints_count: model.endpoints.length,
  };
}

/**
 * The models a key may use: those with at least one endpoint the key can call, decided as routing decides
 * it (byok/routing.ts endpointCredentials). Today only BYOK narrows it: a credential with `is_byok_only`
 * takes the gateway's own key away from every endpoint of its provider, including those of models its
 * `allowed_models` leaves out, which then have no key to be called with. The
 * request's end user is not known here: credentials limited to end users (`allowed_user_ids`) are left out,
 * as for a request without `user`.
 */
export function modelsForKey(catalog: Catalog, usable: EndpointFilter | undefined): CatalogModel[] {
  if (!usable) return catalog.models;
  return catalog.models.filter((model) => model.endpoints.some(usable));
}

/** Whether a key can call an endpoint at all (byok/routing.ts usableEndpointFilter). */
export type EndpointFilter = (endpoint: CatalogEndpoint) => boolean;

/** The models the principal's key may use, with the BYOK credentials inference uses (none where BYOK is off). */
async function usableModels(principal: Principal, deps: CatalogPorts): Promise<CatalogModel[]> {
  return modelsForKey(deps.catalog, await deps.usableEndpointsFor(principal.key));
}

function page(models: CatalogModel[], query: z.infer<typeof listModelsQuery> | undefined, path = '/api/v1/models') {
  let list = query?.output_modalities ? models.filter(outputModalityFilter(query.output_modalities)) : models;
  if (query?.category) {
    const category = query.category.trim().toLowerCase();
    list = list.filter((model) => model.categories?.includes(category) === true);
  }
  if (query?.supported_parameters) {
    const wanted = query.supported_parameters.split(',').map((name) => name.trim()).filter(Boolean);
    list = list.filter((model) => wanted.every((name) => model.endpoints.some((endpoint) => endpoint.supported_parameters.includes(name))));
  }
  const offset = query?.offset ?? 0;
  const limit = query?.limit ?? Math.max(list.length, 1);
  // The next page's link keeps the filters of this one.
  let next: string | null = null;
  if (offset + limit < list.length) {
    const search = new URLSearchParams();
    if (query?.output_modalities) search.set('output_modalities', query.output_modalities);
    if (query?.category) search.set('category', query.category);
    if (query?.supported_parameters) search.set('supported_parameters', query.supported_parameters);
    search.set('offset', String(offset + limit));
    search.set('limit', String(limit));
    next = `${path}?${search.toString()}`;
  }
  return { data: list.slice(offset, offset + limit).map(modelView), total_count: list.length, links: { next } };
}

async function filteredForOrganization(principal: Principal | null, deps: CatalogPorts): Promise<boolean> {
  if (!principal || principal.key.org_kind !== 'organization') return false;
  const org = await deps.organizations.get(principal.key.org_id);
  return org?.settings.is_filtered_model_catalog_enabled === true;
}

/** The models GET /models lists for this caller: the catalog, or the key's models where the organization filters. */
async function listedModels(principal: Principal | null, deps: CatalogPorts): Promise<CatalogModel[]> {
  return principal && (await filteredForOrganization(principal, deps)) ? usableModels(principal, deps) : deps.catalog.models;
}

/** One model by its path parameters, if GET /models lists it for this caller; 404 otherwise. */
async function listedModel(params: { author: string; slug: string }, principal: Principal | null, deps: CatalogPorts): Promise<CatalogModel> {
  const id = `${params.author}/${params.slug}`;
  const model = deps.catalog.byId.get(id);
  if (!model || !(await listedModels(principal, deps)).includes(model)) throw new NotFoundError(`Model not found: ${echo(id, 128)}`);
  return model;
}

const HOUR_MS = 3_600_000;

/**
 * Percent of the endpoint's tries that it served (2 decimals): settled generations that did not fail at the
 * endpoint, over settled generations plus attempts that failed before a first byte (which settle nothing).
 * Cancelled generations (the client went away, or the request was abandoned) count on neither side.
 * Null without traffic.
 */
function uptime(rows: EndpointRollupRow[], failedAttempts: bigint): number | null {
  const requests = rows.reduce((sum, row) => sum + row.requests, 0n);
  const tries = requests + failedAttempts;
  if (tries === 0n) return null;
  const failed = rows.reduce((sum, row) => sum + row.errors, 0n);
  return Number(((requests - failed) * 10_000n) / tries) / 100;
}

/**
 * p50/p75/p90/p99 from histogram buckets: each percentile is reported as a bound of the bucket it falls in,
 * the pessimistic one (latency: the upper bound; throughput: the lower bound). The one exception is a
 * latency in the open bucket past the last bound (128 s, beyond the default request deadline): reported as
 * that bound, which it is at least. Null without samples.
 */
function percentiles(rows: EndpointRollupRow[], counters: readonly HealthCounter[], bounds: readonly number[], side: 'upper' | 'lower') {
  const counts = counters.map((name) => rows.reduce((sum, row) => sum + row.histogram[name], 0n));
  const total = counts.reduce((sum, count) => sum + count, 0n);
  if (total === 0n) return null;
  const at = (percent: bigint): number => {
    const rank = (total * percent + 99n) / 100n;
    let seen = 0n;
    let index = counts.length - 1;
    for (let i = 0; i < counts.length; i += 1) {
      seen += counts[i]!;
      if (seen >= rank) { index = i; break; }
    }
    if (side === 'upper') return bounds[Math.min(index, bounds.length - 1)]!;
    return index === 0 ? 0 : bounds[index - 1]!;
  };
  return { p50: at(50n), p75: at(75n), p90: at(90n), p99: at(99n) };
}

/**
 * How long a function instance reuses an endpoint's status. The route is public and one status reads up to a
 * day of rollup rows across organizations: with the cache each instance reads an endpoint at most once per
 * period however often the route is called (concurrent callers share the read in flight).
 */
export const ENDPOINT_STATUS_TTL_MS = 60_000;

type EndpointStatus = Awaited<ReturnType<typeof readEndpointStatus>>;
const statusCaches = new WeakMap<object, Map<string, { at: number; status: Promise<EndpointStatus> }>>();

/** The endpoint's status, cached per store (per rollup repository) and endpoint for ENDPOINT_STATUS_TTL_MS. */
function endpointStatus(endpoint: CatalogEndpoint, deps: CatalogPorts): Promise<EndpointStatus> {
  let cache = statusCaches.get(deps.rollups);
  if (!cache) statusCaches.set(deps.rollups, cache = new Map());
  const key = `${endpoint.model}@${endpoint.provider}`;
  const now = deps.clock().getTime();
  const cached = cache.get(key);
  if (cached && now - cached.at < ENDPOINT_STATUS_TTL_MS) return cached.status;
  const status = readEndpointStatus(endpoint, deps);
  cache.set(key, { at: now, status });
  // A failed read is not kept: the next caller tries again.
  status.catch(() => { if (cache.get(key)?.status === status) cache.delete(key); });
  return status;
}

/**
 * Live status of an endpoint from the hourly rollup rows of every organization (GSI1) and its counts of
 * failed attempts (one query), which both the inference and the management function see; nothing is added
 * to the inference hot path. Windows are the UTC hours overlapping the last 5 minutes, 30 minutes and day.
 */
async function readEndpointStatus(endpoint: CatalogEndpoint, deps: CatalogPorts) {
  const now = deps.clock().getTime();
  const hourAgo = (ms: number) => hourOf(new Date(now - ms).toISOString());
  const [{ rows, truncated }, failures] = await Promise.all([
    deps.rollups.endpointRange(endpoint.model, endpoint.provider, hourAgo(24 * HOUR_MS), hourAgo(0)),
    deps.endpointFailures.range(endpoint.model, endpoint.provider, hourAgo(24 * HOUR_MS), hourAgo(0)),
  ]);
  // A truncated read (newest hour first) is complete for every hour newer than the oldest one it reached:
  // the windows keep to those (to that partial hour too only when nothing newer was read, as a sample).
  let firstHour = hourAgo(24 * HOUR_MS);
  if (truncated) {
    const oldest = rows[rows.length - 1]!.hour;
    firstHour = rows.some((row) => row.hour > oldest) ? hourOf(new Date(Date.parse(`${oldest}:00:00Z`) + HOUR_MS).toISOString()) : oldest;
    deps.log.warn('endpoint rollups truncated', { endpoint: `${endpoint.model}@${endpoint.provider}`, rows: rows.length, complete_from_hour: firstHour });
  }
  const fromHour = (ms: number) => (hourAgo(ms) > firstHour ? hourAgo(ms) : firstHour);
  const within = (ms: number) => rows.filter((row) => row.hour >= fromHour(ms));
  const failedWithin = (ms: number) => [...failures].reduce((sum, [hour, count]) => (hour >= fromHour(ms) ? sum + count : sum), 0n);
  const uptimeWithin = (ms: number) => uptime(within(ms), failedWithin(ms));
  const recent = within(30 * 60_000);
  return {
    uptime_last_5m: uptimeWithin(5 * 60_000),
    uptime_last_30m: uptimeWithin(30 * 60_000),
    uptime_last_1d: uptimeWithin(24 * HOUR_MS),
    latency_last_30m: percentiles(recent, LATENCY_COUNTERS, LATENCY_BUCKETS_MS, 'upper'),
    throughput_last_30m: percentiles(recent, THROUGHPUT_COUNTERS, THROUGHPUT_BUCKETS_TPS, 'lower'),
  };
}

async function endpointView(model: CatalogModel, endpoint: CatalogEndpoint, deps: CatalogPorts): Promise<z.infer<typeof endpointSchema>> {
  const tools = endpoint.supported_parameters.includes('tools');
  return {
    name: `${endpoint.provider_name} | ${model.id}`,
    model_id: model.id,
    model_name: model.name,
    context_length: endpoint.context_length,
    pricing: {
      prompt: nanosToDecimal(endpoint.pricing.prompt),
      completion: nanosToDecimal(endpoint.pricing.completion),
      request: nanosToDecimal(endpoint.pricing.request),
      image: '0',
      web_search: '0',
      internal_reasoning: nanosToDecimal(endpoint.pricing.internal_reasoning),
      input_cache_read: nanosToDecimal(endpoint.pricing.input_cache_read),
      input_cache_write: nanosToDecimal(endpoint.pricing.input_cache_write),
      discount: 0,
    },
    provider_name: endpoint.provider_name,
    tag: endpoint.provider,
    quantization: null,
    max_completion_tokens: endpoint.max_completion_tokens,
    max_prompt_tokens: null,
    supported_parameters: [...endpoint.supported_parameters].sort(),
    supports_implicit_caching: false,
    supports_tool_choice: { auto: tools, function: tools, none: tools, required: tools },
    supports_voice_cloning: endpoint.speech?.voice_cloning ?? false,
    status: 0,
    ...(await endpointStatus(endpoint, deps)),
  };
}

function outputModalityFilter(value: string | undefined): (model: CatalogModel) => boolean {
  const wanted = (value ?? '').split(',').map((name) => name.trim()).filter(Boolean);
  if (wanted.length === 0 || wanted.includes('all')) return () => true;
  // "speech" (OpenRouter's name for text to speech) is what a speech endpoint produces, as "audio" is.
  return (model) => wanted.every((modality) => model.endpoints.some((endpoint) => endpoint.output_modalities.includes(modality) || (modality === 'speech' && endpoint.speech !== undefined)));
}

export function createCatalogOperations(deps: CatalogPorts): CatalogOperations {
  return {
  async listModels({ principal, query }) {
    return { body: page(await listedModels(principal, deps), query) };
  },
  async listEmbeddingsModels({ principal, query }) {
    return { body: page((await listedModels(principal, deps)).filter(outputModalityFilter('embeddings')), query, '/api/v1/embeddings/models') };
  },
  async listModelsForUser({ principal, query }) {
    return { body: page(await usableModels(principal, deps), query) };
  },
  async getModel({ principal, params }) {
    return { body: modelView(await listedModel(params, principal, deps)) };
  },
  async getModelData({ principal, params }) {
    return { body: { data: modelView(await listedModel(params, principal, deps)) } };
  },
  async countModels({ principal, query }) {
    return { body: { data: { count: (await listedModels(principal, deps)).filter(outputModalityFilter(query.output_modalities)).length } } };
  },
  async listProviders() {
    const providers = new Map<string, string>();
    for (const model of deps.catalog.models) for (const endpoint of model.endpoints) providers.set(endpoint.provider, endpoint.provider_name);
    const data = [...providers].sort(([a], [b]) => a.localeCompare(b)).map(([slug, name]) => ({
      name, slug, privacy_policy_url: null, terms_of_service_url: null, status_page_url: null,
    }));
    return { body: { data } };
  },
  async listModelEndpoints({ principal, params }) {
    const model = await listedModel(params, principal, deps);
    const view = modelView(model);
    return {
      body: {
        data: {
          id: model.id,
          name: model.name,
          created: model.created,
          description: model.description,
          architecture: view.architecture,
          endpoints: await Promise.all(model.endpoints.map((endpoint) => endpointView(model, endpoint, deps))),
        },
      },
    };
  },
  };
}
