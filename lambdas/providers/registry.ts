// One adapter per catalog endpoint, created on first use with the endpoint's credentials.
import type { CatalogEndpoint } from '../catalog/index.js';
import { endpointKey } from '../catalog/index.js';
import type { FetchLike, ProviderAdapter } from './types.js';
import { createOpenAIChatAdapter } from './openai/openai-chat-adapter.js';
import { nodeFetch, publicOnlyFetch } from './http-client.js';
import { createOpenAIResponsesAdapter } from './openai/openai-responses-adapter.js';
import { createAnthropicAdapter } from './anthropic/anthropic-adapter.js';
import { createGeminiAdapter } from './google/gemini-adapter.js';
import { createOpenAISpeechAdapter } from './speech/openai-speech-adapter.js';
import { createElevenLabsAdapter } from './speech/elevenlabs-adapter.js';
import { createAnthropicBatchApi, createOpenAIBatchApi, type ProviderBatchApi } from './batch-api.js';

/** Where credentials come from: the environment locally, Secrets Manager on AWS. */
export interface CredentialSource {
  get(name: string): string | undefined;
}

export const envCredentials = (env: NodeJS.ProcessEnv = process.env): CredentialSource => ({ get: (name) => env[name] || undefined });

export class AdapterRegistry {
  private readonly adapters = new Map<string, Promise<ProviderAdapter>>();

  constructor(private readonly credentials: CredentialSource, private readonly fetchFn: FetchLike = nodeFetch) {}

  /** @param credential a customer's own key (BYOK) to use instead of the gateway's. */
  /** `credential.publicOnly`: the customer's own host, reached only at public addresses (a private endpoint). */
  get(endpoint: CatalogEndpoint, credential?: { id: string; apiKey: string; publicOnly?: boolean }): Promise<ProviderAdapter> {
    // A customer's key is used for this call only: never kept in the process beyond it.
    if (credential) return this.create(endpoint, credential.apiKey, credential.publicOnly ? publicOnlyFetch() : undefined);
    const key = endpointKey(endpoint);
    let adapter = this.adapters.get(key);
    if (!adapter) {
      adapter = this.create(endpoint);
      adapter.catch(() => this.adapters.delete(key));
      this.adapters.set(key, adapter);
    }
    return adapter;
  }

  /** The endpoint's provider batch service (catalog `batch_api`), with the gateway's credentials; undefined without one. */
  batchApi(endpoint: CatalogEndpoint): ProviderBatchApi | undefined {
    // Bedrock's jobs need the batch bucket and a service role: the batch steps make their client (app/batch-deps.ts).
    if (!endpoint.batch_api || endpoint.batch_api === 'bedrock') return undefined;
    const settings = { provider: endpoint.provider, baseURL: endpoint.base_url ?? '', apiKey: endpoint.credential ? this.credentials.get(endpoint.credential) : undefined, fetch: this.fetchFn };
    return endpoint.batch_api === 'openai' ? createOpenAIBatchApi(settings) : createAnthropicBatchApi(settings);
  }

  private async create(endpoint: CatalogEndpoint, byokKey?: string, fetchFn?: FetchLike): Promise<ProviderAdapter> {
    const apiKey = byokKey ?? (endpoint.credential ? this.credentials.get(endpoint.credential) : undefined);
    const common = { provider: endpoint.provider, baseURL: endpoint.base_url ?? '', apiKey, fetch: fetchFn ?? this.fetchFn };
    switch (endpoint.adapter) {
      case 'openai-chat': return createOpenAIChatAdapter(common);
      case 'openai-responses': return createOpenAIResponsesAdapter(common);
      case 'anthropic': return createAnthropicAdapter(common);
      case 'gemini': return createGeminiAdapter(common);
      case 'openai-speech': return createOpenAISpeechAdapter(common);
      case 'elevenlabs': return createElevenLabsAdapter(common);
      case 'bedrock': {
        // Loaded on first use: the Bedrock SDK client is the largest part of the bundle and most deployments do not need it.
        const { createBedrockAdapter } = await import('./bedrock/bedrock-adapter.js');
        return createBedrockAdapter({ provider: endpoint.provider, ...(endpoint.base_url ? { endpoint: endpoint.base_url } : {}) });
      }
    }
  }
}
