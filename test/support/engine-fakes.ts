// The inference engine's ports over fakes, for unit tests of the pipeline: a given catalog, adapters,
// ledger and page writer, a test-driven monotonic clock (the wall clock follows it), no endpoint-failure writes.
import { DEFAULT_ENGINE_CONFIG, type EngineConfig, type EngineDeps } from '../../lambdas/inference/engine.js';
import { EndpointHealth, StickySessions } from '../../lambdas/inference/endpoint-health.js';
import type { InferenceRequest } from '../../lambdas/inference/inference-request.js';
import { ShutdownSwitch } from '../../lambdas/platform/shutdown.js';
import { Logger } from '../../lambdas/platform/logger.js';
import type { Catalog } from '../../lambdas/catalog/index.js';
import type { ByokSource } from '../../lambdas/byok/index.js';
import type { AdapterRegistry } from '../../lambdas/providers/registry.js';
import type { GenerationRepository } from '../../lambdas/generations/generation-repository.js';
import type { EndpointFailureRepository } from '../../lambdas/catalog/endpoint-failure-repository.js';
import { GenerationIds, type Claim, type PageEntry, type StoredEntry } from '../../lambdas/billing/pages.js';
import { recordToAttributes } from '../../lambdas/billing/generation-record.js';
import { emfMetrics } from '../../lambdas/billing/metrics.js';

export interface FakeEngineParts {
  catalog: Catalog;
  adapters: unknown;
  ledger: unknown;
  /** Where records go (default: a FakePages of its own). */
  pages?: FakePages;
  byok?: unknown;
  config?: Partial<EngineConfig>;
  /** The monotonic clock (ms); the wall clock is the same instant, so timestamps can be checked exactly. */
  now: () => number;
  sleep: EngineDeps['sleep'];
  log?: (line: string) => void;
}

/** The page writer as the tests read it: each record handed to it (as stored), what it claims and what it charges. */
export class FakePages {
  readonly added: Array<{ record: Record<string, unknown>; claim: Claim; charge: { credits: bigint; byok: bigint } }> = [];
  /** Whether pages are stored (false: as when the store failed for good). */
  stored = true;
  shared = false;
  /** As a PageWriter with a journal (npm start): attempts then make provisional records. */
  journaled = false;
  readonly provisionals: PageEntry[] = [];
  readonly withdrawn: string[] = [];

  provisional(entry: PageEntry): void {
    this.provisionals.push(entry);
  }

  withdraw(generationId: string): void {
    this.withdrawn.push(generationId);
  }

  async add(entry: PageEntry): Promise<StoredEntry> {
    const { record } = entry;
    this.added.push({
      record: recordToAttributes(record),
      claim: entry.claim,
      charge: record.is_byok ? { credits: 0n, byok: record.cost.total } : { credits: record.cost.total, byok: 0n },
    });
    return { stored: this.stored, writeUnits: 1 };
  }

  async flush(): Promise<void> {}
}

export function fakeEngineDeps(parts: FakeEngineParts): EngineDeps {
  const log = new Logger(parts.log ?? (() => undefined));
  return {
    catalog: parts.catalog,
    adapters: parts.adapters as AdapterRegistry,
    health: new EndpointHealth(),
    sessions: new StickySessions(),
    generations: {} as GenerationRepository,
    ledger: parts.ledger as EngineDeps['ledger'],
    pages: parts.pages ?? new FakePages(),
    generationIds: new GenerationIds(),
    ...(parts.byok ? { byok: parts.byok as ByokSource } : {}),
    config: { ...DEFAULT_ENGINE_CONFIG, ...parts.config },
    now: parts.now,
    clock: () => new Date(parts.now()),
    // Full jitter takes half of the backoff: retries wait 100 ms, then 200 ms … with the default policy.
    random: () => 0.5,
    sleep: parts.sleep,
    log,
    metrics: emfMetrics(log),
    shutdown: new ShutdownSwitch(),
    // Endpoint failure counters are written after the reply; test/integration/endpoint-uptime.test.ts covers them.
    endpointFailures: { add: async () => undefined } as unknown as EndpointFailureRepository,
  };
}

/** A one-message chat request for `models`, buffered unless overridden. */
export function chatRequest(models: string[], overrides: Partial<InferenceRequest> = {}): InferenceRequest {
  return {
    format: 'chat', models, params: { messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }] },
    provider: undefined, routePartition: undefined, stream: false, serviceTier: null, sessionId: undefined, user: undefined,
    safetyIdentifier: undefined, metadata: undefined, plugins: [], echo: {},
    ...overrides,
  };
}
