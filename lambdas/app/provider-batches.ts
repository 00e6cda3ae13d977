// A batch run at a provider's own batch service (the batch worker's ProviderBatchPort): the model's endpoint
// with a batch service (catalog `batch_api`), its prices less the batch discount, one budget lease for the
// whole batch, and each answer put through the same inference core as a live request.
//
// Money: the batch's lease (app/batch-lease.ts) covers the sum of its items' maxima at the batch price before
// anything is submitted. When the provider's batch has ended, each answered item runs through runGeneration
// with an adapter that gives the provider's answer: it reserves its maximum from the batch's lease, is priced
// at the batch price stored when the batch was covered, and its record claims its cost from the lease; the
// record is committed with the item's result once (item-commits.ts).
import type { Catalog, CatalogEndpoint } from '../catalog/index.js';
import { endpointByKey, endpointKey } from '../catalog/index.js';
import type { EngineDeps } from '../inference/engine.js';
import { EndpointHealth } from '../inference/endpoint-health.js';
import { planRoute, requestFor } from '../inference/routing.js';
import { DomainError } from '../platform/errors.js';
import type { Logger } from '../platform/logger.js';
import type { ApiKeyRepository } from '../keys/index.js';
import type { AdapterRegistry } from '../providers/registry.js';
import { ProviderError } from '../providers/provider-error.js';
import type { ProviderBatchApi, ProviderBatchLine, ProviderBatchOutcome } from '../providers/batch-api.js';
import type { GenerationRequest, GenerationResult, ProviderAdapter } from '../providers/types.js';
import type { ItemCommitter } from '../batches/item-commits.js';
import type { BatchItem, BatchRecord, ProviderBatchPort } from '../batches/index.js';
import type { SubmittedBatch } from '../batches/provider-port.js';
import { pricedAt, withBatchLease } from './batch-lease.js';
import { batchItemRunner, itemRequest } from './batch-items.js';
import { withUser } from '../inference/attempts.js';
import { endpointCredentials } from '../byok/index.js';
import { httpErrorOf } from '../platform/http/errors.js';

type Submitted = SubmittedBatch;

/** Items of one provider batch put through the inference core at once. */
const COLLECT_CONCURRENCY = 8;

/** An endpoint as a batch item pays for it: every price less the batch discount (rounded down to the nano-dollar). */
export function batchPriced(endpoint: CatalogEndpoint): CatalogEndpoint {
  const keep = 100n - BigInt(endpoint.batch_discount_percent ?? 0);
  const scale = (price: bigint) => (price * keep) / 100n;
  const { pricing } = endpoint;
  return {
    ...endpoint,
    pricing: {
      prompt: scale(pricing.prompt), completion: scale(pricing.completion), request: scale(pricing.request),
      input_cache_read: scale(pricing.input_cache_read), input_cache_write: scale(pricing.input_cache_write), internal_reasoning: scale(pricing.internal_reasoning),
    },
  };
}

/** A catalog of one model served by one endpoint: what routes a provider batch's items. */
function catalogOf(endpoint: CatalogEndpoint, base: Catalog): Catalog {
  const model = { ...base.byId.get(endpoint.model)!, endpoints: [endpoint] };
  return { models: [model], byId: new Map([[model.id, model]]) };
}

/** An adapter that answers with what the provider's batch gave for one item. */
function answering(provider: string, outcome: Exclude<ProviderBatchOutcome, { kind: 'not_run' }>): ProviderAdapter {
  return {
    provider,
    async generate(request): Promise<GenerationResult> {
      if (outcome.kind === 'error') throw outcome.error;
      // As the live adapters do: reasoning the request asked to leave out is not returned.
      if (request.reasoning?.exclude && outcome.result.reasoning !== undefined) {
        const { reasoning: _reasoning, ...rest } = outcome.result;
        return rest;
      }
      return outcome.result;
    },
    async *stream() {
      throw new ProviderError({ provider, kind: 'invalid-response', status: 500, message: 'batch items do not stream' });
    },
  };
}

export interface ProviderBatchWiring {
  engine: EngineDeps;
  /** Bedrock's batch jobs, where the batch bucket and Bedrock's service role are configured (they need both). */
  bedrock?: (endpoint: CatalogEndpoint) => ProviderBatchApi;
  keys: Pick<ApiKeyRepository, 'get'>;
  commits: Pick<ItemCommitter, 'commit'>;
  log: Logger;
}

export function providerBatches(wiring: ProviderBatchWiring): ProviderBatchPort {
  const { engine } = wiring;
  const endpointOf = (key: string) => endpointByKey(engine.catalog, key);
  const bedrockApis = new Map<string, ProviderBatchApi>();
  const batchApiOf = (endpoint: CatalogEndpoint): ProviderBatchApi | undefined => {
    if (endpoint.batch_api !== 'bedrock') return engine.adapters.batchApi(endpoint);
    if (!wiring.bedrock) return undefined;
    const key = endpointKey(endpoint);
    let api = bedrockApis.get(key);
    if (!api) bedrockApis.set(key, api = wiring.bedrock(endpoint));
    return api;
  };
  const apiOf = (batch: Submitted): ProviderBatchApi => {
    const endpoint = endpointOf(batch.provider_batch.endpoint);
    const api = endpoint ? batchApiOf(endpoint) : undefined;
    if (!api) throw new Error(`batch ${batch.id}: its endpoint ${batch.provider_batch.endpoint} has no batch service any more`);
    return api;
  };
  /**
   * The engine a provider batch's items run with: its endpoint at the prices the lease was taken at, its lease,
   * no retries (the answer is given), the gateway's own credentials (the provider's batch ran on them, so no
   * BYOK), and an endpoint health of its own (an answer the provider gave hours ago says nothing of it now).
   */
  const engineOf = (batch: Submitted): EngineDeps => {
    const live = endpointOf(batch.provider_batch.endpoint);
    if (!live) throw new Error(`batch ${batch.id}: its endpoint ${batch.provider_batch.endpoint} is no longer in the catalog`);
    const endpoint = pricedAt(live, batch.provider_batch.pricing);
    return {
      ...withBatchLease(engine, batch.lease),
      catalog: catalogOf(endpoint, engine.catalog),
      byok: undefined,
      // Nor the workspace's private endpoints: the item's answer is the provider batch's, paid by the gateway.
      privateEndpoints: undefined,
      health: new EndpointHealth(),
      config: { ...engine.config, retry: { ...engine.config.retry, maxAttempts: 1, attemptsPerEndpoint: 1 } },
    };
  };

  /**
   * Each item's request as it would go live to this one endpoint (the parameters it does not take left out,
   * the hashed end user the provider is told about live), in the provider's wire format: the lines to submit,
   * and the items refused as a live call would refuse them (their error). Undefined when an item can go live
   * but not in this service's batches (the batch then runs through the gateway).
   */
  const prepare = (batch: BatchRecord, endpoint: CatalogEndpoint, api: ProviderBatchApi, items: readonly BatchItem[]) => {
    const catalog = catalogOf(endpoint, engine.catalog);
    const caller = { orgId: batch.org_id };
    const lines: ProviderBatchLine[] = [];
    const refused: Array<{ item: BatchItem; status: number; message: string }> = [];
    for (const item of items) {
      let generation: GenerationRequest;
      try {
        const request = itemRequest(batch, item);
        const plan = planRoute({ request, catalog, health: engine.health, stickyEndpoint: undefined, now: engine.clock().getTime(), random: engine.random });
        generation = withUser(requestFor(plan.candidates[0]!, request.params), caller, request);
        api.check(generation);
      } catch (err) {
        if (err instanceof DomainError) {
          const failure = httpErrorOf(err);
          refused.push({ item, status: failure.status, message: failure.message });
        } else if (err instanceof ProviderError) refused.push({ item, status: err.status, message: err.message });
        else throw err;
        continue;
      }
      if (api.unbatchable?.(generation)) return undefined;
      lines.push({ customId: `line-${item.line}`, request: generation });
    }
    return { lines, refused };
  };

  return {
    choose(batch, items) {
      const model = batch.model ? engine.catalog.byId.get(batch.model) : undefined;
      const only = batch.provider_only?.map((slug) => slug.toLowerCase());
      const takes = (api: ProviderBatchApi | undefined) => api !== undefined && (items === undefined || items >= (api.minItems ?? 1));
      const endpoint = model?.endpoints.find((candidate) => candidate.batch_api && (!only || only.includes(candidate.provider.toLowerCase())) && takes(batchApiOf(candidate)));
      if (!endpoint) return undefined;
      const prices = batchPriced(endpoint).pricing;
      return {
        api: endpoint.batch_api!, endpoint: endpointKey(endpoint),
        pricing: {
          prompt: prices.prompt.toString(), completion: prices.completion.toString(), request: prices.request.toString(),
          input_cache_read: prices.input_cache_read.toString(), input_cache_write: prices.input_cache_write.toString(), internal_reasoning: prices.internal_reasoning.toString(),
        },
      };
    },

    async fits(batch, choice, items) {
      const endpoint = endpointOf(choice.endpoint);
      const api = endpoint ? batchApiOf(endpoint) : undefined;
      if (!endpoint || !api) return false;
      // A provider batch runs on the gateway's credentials: where the caller's own BYOK credentials would serve
      // (or must serve) any of its items live, the batch runs through the gateway, where they do.
      const credentials = engine.byok ? await engine.byok.credentialsFor(batch.org_id) : [];
      if (credentials.length > 0) {
        const users = new Set(items.map((item) => (typeof item.body.user === 'string' ? item.body.user : undefined)));
        for (const user of users) {
          const { first, shared, last } = endpointCredentials(endpoint, credentials, { workspaceId: batch.workspace_id, keyHash: batch.key_hash, user });
          if (first.length > 0 || last.length > 0 || !shared) return false;
        }
      }
      const prepared = prepare(batch, pricedAt(endpoint, choice.pricing), api, items);
      return prepared !== undefined && prepared.lines.length >= (api.minItems ?? 1);
    },

    async submit(batch, items) {
      const api = apiOf(batch);
      const prepared = prepare(batch, pricedAt(endpointOf(batch.provider_batch.endpoint)!, batch.provider_batch.pricing), api, items);
      // Validation made sure every item fits (fits()); an item that no longer does is that item's error.
      const { lines, refused } = prepared ?? { lines: [], refused: items.map((item) => ({ item, status: 400, message: 'The provider\'s batch service cannot take this request' })) };
      if (lines.length === 0) return { id: null, refused };
      // A submission that may have reached the provider before its id was stored is not made twice (where the
      // provider can be asked for it: OpenAI finds it by its metadata, Bedrock by the job's client request token).
      const earlier = batch.provider_batch.submitting ? await api.find(batch.id) : undefined;
      if (earlier) wiring.log.warn('provider batch found submitted already: not submitted again', { batch_id: batch.id, provider_batch_id: earlier });
      return { id: earlier ?? await api.submit(lines, { gateway_batch_id: batch.id }), refused };
    },

    async ended(batch) {
      return (await apiOf(batch).status(batch.provider_batch.id!)).ended;
    },

    async collect(batch, items) {
      const outcomes = await apiOf(batch).results(batch.provider_batch.id!);
      const base = engineOf(batch);
      const notRun: BatchItem[] = [];
      const answered: Array<{ item: BatchItem; outcome: Exclude<ProviderBatchOutcome, { kind: 'not_run' }> }> = [];
      for (const item of items) {
        const outcome = outcomes.get(`line-${item.line}`);
        if (!outcome || outcome.kind === 'not_run') notRun.push(item);
        else answered.push({ item, outcome });
      }
      const byLine = new Map(answered.map(({ item, outcome }) => [item.line, outcome]));
      const run = batchItemRunner({
        engine: base,
        keys: wiring.keys,
        commits: wiring.commits,
        // The provider ran it on the gateway's account: charged even if the key was disabled since.
        chargeDisabledKey: true,
        engineFor: (_batch, item) => {
          const adapter = answering(base.catalog.models[0]!.endpoints[0]!.provider, byLine.get(item.line)!);
          return { ...base, adapters: { get: async () => adapter, batchApi: () => undefined } as unknown as AdapterRegistry };
        },
      });
      const signal = new AbortController().signal;
      let next = 0;
      let failure: { error: unknown } | undefined;
      // As a shard does: the first failure starts no new item, and the step fails only once those running have
      // ended (nothing of it outlives it: the lease's spend is read after it).
      await Promise.all(Array.from({ length: Math.min(COLLECT_CONCURRENCY, answered.length) }, async () => {
        while (next < answered.length && !failure) {
          try {
            await run(batch, answered[next++]!.item, signal);
          } catch (error) {
            failure ??= { error };
          }
        }
      }));
      if (failure) throw failure.error;
      return notRun;
    },

    async cancel(batch) {
      try {
        await apiOf(batch).cancel(batch.provider_batch.id!);
      } catch (err) {
        // Already ended (the provider refuses to cancel it): nothing to stop.
        if (!(err instanceof ProviderError) || err.status >= 500) throw err;
        wiring.log.info('provider batch not cancelled: it has ended', { batch_id: batch.id, provider_batch_id: batch.provider_batch.id, status: err.status });
      }
    },

  };
}
