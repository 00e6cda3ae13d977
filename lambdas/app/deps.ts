// The process's ports (repositories, the vault, the inference engine), wired once per Lambda instance (and
// once per local process); app/operations.ts hands each feature just the ones it uses.
import { createDocumentClient, storeConfigFromEnv } from '../platform/dynamo/client.js';
import { ApiKeyRepository, KeyCache, type AuthDeps } from '../keys/index.js';
import { OrganizationRepository } from '../organizations/index.js';
import { RollupRepository } from '../billing/rollup-repository.js';
import { Vault, VaultRepository } from '../vault/index.js';
import { ByokRepository, ByokSource } from '../byok/index.js';
import { AwsKms, kmsConfigFromEnv } from '../platform/aws/kms.js';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

import type { EngineDeps } from '../inference/engine.js';
import { createEngineDeps } from '../inference/engine-deps.js';
import { gatewayEnvironment } from '../platform/aws/provider-secrets.js';

export interface GatewayDeps extends AuthDeps {
  organizations: OrganizationRepository;
  /** Hourly usage rollups, for the reports. */
  rollups: RollupRepository;
  /** Secrets per workspace and intern, under KMS envelope encryption; undefined without a KMS key. */
  vault: Vault | undefined;
  /** Interns (and the vault's rows). */
  interns: VaultRepository;
  /** BYOK provider credentials (sealed). */
  byok: ByokRepository;
  /** The inference engine: catalog, provider adapters, routing state, generation records. */
  engine: EngineDeps;
  log: (line: string) => void;
}

/** The vault over KMS when GATEWAY_KMS_KEY_ID names a key (the CDK stack's, or npm start's local KMS). */
export function createVault(db: DynamoDBDocumentClient, tableName: string, env: NodeJS.ProcessEnv, clock: () => Date = () => new Date()): Vault | undefined {
  const kms = kmsConfigFromEnv(env);
  return kms ? new Vault(new VaultRepository(db, tableName), new AwsKms(kms), clock) : undefined;
}

export function createDeps(env: NodeJS.ProcessEnv = process.env): GatewayDeps {
  const config = storeConfigFromEnv(env);
  const db = createDocumentClient(config);
  const log = (line: string) => console.log(line);
  const keyCache = new KeyCache(Number(env.GATEWAY_KEY_CACHE_TTL_MS ?? 2000));
  const vault = createVault(db, config.tableName, env);
  const byok = new ByokRepository(db, config.tableName);
  const engine = createEngineDeps(db, config.tableName, env, { log, keySeen: (key) => keyCache.set(key.hash, key) });
  if (vault) engine.byok = new ByokSource(byok, vault);
  return {
    keys: new ApiKeyRepository(db, config.tableName),
    organizations: new OrganizationRepository(db, config.tableName),
    rollups: new RollupRepository(db, config.tableName),
    vault,
    interns: new VaultRepository(db, config.tableName),
    byok,
    engine,
    keyCache,
    clock: () => new Date(),
    operatorKeyText: env.GATEWAY_ADMIN_KEY || undefined,
    log,
  };
}

let shared: Promise<GatewayDeps> | undefined;

/**
 * The process-wide deps, built once (a Lambda cold start reads the provider secret here); the inference
 * and management handlers share them, and their key cache, locally.
 */
export function defaultDeps(): Promise<GatewayDeps> {
  shared ??= gatewayEnvironment().then((env) => createDeps(env));
  shared.catch(() => { shared = undefined; });
  return shared;
}
