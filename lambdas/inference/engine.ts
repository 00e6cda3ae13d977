// The inference engine's ports and configuration: who calls (Caller), what it needs (EngineDeps) and its
// timeouts. The pipeline itself is run-generation.ts; its stages are attempts.ts (retries and fallbacks),
// settlement.ts (the hold), provider-failure.ts (failures as domain errors), trace.ts and middleware.ts.
import type { Catalog } from '../catalog/index.js';
import type { AdapterRegistry } from '../providers/registry.js';
import type { GenerationRepository } from '../generations/index.js';
import type { Ledger } from '../billing/ledger.js';
import { FLUSH_DELAY_MS, type GenerationIds, type PageWriter } from '../billing/pages.js';
import type { LeasePool } from '../billing/leases.js';
import type { GenerationMetrics } from '../billing/metrics.js';
import type { EndpointFailureRepository } from '../catalog/index.js';
import type { ApiKey } from '../keys/index.js';
import type { ByokSource } from '../byok/index.js';
import type { PresetSource } from '../presets/index.js';
import type { GuardrailSource } from '../guardrails/index.js';
import type { EndUserSource } from '../end-users/index.js';
import type { ObservabilityOutbox } from '../observability/index.js';
import type { PrivateEndpointSource } from '../private-endpoints/index.js';
import type { EndpointHealth, StickySessions } from './endpoint-health.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-policy.js';
import type { ShutdownSwitch } from '../platform/shutdown.js';
import type { Logger } from '../platform/logger.js';

export interface Caller {
  orgId: string;
  workspaceId: string;
  keyHash: string;
  /** The calling key as authentication saw it: its limit terms go into the reservation. */
  key: ApiKey;
  /** DynamoDB read capacity spent on finding the key (0 when cached) and on what the request read ahead (its workspace). */
  readUnits?: number;
}

export interface EngineConfig {
  /**
   * The one deadline of a request, from its start to its reply (non-streaming) or its first stream event:
   * every attempt, retry and fallback happens within it; past it the reply is a 408.
   */
  requestTimeoutMs: number;
  /** Longest wait of one attempt for its reply or first stream event (never more than what is left of the deadline). */
  firstByteTimeoutMs: number;
  /** A retry or fallback starts only with at least this much of the deadline left. */
  minAttemptMs: number;
  /** Longest silence between two stream events once streaming. */
  streamIdleTimeoutMs: number;
  /** SSE keep-alive comment interval; also how long a stream waits for its first event before committing to 200. */
  keepAliveMs: number;
  retry: RetryPolicy;
  region: string;
  /** Budget leases (GATEWAY_LEASES, on unless `off`): requests reserve from a process's lease in memory. */
  leases: boolean;
  /**
   * How long a finished record waits for others to share its page (GATEWAY_PAGE_FLUSH_MS; pages.ts
   * FLUSH_DELAY_MS by default). Only a process that shares pages waits (npm start); Lambda writes each
   * invocation's page at its end.
   */
  pageFlushMs: number;
}

export const DEFAULT_ENGINE_CONFIG: EngineConfig = {
  requestTimeoutMs: 120_000,
  firstByteTimeoutMs: 120_000,
  minAttemptMs: 1_000,
  streamIdleTimeoutMs: 120_000,
  keepAliveMs: 10_000,
  retry: DEFAULT_RETRY_POLICY,
  region: 'local',
  leases: true,
  pageFlushMs: FLUSH_DELAY_MS,
};

export interface EngineDeps {
  catalog: Catalog;
  adapters: AdapterRegistry;
  health: EndpointHealth;
  sessions: StickySessions;
  generations: GenerationRepository;
  /** Reserves before the provider call, and gives back a hold that ends without a record. */
  ledger: Ledger;
  /** Where finished generations' records go (in pages); the meter aggregator settles their holds. */
  pages: Pick<PageWriter, 'add' | 'flush' | 'shared' | 'journaled' | 'provisional' | 'withdraw'>;
  /** Budget leases the process reserves from in memory (absent: every request holds exactly). */
  leases?: LeasePool;
  /** Generation ids, which name the page block their record is stored under. */
  generationIds: Pick<GenerationIds, 'next'>;
  /** Per-endpoint counts of attempts that failed before a first byte (uptime; written after the reply). */
  endpointFailures: EndpointFailureRepository;
  /** Customers' own provider credentials; absent where no KMS key is configured. */
  byok?: ByokSource;
  /** Each organization's guardrails (cached); absent: none are enforced. */
  guardrails?: Pick<GuardrailSource, 'policyFor' | 'invalidate'> & Partial<Pick<GuardrailSource, 'warm'>>;
  /** Each organization's registered end users (cached): their limits and meters; absent: none are counted. */
  endUsers?: Pick<EndUserSource, 'find' | 'reload' | 'invalidate'>;
  /** Where each stored generation is handed for delivery to the organization's observability destinations; absent: nowhere. */
  observability?: Pick<ObservabilityOutbox, 'mayObserve' | 'observe' | 'flush' | 'shared'>;
  /** Each organization's active private endpoints (cached) and their upstream keys; absent: none are routed to. */
  privateEndpoints?: Pick<PrivateEndpointSource, 'activeFor' | 'apiKey' | 'invalidate' | 'publicOnly'> & Partial<Pick<PrivateEndpointSource, 'warm'>>;
  /** Presets requests name (`@preset/<slug>`), cached like keys; absent: a request naming one gets a 404. */
  presets?: Pick<PresetSource, 'resolve' | 'saved'>;
  config: EngineConfig;
  /** Monotonic milliseconds, for durations. */
  now: () => number;
  /** Wall clock, for timestamps and reset windows. */
  clock: () => Date;
  random: () => number;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  log: Logger;
  /** Each stored generation's metrics (an EMF line in the log on Lambda). */
  metrics: GenerationMetrics;
  /** Triggered when a long-lived process shuts down: in-flight requests end early and settle. */
  shutdown: ShutdownSwitch;
}
