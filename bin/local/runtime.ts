// The whole local gateway in one call: DynamoDB Local, the table, first-start state, and the HTTP server
// in front of the same Lambda handlers that run on AWS. Used by `npm start`, the end-to-end tests and the bench.
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { installAwsLambdaShim } from './awslambda-shim.js';
import { startDynamoDbLocal, type DynamoDbExit, type DynamoDbLocal } from './dynamodb-local.js';
import { DEFAULT_SERVER_LIMITS, startLocalServer, type BufferedHandler, type LocalServer, type ServerLimits, type StreamingHandler } from './server.js';
import { createLocalLogger, logFormatFromEnv, type LogFormat } from './logger.js';
import { registerHealthCheck, type PartHealth } from '../../lambdas/app/system-operations.js';
import { bootstrapLocal, type BootstrapResult } from './bootstrap.js';
import { ensureTable } from '../../lambdas/platform/dynamo/create-table.js';
import { usdToNanos, MoneyFormatError } from '../../lambdas/platform/money.js';
import { DEFAULT_SIMULATOR_BATCH_DELAY_MS, type Simulator } from '../simulator/server.js';
import { startAggregatorProcess, type AggregatorProcess } from './aggregator-process.js';
import { dataDirJournal, LocalPageJournal, pageJournalDir, storeJournaledRecords } from './page-journal.js';
import { PageRepository } from '../../lambdas/billing/page-repository.js';
import { PageWriter } from '../../lambdas/billing/pages.js';
import { startAwsStandIns, startBatchRunner, startSimulatorProcess, type BatchRunner, type SimulatorProcess } from './child-parts.js';
import type { GenerationRecord } from '../../lambdas/generations/index.js';

/** How often npm start releases expired credit holds (the maintenance function's schedule on AWS is 5 minutes). */
const HOLD_SWEEP_INTERVAL_MS = 60_000;
/** How long in-flight requests may take to finish on their own at shutdown (GATEWAY_SHUTDOWN_GRACE_MS). */
export const DEFAULT_SHUTDOWN_GRACE_MS = 5000;
/** After the grace period, how long requests told to end get to settle their credit before their connections are cut. */
const SHUTDOWN_SETTLE_MS = 3000;
/**
 * Then, with the connections cut, how long their handlers get to finish settling (a settlement retrying
 * against a slow store), and then how long the meter aggregator gets to take the pages written so far,
 * before DynamoDB Local is stopped anyway: a stop takes at most the grace period plus SHUTDOWN_SETTLE_MS
 * plus this and PAGE_DRAIN_MS (23 s with the default grace; 5 s more if the aggregator's handler hangs in a
 * batch), and usually far less.
 */
const SHUTDOWN_FINISH_MS = 10_000;
const PAGE_DRAIN_MS = 5000;
/** DynamoDB Local is restarted when it dies, unless it died this many times in RESTART_WINDOW_MS. */
const MAX_RESTARTS = 3;
const RESTART_WINDOW_MS = 60_000;
/** /health's probe of DynamoDB Local. */
const STORE_PROBE_TIMEOUT_MS = 1000;
/** How often the stream feeder reads the shards: four times a second, as Lambda polls a shard. */
const STREAM_POLL_MS = 250;

export interface LocalConfig {
  port: number;
  host: string;
  dataDir: string;
  /** Where records wait for their page (GATEWAY_PAGE_JOURNAL_DIR); by default page-journal.ts pageJournalDir: in memory where there is a tmpfs. */
  pageJournalDir?: string;
  tableName: string;
  adminKey?: string | undefined;
  initialCredits: string;
  /** Port of the upstream simulator started beside the gateway (default PORT+1; 0 picks a free one). */
  simulatorPort: number;
  /** Use the simulator already listening at this URL instead of starting one (the bench runs its own). */
  simulatorUrl?: string | undefined;
  /** The default organization is in the intern programme unless GATEWAY_INTERN_PROGRAMME=off. */
  internProgramme: boolean;
  /** Delay between the simulator's streamed chunks and before its first byte (SIMULATOR_CHUNK_DELAY_MS, SIMULATOR_FIRST_BYTE_DELAY_MS). */
  simulatorChunkDelayMs?: number;
  simulatorFirstByteDelayMs?: number;
  /** How long the simulator's provider batches take (SIMULATOR_BATCH_DELAY_MS, default 1000). */
  simulatorBatchDelayMs?: number;
  /** GATEWAY_SHUTDOWN_GRACE_MS, default 5000. */
  shutdownGraceMs?: number;
  /** GATEWAY_LOG_FORMAT (text or json, default text) and GATEWAY_LOG_FILE. */
  logFormat?: LogFormat;
  logFile?: string | undefined;
  /** How often DynamoDB Local is restarted when it dies (within a minute) before the runtime gives up (default 3). */
  storeRestarts?: number;
  /** Connection limits and timeouts of the HTTP server (GATEWAY_HEADERS_TIMEOUT_MS, GATEWAY_BODY_TIMEOUT_MS, GATEWAY_MAX_CONNECTIONS). */
  serverLimits?: Partial<ServerLimits>;
  /** Receives of an observability delivery before the dead-letter queue (GATEWAY_OBSERVABILITY_MAX_RECEIVES; the stack's: 6). */
  deliveryMaxReceives?: number;
}

/** The server's header deadline must not exceed its whole-request deadline (Node refuses to start otherwise). */
function checkServerTimeouts(limits: Partial<ServerLimits>): Partial<ServerLimits> {
  const headers = limits.headersTimeoutMs ?? DEFAULT_SERVER_LIMITS.headersTimeoutMs;
  const body = limits.requestTimeoutMs ?? DEFAULT_SERVER_LIMITS.requestTimeoutMs;
  if (headers > body) throw new Error(`GATEWAY_HEADERS_TIMEOUT_MS (${headers}) must not exceed GATEWAY_BODY_TIMEOUT_MS (${body})`);
  return limits;
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): LocalConfig {
  const port = env.PORT === undefined || env.PORT === '' ? 8080 : Number(env.PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be an integer from 0 to 65535, got "${env.PORT}"`);
  return {
    port,
    host: env.HOST || '127.0.0.1',
    dataDir: resolve(env.GATEWAY_DATA_DIR || '.gateway-data'),
    ...(env.GATEWAY_PAGE_JOURNAL_DIR ? { pageJournalDir: resolve(env.GATEWAY_PAGE_JOURNAL_DIR) } : {}),
    tableName: env.TABLE_NAME || 'gateway',
    adminKey: env.GATEWAY_ADMIN_KEY || undefined,
    initialCredits: env.GATEWAY_INITIAL_CREDITS ?? '100',
    simulatorPort: simulatorPortFrom(env, port),
    internProgramme: internProgrammeFrom(env),
    simulatorChunkDelayMs: msFrom(env, 'SIMULATOR_CHUNK_DELAY_MS', 0),
    simulatorFirstByteDelayMs: msFrom(env, 'SIMULATOR_FIRST_BYTE_DELAY_MS', 0),
    simulatorBatchDelayMs: msFrom(env, 'SIMULATOR_BATCH_DELAY_MS', DEFAULT_SIMULATOR_BATCH_DELAY_MS),
    shutdownGraceMs: msFrom(env, 'GATEWAY_SHUTDOWN_GRACE_MS', DEFAULT_SHUTDOWN_GRACE_MS),
    logFormat: logFormatFromEnv(env),
    logFile: env.GATEWAY_LOG_FILE ? resolve(env.GATEWAY_LOG_FILE) : undefined,
    serverLimits: checkServerTimeouts({
      ...(env.GATEWAY_HEADERS_TIMEOUT_MS ? { headersTimeoutMs: msFrom(env, 'GATEWAY_HEADERS_TIMEOUT_MS', 0, 1) } : {}),
      ...(env.GATEWAY_BODY_TIMEOUT_MS ? { requestTimeoutMs: msFrom(env, 'GATEWAY_BODY_TIMEOUT_MS', 0, 1) } : {}),
      ...(env.GATEWAY_MAX_CONNECTIONS ? { maxConnections: msFrom(env, 'GATEWAY_MAX_CONNECTIONS', 0, 1) } : {}),
    }),
    ...(env.GATEWAY_OBSERVABILITY_MAX_RECEIVES ? { deliveryMaxReceives: msFrom(env, 'GATEWAY_OBSERVABILITY_MAX_RECEIVES', 0, 1) } : {}),
  };
}

/** A non-negative integer setting (`min` 1 for those where 0 makes no sense). */
function msFrom(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer of at least ${min}, got "${raw}"`);
  return value;
}

function internProgrammeFrom(env: NodeJS.ProcessEnv): boolean {
  const value = (env.GATEWAY_INTERN_PROGRAMME ?? 'on').trim().toLowerCase();
  if (value === 'on' || value === '') return true;
  if (value === 'off') return false;
  throw new Error(`GATEWAY_INTERN_PROGRAMME must be on or off, got "${env.GATEWAY_INTERN_PROGRAMME}"`);
}

function simulatorPortFrom(env: NodeJS.ProcessEnv, port: number): number {
  if (env.SIMULATOR_PORT === undefined || env.SIMULATOR_PORT === '') return port === 0 ? 0 : port + 1;
  const value = Number(env.SIMULATOR_PORT);
  if (!Number.isInteger(value) || value < 0 || value > 65535) throw new Error(`SIMULATOR_PORT must be an integer from 0 to 65535, got "${env.SIMULATOR_PORT}"`);
  return value;
}

export interface LocalRuntime {
  url: string;
  config: LocalConfig;
  /** The DynamoDB Local now running (a new one after a restart). */
  readonly dynamodb: DynamoDbLocal;
  simulator: Simulator;
  bootstrap: BootstrapResult;
  server: LocalServer;
  /** The meter aggregator's process: its page lags and its CPU time (the bench reads them). */
  aggregator: Pick<AggregatorProcess, 'takeLags' | 'cpu'>;
  /** Where a generated management key was also written (0600), if one was generated now. */
  managementKeyFile?: string;
  /**
   * Stops accepting, lets in-flight requests finish within the grace period, then tells the rest to end
   * (the engine's shutdown switch) and waits for them to settle (bounded), then lets the meter aggregator
   * take every page written so far (bounded), then stops the simulator, KMS and DynamoDB Local.
   */
  stop(): Promise<void>;
}

export interface RuntimeOutput {
  /** Console output (default process.stdout / process.stderr); tests capture it. */
  out?: (text: string) => void;
  err?: (text: string) => void;
  /** DynamoDB Local died and could not be restarted: the gateway cannot serve (npm start exits). */
  onFatal?: (message: string) => void;
}

export async function startLocalRuntime(config: LocalConfig, output: RuntimeOutput = {}): Promise<LocalRuntime> {
  let initialCredits: bigint;
  try {
    initialCredits = usdToNanos(config.initialCredits);
  } catch (err) {
    if (err instanceof MoneyFormatError) throw new Error(`GATEWAY_INITIAL_CREDITS must be a USD amount such as 25 or 10.50: ${err.message}`);
    throw err;
  }
  if (initialCredits < 0n) throw new Error('GATEWAY_INITIAL_CREDITS must not be negative');
  const err = output.err ?? ((text: string) => { process.stderr.write(text); });
  const logger = createLocalLogger({ format: config.logFormat ?? 'text', file: config.logFile, out: output.out, err });
  const log = (line: string) => logger.line(line);

  mkdirSync(config.dataDir, { recursive: true });
  const dynamodbDir = join(config.dataDir, 'dynamodb');
  const [dynamodbStart, simulatorStart, awsStart] = await Promise.allSettled([
    startDynamoDbLocal({ dataDir: dynamodbDir }),
    config.simulatorUrl
      ? Promise.resolve(externalSimulator(config.simulatorUrl))
      // In a process of its own: the providers' work and memory are not the gateway's.
      : startSimulatorProcess({ port: config.simulatorPort, host: config.host, chunkDelayMs: config.simulatorChunkDelayMs ?? 0, firstByteDelayMs: config.simulatorFirstByteDelayMs ?? 0, batchDelayMs: config.simulatorBatchDelayMs ?? DEFAULT_SIMULATOR_BATCH_DELAY_MS }, log),
    // S3, SQS and KMS in a process of their own: AWS's side, not the gateway's.
    startAwsStandIns({ dataDir: config.dataDir, host: '127.0.0.1', ...(config.deliveryMaxReceives ? { deliveryMaxReceives: config.deliveryMaxReceives } : {}) }, log),
  ]);
  if (dynamodbStart.status === 'rejected' || simulatorStart.status === 'rejected' || awsStart.status === 'rejected') {
    // Stop what did start before reporting why the rest did not.
    await Promise.allSettled([
      dynamodbStart.status === 'fulfilled' ? dynamodbStart.value.stop() : undefined,
      simulatorStart.status === 'fulfilled' ? simulatorStart.value.close() : undefined,
      awsStart.status === 'fulfilled' ? awsStart.value.close() : undefined,
    ]);
    const failed = [dynamodbStart, simulatorStart, awsStart].find((result) => result.status === 'rejected') as PromiseRejectedResult;
    throw failed.reason;
  }
  let dynamodb = dynamodbStart.value;
  const simulator: Simulator & Partial<Pick<SimulatorProcess, 'useS3' | 'health'>> = simulatorStart.value;
  const aws = awsStart.value;
  let batchRunner: BatchRunner | undefined;
  let stopping = false;
  let storeState: PartHealth['status'] = 'ok';
  const deaths: number[] = [];

  // DynamoDB Local died: say so with its last output, and start it again on its data directory and port,
  // unless it keeps dying. Meanwhile /health reports the store down and requests answer 503.
  const watch = (db: DynamoDbLocal) => db.onUnexpectedExit((exit) => { void restart(exit); });
  const restart = async (exit: DynamoDbExit) => {
    if (stopping) return;
    storeState = 'restarting';
    const now = Date.now();
    deaths.push(now);
    while (deaths.length > 0 && deaths[0]! < now - RESTART_WINDOW_MS) deaths.shift();
    err(`DynamoDB Local exited unexpectedly (${exit.signal ?? `code ${exit.code}`}); its last output:\n${indent(exit.output)}\n`);
    if (deaths.length > (config.storeRestarts ?? MAX_RESTARTS)) {
      storeState = 'down';
      output.onFatal?.(`DynamoDB Local died ${deaths.length} times in ${RESTART_WINDOW_MS / 1000} s; not restarting it. Its data is in ${dynamodbDir}.`);
      return;
    }
    try {
      const next = await startDynamoDbLocal({ dataDir: dynamodbDir, port: dynamodb.port });
      if (stopping) {
        await next.stop();
        return;
      }
      dynamodb = next;
      watch(next);
      storeState = 'ok';
      err(`DynamoDB Local restarted on ${next.endpoint}\n`);
    } catch (cause) {
      storeState = 'down';
      output.onFatal?.(`DynamoDB Local could not be restarted: ${cause instanceof Error ? cause.message : String(cause)}`);
    }
  };
  watch(dynamodb);

  const probe = new DynamoDBClient({
    endpoint: dynamodb.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1,
    requestHandler: { connectionTimeout: STORE_PROBE_TIMEOUT_MS, requestTimeout: STORE_PROBE_TIMEOUT_MS },
  });
  const storeHealth = async (): Promise<PartHealth> => {
    if (storeState !== 'ok' || !dynamodb.running) return { status: storeState === 'ok' ? 'down' : storeState, required: true, message: 'DynamoDB Local is not running' };
    try {
      await probe.send(new ListTablesCommand({ Limit: 1 }));
      return { status: 'ok', required: true };
    } catch {
      return { status: 'down', required: true, message: 'DynamoDB Local does not answer' };
    }
  };

  let aggregatorStart: Promise<AggregatorProcess> | undefined;
  try {
    process.env.SIMULATOR_URL = simulator.url;
    // The vault's envelope encryption talks to the local KMS exactly as it talks to AWS KMS on Lambda.
    process.env.GATEWAY_KMS_KEY_ID = aws.keyArn;
    process.env.KMS_ENDPOINT = aws.kmsUrl;
    // One lease owner per data directory: a restart after a crash takes back what the last run held.
    process.env.GATEWAY_LEASE_OWNER ??= `local-${createHash('sha256').update(config.dataDir).digest('hex').slice(0, 16)}`;
    process.env.TABLE_NAME = config.tableName;
    process.env.DYNAMODB_ENDPOINT = dynamodb.endpoint;
    process.env.AWS_REGION ??= 'local';
    if (config.adminKey) process.env.GATEWAY_ADMIN_KEY = config.adminKey;
    // Batches: their bucket and work queue on the local stand-ins; a running batch is checked every second.
    process.env.GATEWAY_BATCH_BUCKET = aws.bucket;
    process.env.GATEWAY_BATCH_QUEUE_URL = aws.queueUrl;
    process.env.S3_ENDPOINT = aws.s3Endpoint;
    process.env.SQS_ENDPOINT = aws.sqsEndpoint;
    process.env.GATEWAY_BATCH_CHECK_SECONDS ??= '1';
    // Observability deliveries: their queue on the stand-in; destinations on this machine (a receiver on
    // localhost) are accepted here, and a failed delivery is tried again after 2 s, 4 s, 8 s …
    process.env.GATEWAY_OBSERVABILITY_QUEUE_URL = aws.deliveryQueueUrl;
    process.env.GATEWAY_OBSERVABILITY_DLQ_URL = aws.deliveryDeadLetterUrl;
    process.env.GATEWAY_OBSERVABILITY_PRIVATE_HOSTS ??= 'allow';
    process.env.GATEWAY_OBSERVABILITY_RETRY_SECONDS ??= '2';
    // Private endpoints on this machine (a deployment on localhost) are accepted here too.
    process.env.GATEWAY_PRIVATE_ENDPOINT_PRIVATE_HOSTS ??= 'allow';
    // Bedrock batch inference jobs (the simulator's) read and write the local bucket "as" this role.
    process.env.GATEWAY_BEDROCK_BATCH_ROLE_ARN ??= 'arn:aws:iam::000000000000:role/gateway-bedrock-batch';
    await simulator.useS3?.(aws.s3Endpoint);

    const admin = new DynamoDBClient({ endpoint: dynamodb.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    await ensureTable(admin, config.tableName);
    admin.destroy();

    // What the aggregator's event source mapping does on AWS: pages, from the table's stream, to the meters,
    // in a process of its own (aggregator-process.ts), started now so that it loads while this one does.
    aggregatorStart = startAggregatorProcess({
      endpoint: dynamodb.endpoint,
      tableName: config.tableName,
      pollMs: STREAM_POLL_MS,
      checkpointFile: join(config.dataDir, 'stream-checkpoints.json'),
      deadLetterFile: join(config.dataDir, 'aggregator-dead-letters.jsonl'),
      log,
    });
    // Awaited below; a failure before then is reported there, not as an unhandled rejection.
    aggregatorStart.catch(() => undefined);

    // The handlers build their AWS clients (and middy its streaming wrapper) at import: set up the environment first.
    installAwsLambdaShim();
    // One after another: Jest's ESM loader (the runtime tests) fails on concurrent imports of shared modules.
    const { handler: inference } = await import('../../lambdas/handlers/inference.js');
    const { handler: management } = await import('../../lambdas/handlers/management.js');
    const { defaultDeps } = await import('../../lambdas/app/deps.js');
    const deps = await defaultDeps();
    // The handlers, the engine and the ledger log through the deps' one logger (to stdout, for CloudWatch on
    // Lambda); here through the local sink, which keeps the per-generation metrics lines off the console.
    deps.log.sink = log;
    // Each generation's model and cost on its request's line; its EMF line only where machine lines go.
    deps.engine.metrics = (record, timestamp) => logger.generation(record, timestamp);
    // One process serves every request and is never frozen: records of requests that end apart share pages.
    deps.engine.pages.shared = true;
    if (deps.engine.observability) deps.engine.observability.shared = true;
    const bootstrap = await bootstrapLocal({
      organizations: deps.organizations, keys: deps.keys, adminKeyText: config.adminKey, initialCredits, internProgramme: config.internProgramme, now: new Date(),
    });
    const pageFeeder = await aggregatorStart;
    // Records a predecessor killed mid-way had settled (their replies written) but not yet stored in a page:
    // stored now, from its journal, before anything it held is given back below.
    const defaultJournalDir = pageJournalDir(config.dataDir, {});
    const journalDir = config.pageJournalDir ?? defaultJournalDir;
    const pageRepository = new PageRepository(deps.store.db, deps.store.tableName);
    for (const dir of new Set([journalDir, dataDirJournal(config.dataDir), defaultJournalDir])) await storeJournaledRecords(dir, pageRepository, log, (record) => logger.replayed(record));
    const journal = new LocalPageJournal(journalDir, log);
    if (!(deps.engine.pages instanceof PageWriter)) throw new Error('the engine\'s page writer is not a PageWriter: records could not be journaled');
    deps.engine.pages.journal = journal;
    // A predecessor that died (SIGKILL, a crash) could not give its leases back nor release its holds: take
    // them back before serving, once the aggregator has applied the records it left in the stream (so that
    // what the leases still hold is exactly what they did not spend).
    const leaseOwner = process.env.GATEWAY_LEASE_OWNER;
    if (leaseOwner) {
      if (!(await pageFeeder.drain({ timeoutMs: PAGE_DRAIN_MS }))) log('the meter aggregator has not caught up with the stream yet; records it applies later are charged all the same');
      const taken = await deps.engine.ledger.sweepLeases(leaseOwner);
      const released = await deps.engine.ledger.releaseExpired(leaseOwner);
      if (taken > 0) log(`took back ${taken} budget lease(s) the previous run held`);
      if (released > 0) log(`released ${released} credit hold(s) of requests the previous run did not finish`);
    }
    // What the batch worker's SQS event source mapping and the batch state machine do on AWS, in a process of
    // its own (bin/local/batch-child.ts), as on AWS they are functions of their own; it resumes the batches the
    // previous run had not finished.
    const { batchDepsOf } = await import('../../lambdas/app/batch-deps.js');
    const batches = batchDepsOf(deps);
    if (batches.worker) {
      batchRunner = await startBatchRunner(
        { queueUrl: aws.queueUrl, deliveryQueueUrl: aws.deliveryQueueUrl, sqsEndpoint: aws.sqsEndpoint, graceMs: config.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS, leaseOwner },
        { log, generation: (record, timestamp) => logger.generation(record as GenerationRecord, timestamp), beforeRestart: () => pageFeeder.drain({ timeoutMs: PAGE_DRAIN_MS }) },
      );
      batches.executions = batchRunner.executions;
      // The stand-ins started again have an empty queue: the runner, started again, queues the shards of every
      // unfinished batch again (items with a result are skipped).
      const runner = batchRunner;
      aws.onRestart(() => void runner.restart(SHUTDOWN_FINISH_MS));
    }
    let managementKeyFile: string | undefined;
    if (bootstrap.generatedKeyText) {
      // Printed once, and kept where only this user can read it, so it does not scroll away.
      managementKeyFile = join(config.dataDir, 'management-key.txt');
      writeFileSync(managementKeyFile, `${bootstrap.generatedKeyText}\n`, { mode: 0o600 });
    }
    const server = await startLocalServer({
      port: config.port,
      host: config.host,
      handlers: { inference: inference as unknown as StreamingHandler, management: management as unknown as BufferedHandler },
      log,
      limits: config.serverLimits,
      onRequestDone: (done) => logger.request(done),
    });
    registerHealthCheck(async () => ({
      store: await storeHealth(),
      aggregator: pageFeeder.health(),
      kms: aws.health(),
      ...(simulator.health ? { simulator: simulator.health() } : {}),
      ...(batchRunner ? { batches: batchRunner.health() } : {}),
    }));
    // What the scheduled maintenance function does on AWS: release holds of requests that never settled and
    // expired leases nobody gave back.
    const sweeper = setInterval(() => {
      deps.engine.ledger.releaseExpired().catch((error: unknown) => log(`releasing expired holds failed: ${String(error)}`));
      deps.engine.ledger.sweepLeases().catch((error: unknown) => log(`sweeping expired leases failed: ${String(error)}`));
    }, HOLD_SWEEP_INTERVAL_MS);
    sweeper.unref();
    const runtimeFile = join(config.dataDir, 'runtime.json');
    writeFileSync(runtimeFile, JSON.stringify({
      pid: process.pid, url: server.url, dynamodb_endpoint: dynamodb.endpoint, table_name: config.tableName,
      // Where observability deliveries that failed for good are kept (the local SQS stand-in).
      sqs_endpoint: aws.sqsEndpoint, observability_dead_letter_queue_url: aws.deliveryDeadLetterUrl,
    }, null, 2));
    let stopped: Promise<void> | undefined;
    return {
      url: server.url,
      config,
      get dynamodb() {
        return dynamodb;
      },
      simulator,
      bootstrap,
      server,
      aggregator: pageFeeder,
      ...(managementKeyFile ? { managementKeyFile } : {}),
      stop: () => {
        stopped ??= (async () => {
          clearInterval(sweeper);
          // The batch runner starts no new item; the items running finish and commit (a shard stopped part-way
          // comes back at the next start, for its items not done), then it gives its leases back and writes its
          // last records.
          const graceMs = config.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
          const batchesStopped = batchRunner?.stop(graceMs + SHUTDOWN_SETTLE_MS + SHUTDOWN_FINISH_MS);
          await server.close({
            graceMs,
            settleMs: SHUTDOWN_SETTLE_MS,
            finishMs: SHUTDOWN_FINISH_MS,
            onGraceExpired: () => deps.engine.shutdown.trigger(),
          });
          deps.engine.shutdown.trigger();
          await batchesStopped;
          // Every request has ended: give the leases back and write the last records.
          if (storeState !== 'down') {
            await deps.engine.leases?.returnAll();
            await deps.engine.pages.flush();
            await deps.engine.observability?.flush();
          }
          // Its records are in stored pages (or, with the store gone, kept for the next start).
          journal.close();
          // Requests that finished during the drain wrote pages: the aggregator takes them before the store stops
          // (unless the store is gone for good: then they wait in its stream for the next start).
          if (storeState !== 'down' && !(await pageFeeder.drain({ timeoutMs: PAGE_DRAIN_MS }))) {
            deps.log.warn('the meter aggregator did not take every page before shutdown; it takes the rest at the next start');
          }
          await pageFeeder.stop();
          stopping = true;
          registerHealthCheck(undefined);
          probe.destroy();
          await Promise.all([dynamodb.stop(), simulator.close(), aws.close()]);
          rmSync(runtimeFile, { force: true });
          await logger.close();
        })();
        return stopped;
      },
    };
  } catch (error) {
    stopping = true;
    await (await aggregatorStart?.catch(() => undefined))?.stop();
    await batchRunner?.stop(SHUTDOWN_FINISH_MS);
    probe.destroy();
    await Promise.all([dynamodb.stop(), simulator.close(), aws.close(), logger.close()]);
    throw error;
  }
}

function indent(text: string): string {
  const lines = text.trimEnd().split('\n');
  return lines.length === 1 && lines[0] === '' ? '  (no output)' : lines.map((line) => `  ${line}`).join('\n');
}

function externalSimulator(url: string): Simulator {
  return { url: url.replace(/\/+$/, ''), port: Number(new URL(url).port), close: async () => undefined };
}
