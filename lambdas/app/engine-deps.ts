// Wires the inference engine once per process from its configuration (app/config.ts reads it).
import { setTimeout as delay } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { catalogOf, type CatalogConfig } from '../catalog/index.js';
import { AdapterRegistry, type CredentialSource } from '../providers/registry.js';
import { GenerationRepository } from '../generations/index.js';
import { LedgerRepository } from '../billing/ledger-repository.js';
import { meteredItemCodecs } from './aggregator-deps.js';
import { EndpointFailureRepository } from '../catalog/index.js';
import { WorkspaceRepository } from '../organizations/index.js';
import { Ledger } from '../billing/ledger.js';
import { GenerationIds, PageWriter } from '../billing/pages.js';
import { LeasePool } from '../billing/leases.js';
import { emfMetrics } from '../billing/metrics.js';
import { randomBytes } from 'node:crypto';
import { PageRepository } from '../billing/page-repository.js';
import { RecordCache } from '../platform/record-cache.js';
import type { ApiKey } from '../keys/index.js';
import type { Workspace } from '../organizations/index.js';
import { EndpointHealth, StickySessions } from '../inference/endpoint-health.js';
import { ShutdownSwitch } from '../platform/shutdown.js';
import { DEFAULT_ENGINE_CONFIG, type EngineConfig, type EngineDeps } from '../inference/engine.js';
import { consoleLogger, type Logger } from '../platform/logger.js';
import { PresetRepository, PresetSource } from '../presets/index.js';
import { GuardrailRepository, GuardrailSource } from '../guardrails/index.js';
import { EndUserRepository, EndUserSource } from '../end-users/index.js';

function positiveInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer (milliseconds), got "${raw}"`);
  return value;
}

export function engineConfigFromEnv(env: NodeJS.ProcessEnv = process.env): EngineConfig {
  const requestTimeoutMs = positiveInt(env, 'GATEWAY_REQUEST_TIMEOUT_MS', DEFAULT_ENGINE_CONFIG.requestTimeoutMs);
  return {
    ...DEFAULT_ENGINE_CONFIG,
    requestTimeoutMs,
    // Per attempt, by default the whole deadline: a slow but healthy generation is not cut and retried
    // (which the provider would bill twice). Set lower to fail over from a hung endpoint sooner.
    firstByteTimeoutMs: Math.min(requestTimeoutMs, positiveInt(env, 'GATEWAY_UPSTREAM_TIMEOUT_MS', requestTimeoutMs)),
    streamIdleTimeoutMs: positiveInt(env, 'GATEWAY_STREAM_IDLE_TIMEOUT_MS', DEFAULT_ENGINE_CONFIG.streamIdleTimeoutMs),
    keepAliveMs: positiveInt(env, 'GATEWAY_KEEPALIVE_MS', DEFAULT_ENGINE_CONFIG.keepAliveMs),
    region: env.AWS_REGION || DEFAULT_ENGINE_CONFIG.region,
    leases: env.GATEWAY_LEASES !== 'off',
    pageFlushMs: positiveInt(env, 'GATEWAY_PAGE_FLUSH_MS', DEFAULT_ENGINE_CONFIG.pageFlushMs),
  };
}

/** What the engine is built from: its part of the GatewayConfig. */
export interface EngineSettings {
  engine: EngineConfig;
  catalog: CatalogConfig;
  credentials: CredentialSource;
}

export interface EngineWiring {
  log?: Logger;
  /** Wall clock for reset windows and timestamps (tests move it). */
  clock?: () => Date;
  /** Told about a fresher copy of an API key seen while reserving (the key cache takes it). */
  keySeen?: (key: ApiKey) => void;
  workspaceCacheTtlMs?: number;
  /** How long a preset's designated version is served from the cache (as keys are). */
  presetCacheTtlMs?: number;
  /**
   * Who holds this process's leases and exact holds (GATEWAY_LEASE_OWNER): npm start names itself after its
   * data directory, so that a restart takes back what a crashed predecessor held; elsewhere a fresh name per
   * process.
   */
  leaseOwner?: string;
}

/** How long the ledger serves a workspace's budgets from its cache. */
export const WORKSPACE_CACHE_TTL_MS = 2000;

export function createLedger(db: DynamoDBDocumentClient, tableName: string, wiring: EngineWiring = {}): Ledger {
  return new Ledger({
    repository: new LedgerRepository(db, tableName, meteredItemCodecs),
    codecs: meteredItemCodecs,
    workspaces: new WorkspaceRepository(db, tableName),
    workspaceCache: new RecordCache<Workspace>(wiring.workspaceCacheTtlMs ?? WORKSPACE_CACHE_TTL_MS),
    ...(wiring.keySeen ? { keySeen: wiring.keySeen } : {}),
    ...(wiring.leaseOwner ? { owner: wiring.leaseOwner } : {}),
    clock: wiring.clock ?? (() => new Date()),
    random: Math.random,
    sleep: (ms) => delay(ms),
    log: wiring.log ?? consoleLogger(),
  });
}

export function createEngineDeps(db: DynamoDBDocumentClient, tableName: string, settings: EngineSettings, wiring: EngineWiring = {}): EngineDeps {
  const log = wiring.log ?? consoleLogger();
  const clock = wiring.clock ?? (() => new Date());
  const generations = new GenerationRepository(db, tableName);
  const owner = wiring.leaseOwner ?? `process-${randomBytes(9).toString('base64url')}`;
  const ledger = createLedger(db, tableName, { ...wiring, log, leaseOwner: owner });
  const sleep = (ms: number) => delay(ms);
  const leases = settings.engine.leases
    ? new LeasePool({
      ledger: {
        headroom: (key, workspace) => ledger.headroom(key, workspace),
        takeLease: (key, workspace, amount, useUntil) => ledger.takeLease(key, workspace, amount, useUntil, owner),
        returnLease: (grant, spent) => ledger.returnLease(grant, spent),
      },
      owner,
      now: () => clock().getTime(),
      log,
    })
    : undefined;
  return {
    catalog: catalogOf(settings.catalog),
    adapters: new AdapterRegistry(settings.credentials),
    health: new EndpointHealth(),
    sessions: new StickySessions(),
    generations,
    ledger,
    pages: new PageWriter({ store: new PageRepository(db, tableName), log, sleep, flushDelayMs: settings.engine.pageFlushMs }),
    generationIds: new GenerationIds(),
    ...(leases ? { leases } : {}),
    endpointFailures: new EndpointFailureRepository(db, tableName),
    presets: new PresetSource(new PresetRepository(db, tableName), wiring.presetCacheTtlMs),
    guardrails: new GuardrailSource(new GuardrailRepository(db, tableName), wiring.presetCacheTtlMs),
    endUsers: new EndUserSource(new EndUserRepository(db, tableName), wiring.presetCacheTtlMs),
    clock,
    config: settings.engine,
    now: () => performance.now(),
    random: Math.random,
    sleep: (ms, signal) => delay(ms, undefined, { signal }).catch(() => undefined),
    log,
    metrics: emfMetrics(log),
    shutdown: new ShutdownSwitch(),
  };
}
