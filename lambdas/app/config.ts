// The gateway's configuration: every environment variable the functions read, parsed once per process
// (defaultDeps) into typed settings that the composition root hands to the modules (README, "Configuration").
import { storeConfigFromEnv, type StoreConfig } from '../platform/dynamo/client.js';
import { kmsConfigFromEnv, type KmsConfig } from '../platform/aws/kms.js';
import { catalogConfigFromEnv, type CatalogConfig } from '../catalog/index.js';
import { envCredentials, type CredentialSource } from '../providers/registry.js';
import { vaultSettingsFromEnv, type VaultSettings } from '../vault/index.js';
import type { EngineConfig } from '../inference/engine.js';
import { engineConfigFromEnv } from './engine-deps.js';
import { batchConfigFromEnv, type BatchConfig } from '../batches/config.js';
import { observabilityConfigFromEnv, type ObservabilityConfig } from '../observability/config-env.js';

export interface GatewayConfig {
  /** TABLE_NAME and its client; undefined without TABLE_NAME (the caller then wires its own table, as tests do). */
  store: StoreConfig | undefined;
  /** GATEWAY_KMS_KEY_ID: undefined without a key, and then the vault and BYOK routes answer 503. */
  kms: KmsConfig | undefined;
  engine: EngineConfig;
  catalog: CatalogConfig;
  /** The gateway's provider credentials by variable name (OPENAI_API_KEY …), as the environment had them. */
  credentials: CredentialSource;
  /** GATEWAY_KEY_CACHE_TTL_MS: how long a function instance caches a key record. */
  keyCacheTtlMs: number;
  /** GATEWAY_ADMIN_KEY: the operator's key text, when set. */
  operatorKeyText: string | undefined;
  /** GATEWAY_LEASE_OWNER: who holds this process's budget leases (npm start: its data directory's name for it). */
  leaseOwner: string | undefined;
  vault: VaultSettings;
  /** The batch bucket and queue, and how batch steps run. */
  batches: BatchConfig;
  /** The delivery queue of observability destinations, and its retries. */
  observability: ObservabilityConfig;
  /** GATEWAY_PRIVATE_ENDPOINT_PRIVATE_HOSTS=allow: private endpoints on private and loopback addresses (npm start sets it). */
  privateEndpointsAllowPrivateHosts: boolean;
}

/** Throws on a malformed value (a timeout that is not a positive integer); the catalog file is read by createDeps. */
export function readConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  return {
    store: env.TABLE_NAME ? storeConfigFromEnv(env) : undefined,
    kms: kmsConfigFromEnv(env),
    engine: engineConfigFromEnv(env),
    catalog: catalogConfigFromEnv(env),
    // A copy: credentials are what the process started with (and the provider secret added), never re-read.
    credentials: envCredentials({ ...env }),
    keyCacheTtlMs: Number(env.GATEWAY_KEY_CACHE_TTL_MS ?? 2000),
    operatorKeyText: env.GATEWAY_ADMIN_KEY || undefined,
    leaseOwner: env.GATEWAY_LEASE_OWNER || undefined,
    vault: vaultSettingsFromEnv(env),
    batches: batchConfigFromEnv(env),
    observability: observabilityConfigFromEnv(env),
    privateEndpointsAllowPrivateHosts: env.GATEWAY_PRIVATE_ENDPOINT_PRIVATE_HOSTS === 'allow',
  };
}
