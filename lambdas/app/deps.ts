// The process's ports (repositories, the vault, the inference engine), wired once per Lambda instance (and
// once per local process) from the configuration read then; app/management-operations.ts hands each feature
// just the ones it uses.
import { createDocumentClient, type StoreConfig } from '../platform/dynamo/client.js';
import { ApiKeyRepository, KeyCache, type AuthDeps } from '../keys/index.js';
import { MemberRepository, OrganizationRepository, WorkspaceRepository } from '../organizations/index.js';
import { CreditRepository } from '../credits/index.js';
import { InternRepository } from '../interns/index.js';
import { RollupRepository } from '../billing/rollup-repository.js';
import { Vault, VaultRepository } from '../vault/index.js';
import { ByokRepository, ByokSource } from '../byok/index.js';
import { PresetRepository } from '../presets/index.js';
import { GuardrailRepository } from '../guardrails/index.js';
import { EndUserRepository } from '../end-users/index.js';
import { DESTINATION_CACHE_TTL_MS, DestinationRepository, DestinationSecrets, DestinationSource, ObservabilityOutbox, SqsDeliveryQueue } from '../observability/index.js';
import { createSqsClient } from '../platform/aws/sqs.js';
import { PrivateEndpointRepository, PrivateEndpointSource } from '../private-endpoints/index.js';
import { ScimRepository } from '../scim/index.js';
import { AwsKms, type KmsConfig } from '../platform/aws/kms.js';
import { Logger, type LogSink } from '../platform/logger.js';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

import type { EngineDeps } from '../inference/engine.js';
import { createEngineDeps, WORKSPACE_CACHE_TTL_MS } from './engine-deps.js';
import { createAggregator } from './aggregator-deps.js';
import type { MeterAggregator } from '../billing/aggregator.js';
import { gatewayEnvironment } from '../platform/aws/provider-secrets.js';
import { readConfig, type GatewayConfig } from './config.js';

export interface GatewayDeps extends AuthDeps {
  organizations: OrganizationRepository;
  /** Workspaces and their budgets. */
  workspaces: WorkspaceRepository;
  /** Credit grants (they raise an organization's credits). */
  credits: CreditRepository;
  /** Hourly usage rollups, for the reports. */
  rollups: RollupRepository;
  /** Secrets per workspace and intern, under KMS envelope encryption; undefined without a KMS key. */
  vault: Vault | undefined;
  /** Interns (their secrets are the vault's). */
  interns: InternRepository;
  /** BYOK provider credentials (sealed). */
  byok: ByokRepository;
  /** Presets and their versions. */
  presets: PresetRepository;
  /** Guardrails and their key assignments. */
  guardrails: GuardrailRepository;
  /** The people of each organization and their workspaces. */
  members: MemberRepository;
  /** End users the organizations registered, with their limits and meters. */
  endUsers: EndUserRepository;
  /** Workspaces' own deployments of catalog models. */
  privateEndpoints: PrivateEndpointRepository;
  /** What the identity provider pushed (SCIM users and groups), group mappings and sync jobs. */
  scim: ScimRepository;
  /** Observability destinations: stored, cached for delivery, their secrets sealed (without a vault: none), and the delivery queue (none without one configured). */
  observability: {
    destinations: DestinationRepository;
    source: DestinationSource;
    secrets: DestinationSecrets | undefined;
    queue: SqsDeliveryQueue | undefined;
    deadLetters: SqsDeliveryQueue | undefined;
  };
  /** The inference engine: catalog, provider adapters, routing state, generation records. */
  engine: EngineDeps;
  /** Applies pages of generation records to the meters (behind the table's stream). */
  aggregator: MeterAggregator;
  /** The one logger of the process, shared with the engine; the local runtime points its sink elsewhere. */
  log: Logger;
  /** How long a process may serve requests from a cached copy of a key or workspace (the longer cache lifetime). */
  leaseTermsLagMs: number;
  /** The configuration these deps were built from. */
  config: GatewayConfig;
  /** The table and its client (for ports built later: app/batch-deps.ts). */
  store: { db: DynamoDBDocumentClient; tableName: string };
}

/** The vault over KMS when GATEWAY_KMS_KEY_ID names a key (the CDK stack's, or npm start's local KMS). */
export function createVault(db: DynamoDBDocumentClient, tableName: string, kms: KmsConfig | undefined, clock: () => Date = () => new Date()): Vault | undefined {
  return kms ? new Vault(new VaultRepository(db, tableName), new AwsKms(kms), clock) : undefined;
}

/** What a caller may wire differently from the configuration (the tests: their own table, clock and log sink). */
export interface DepsWiring {
  db?: DynamoDBDocumentClient;
  tableName?: string;
  clock?: () => Date;
  log?: LogSink;
  /** Cache lifetimes of keys, workspaces and BYOK credentials (0: every request reads the store). */
  keyCacheTtlMs?: number;
  workspaceCacheTtlMs?: number;
  credentialCacheTtlMs?: number;
}

/** The table named by TABLE_NAME, through a client configured as the environment says. */
function storeOf(config: StoreConfig | undefined): { db: DynamoDBDocumentClient; tableName: string } {
  if (!config) throw new Error('TABLE_NAME is not set');
  return { db: createDocumentClient(config), tableName: config.tableName };
}

export function createDeps(config: GatewayConfig, wiring: DepsWiring = {}): GatewayDeps {
  const { db, tableName } = wiring.db && wiring.tableName ? { db: wiring.db, tableName: wiring.tableName } : storeOf(config.store);
  const log = new Logger(wiring.log ?? ((line: string) => console.log(line)));
  const clock = wiring.clock ?? (() => new Date());
  const keyCache = new KeyCache(wiring.keyCacheTtlMs ?? config.keyCacheTtlMs);
  const vault = createVault(db, tableName, config.kms, clock);
  const byok = new ByokRepository(db, tableName);
  const engine = createEngineDeps(db, tableName, config, {
    log,
    clock,
    ...(config.leaseOwner ? { leaseOwner: config.leaseOwner } : {}),
    keySeen: (key) => keyCache.set(key.hash, key),
    presetCacheTtlMs: wiring.keyCacheTtlMs ?? config.keyCacheTtlMs,
    ...(wiring.workspaceCacheTtlMs !== undefined ? { workspaceCacheTtlMs: wiring.workspaceCacheTtlMs } : {}),
  });
  if (vault) engine.byok = new ByokSource(byok, vault, wiring.credentialCacheTtlMs);
  const privateEndpoints = new PrivateEndpointRepository(db, tableName);
  engine.privateEndpoints = new PrivateEndpointSource(privateEndpoints, vault, !config.privateEndpointsAllowPrivateHosts, wiring.keyCacheTtlMs ?? config.keyCacheTtlMs);
  const destinations = new DestinationRepository(db, tableName);
  const sqs = config.observability.queueUrl ? createSqsClient({ endpoint: config.observability.sqsEndpoint, region: config.batches.region }) : undefined;
  const observability = {
    destinations,
    source: new DestinationSource(destinations, wiring.keyCacheTtlMs ?? DESTINATION_CACHE_TTL_MS),
    secrets: vault ? new DestinationSecrets(vault) : undefined,
    queue: sqs && config.observability.queueUrl ? new SqsDeliveryQueue(sqs, config.observability.queueUrl) : undefined,
    deadLetters: sqs && config.observability.deadLetterUrl ? new SqsDeliveryQueue(sqs, config.observability.deadLetterUrl) : undefined,
  };
  if (observability.queue) engine.observability = new ObservabilityOutbox({ destinations: observability.source, queue: observability.queue, log });
  const keys = new ApiKeyRepository(db, tableName);
  return {
    keys,
    store: { db, tableName },
    organizations: new OrganizationRepository(db, tableName),
    workspaces: new WorkspaceRepository(db, tableName),
    credits: new CreditRepository(db, tableName),
    rollups: new RollupRepository(db, tableName),
    vault,
    interns: new InternRepository(db, tableName),
    byok,
    presets: new PresetRepository(db, tableName),
    guardrails: new GuardrailRepository(db, tableName),
    members: new MemberRepository(db, tableName),
    endUsers: new EndUserRepository(db, tableName),
    privateEndpoints,
    scim: new ScimRepository(db, tableName),
    observability,
    engine,
    aggregator: createAggregator(db, tableName, { log, clock }),
    keyCache,
    leaseTermsLagMs: Math.max(wiring.keyCacheTtlMs ?? config.keyCacheTtlMs, wiring.workspaceCacheTtlMs ?? WORKSPACE_CACHE_TTL_MS),
    clock,
    operatorKeyText: config.operatorKeyText,
    log,
    config,
  };
}

let shared: Promise<GatewayDeps> | undefined;

/**
 * The process-wide deps, built once from the configuration read once (a Lambda cold start reads the provider
 * secret here); the inference and management handlers share them, and their key cache, locally.
 */
export function defaultDeps(): Promise<GatewayDeps> {
  shared ??= gatewayEnvironment().then((env) => createDeps(readConfig(env)));
  shared.catch(() => { shared = undefined; });
  return shared;
}
