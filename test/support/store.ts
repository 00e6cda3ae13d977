// A fresh table in the run's DynamoDB Local, with the real repositories and deps over it.
import { randomUUID } from 'node:crypto';
import { DynamoDBClient, DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { ensureTable } from '../../lambdas/platform/dynamo/create-table.js';
import { createDocumentClient } from '../../lambdas/platform/dynamo/client.js';
import { createDeps, type GatewayDeps } from '../../lambdas/app/deps.js';
import { readConfig } from '../../lambdas/app/config.js';
import { GetCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { StreamedPage } from '../../lambdas/app/aggregator.js';
import { handleStreamEvent } from '../../lambdas/handlers/aggregator.js';
import { matchesPageFilter, PAGE_STREAM_SETTINGS } from '../../lambdas/billing/page-stream.js';
import { memoryCheckpoints, startStreamFeeder } from '../../bin/local/stream-feeder.js';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pageFromItem } from '../../lambdas/billing/page-repository.js';
import type { GenerationRecord } from '../../lambdas/billing/generation-record.js';
import type { PageEntry } from '../../lambdas/billing/pages.js';
import { startLocalKms, type LocalKms } from '../../bin/local/kms.js';
import { deadStoreMessage, failClearlyWhenDead } from './dead-store.js';
import { startSimulator } from '../../bin/simulator/server.js';

export interface TestStore {
  tableName: string;
  endpoint: string;
  deps: GatewayDeps;
  /** Deps over the same table, KMS, clock and logs, configured by `env` on top of the store's: a deployment set up differently. */
  depsWith(env: NodeJS.ProcessEnv, caches?: CacheLifetimes): GatewayDeps;
  logs: string[];
  /** The local KMS the vault uses (its `calls` count KMS requests). */
  kms: LocalKms;
  /**
   * Resolves once the aggregator (fed from the table's stream, as on AWS) has applied every page of
   * generation records written so far: reads after it see every finished request.
   */
  converge(): Promise<void>;
  /**
   * As a process stopping does: gives back every lease of the deps (their requests have ended), then
   * converges. After it, nothing is held for finished requests.
   */
  quiesce(): Promise<void>;
  /** An item as stored now (consistent read), or undefined. */
  item(key: { pk: string; sk: string }): Promise<Record<string, unknown> | undefined>;
  /** Every item of the table meeting a filter expression (consistent scan). */
  scan(filter: string, values: Record<string, unknown>): Promise<Array<Record<string, unknown>>>;
  /** Every page item of generation records in the table, in key order (as the stream hands them over). */
  pages(): Promise<StreamedPage[]>;
  /** Every record in the stored pages, with the money it claimed (of one organization, if given). */
  entries(orgId?: string): Promise<PageEntry[]>;
  /** Every generation record written so far (of one organization). */
  records(orgId?: string): Promise<GenerationRecord[]>;
  /** Moves the deps' clock. */
  setNow(date: Date | undefined): void;
  drop(): Promise<void>;
}

/** How long the deps cache keys (and the organizations' policies), workspaces and BYOK credentials; 0 by default: never. */
export interface CacheLifetimes {
  keyCacheTtlMs?: number;
  workspaceCacheTtlMs?: number;
  credentialCacheTtlMs?: number;
}

export interface TestStoreOptions {
  /**
   * Given the client the deps (and the aggregator behind the stream) write through, before anything uses it:
   * a test adds middleware to it (failures DynamoDB Local never produces).
   */
  client?: (db: DynamoDBDocumentClient) => void;
}

/** `env` configures the inference engine (SIMULATOR_URL, timeouts …) as the environment does in production. */
export async function createTestStore(env: NodeJS.ProcessEnv = {}, options: TestStoreOptions = {}): Promise<TestStore> {
  const endpoint = process.env.TEST_DYNAMODB_ENDPOINT;
  if (!endpoint) throw new Error('TEST_DYNAMODB_ENDPOINT is not set: run the tests through jest (global setup starts DynamoDB Local)');
  const dead = deadStoreMessage();
  if (dead) throw new Error(dead);
  const tableName = `test-${randomUUID()}`;
  const admin = new DynamoDBClient({ endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  failClearlyWhenDead(admin);
  await ensureTable(admin, tableName);
  const db = createDocumentClient({ endpoint });
  failClearlyWhenDead(db);
  options.client?.(db);
  const logs: string[] = [];
  let now: Date | undefined;
  const kms = await startLocalKms();
  // The real composition root over this table, with the tests' clock and log and (unless asked) no caches.
  const depsWith = (extra: NodeJS.ProcessEnv, caches: CacheLifetimes = {}): GatewayDeps => createDeps(readConfig({ ...env, ...extra, GATEWAY_KMS_KEY_ID: kms.keyArn, KMS_ENDPOINT: kms.url }), {
    db,
    tableName,
    clock: () => now ?? new Date(),
    log: (line) => { logs.push(line); },
    keyCacheTtlMs: 0,
    workspaceCacheTtlMs: 0,
    credentialCacheTtlMs: 0,
    ...caches,
  });
  const deps = depsWith({});
  // What the aggregator's event source mapping does on AWS (and npm start's feeder locally): the table's
  // stream, filtered to new pages, fed to the aggregator handler over these deps, all along.
  const deadLetterFile = join(mkdtempSync(join(tmpdir(), 'store-dead-letters-')), 'dead-letters.jsonl');
  const feeder = startStreamFeeder({
    endpoint, tableName, handler: (event) => handleStreamEvent(event, deps), filter: matchesPageFilter,
    batchSize: PAGE_STREAM_SETTINGS.batchSize, batchWindowMs: 0, retryAttempts: PAGE_STREAM_SETTINGS.retryAttempts, retryDelayMs: 10,
    pollMs: 50, checkpoints: memoryCheckpoints(), deadLetterFile, log: deps.log,
  });
  const converge = async () => {
    if (!(await feeder.drain({ timeoutMs: 20_000 }))) throw new Error('the aggregator did not catch up with the stream within 20 s');
    if (existsSync(deadLetterFile)) throw new Error(`pages were dead-lettered: ${readFileSync(deadLetterFile, 'utf8').slice(0, 2000)}`);
  };
  const scan = async (filter: string, values: Record<string, unknown>): Promise<Array<Record<string, unknown>>> => {
    const found: Array<Record<string, unknown>> = [];
    let start: Record<string, unknown> | undefined;
    do {
      const result = await db.send(new ScanCommand({ TableName: tableName, ConsistentRead: true, ExclusiveStartKey: start, FilterExpression: filter, ExpressionAttributeValues: values }));
      found.push(...(result.Items ?? []));
      start = result.LastEvaluatedKey;
    } while (start);
    return found;
  };
  const pages = async (): Promise<StreamedPage[]> => (await scan('begins_with(pk, :pk) AND begins_with(sk, :sk)', { ':pk': 'GENS#', ':sk': 'P#' }))
    .map((item) => ({ sequenceNumber: `${String(item.pk)}/${String(item.sk)}`, item }));
  const entries = async (orgId?: string): Promise<PageEntry[]> => (await pages())
    .flatMap(({ item }) => pageFromItem(item).entries)
    .filter((entry) => orgId === undefined || entry.record.org_id === orgId);
  return {
    tableName,
    endpoint,
    deps,
    depsWith,
    logs,
    pages,
    scan,
    item: async (key) => (await db.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }))).Item,
    quiesce: async () => {
      await deps.engine.leases?.returnAll();
      await converge();
    },
    entries,
    records: async (orgId) => (await entries(orgId)).map((entry) => entry.record),
    converge,
    setNow: (date) => { now = date; },
    kms,
    drop: async () => {
      // Leases go back while the table exists: an idle pool's return would otherwise fail (and log) after it is gone.
      await deps.engine.leases?.returnAll().catch(() => undefined);
      await feeder.stop();
      await kms.close();
      await admin.send(new DeleteTableCommand({ TableName: tableName }));
      admin.destroy();
      db.destroy();
    },
  };
}

/** A test store whose requests go to the upstream simulator, started with it; `drop()` stops both. */
export interface SimulatorStore extends TestStore {
  simulatorUrl: string;
}

export async function createSimulatorStore(): Promise<SimulatorStore> {
  const simulator = await startSimulator({ port: 0 });
  const store = await createTestStore({ SIMULATOR_URL: simulator.url });
  const drop = store.drop;
  return Object.assign(store, {
    simulatorUrl: simulator.url,
    drop: async () => {
      await drop();
      await simulator.close();
    },
  });
}
