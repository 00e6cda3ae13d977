// The whole local gateway in one call: DynamoDB Local, the table, first-start state, and the HTTP server
// in front of the same Lambda handlers that run on AWS. Used by `npm start`, the end-to-end tests and the bench.
import { join, resolve } from 'node:path';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { installAwsLambdaShim } from './awslambda-shim.js';
import { startDynamoDbLocal, type DynamoDbLocal } from './dynamodb-local.js';
import { startLocalServer, type BufferedHandler, type LocalServer, type StreamingHandler } from './server.js';
import { bootstrapLocal, type BootstrapResult } from './bootstrap.js';
import { ensureTable } from '../../lambdas/store/create-table.js';
import { usdToNanos, MoneyFormatError } from '../../lambdas/shared/money.js';
import { startSimulator, type Simulator } from '../simulator/server.js';
import { startLocalKms } from './kms.js';

/** How often npm start releases expired credit holds (the maintenance function's schedule on AWS is 5 minutes). */
const HOLD_SWEEP_INTERVAL_MS = 60_000;

export interface LocalConfig {
  port: number;
  host: string;
  dataDir: string;
  tableName: string;
  adminKey?: string | undefined;
  initialCredits: string;
  /** Port of the upstream simulator started beside the gateway (default PORT+1; 0 picks a free one). */
  simulatorPort: number;
  /** Use the simulator already listening at this URL instead of starting one (the bench runs its own). */
  simulatorUrl?: string | undefined;
  /** The default organization is in the intern programme unless GATEWAY_INTERN_PROGRAMME=off. */
  internProgramme: boolean;
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): LocalConfig {
  const port = env.PORT === undefined || env.PORT === '' ? 8080 : Number(env.PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be an integer from 0 to 65535, got "${env.PORT}"`);
  return {
    port,
    host: env.HOST || '127.0.0.1',
    dataDir: resolve(env.GATEWAY_DATA_DIR || '.gateway-data'),
    tableName: env.TABLE_NAME || 'gateway',
    adminKey: env.GATEWAY_ADMIN_KEY || undefined,
    initialCredits: env.GATEWAY_INITIAL_CREDITS ?? '100',
    simulatorPort: simulatorPortFrom(env, port),
    internProgramme: internProgrammeFrom(env),
  };
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
  dynamodb: DynamoDbLocal;
  simulator: Simulator;
  bootstrap: BootstrapResult;
  server: LocalServer;
  stop(): Promise<void>;
}

export async function startLocalRuntime(config: LocalConfig, log: (line: string) => void = (line) => console.error(line)): Promise<LocalRuntime> {
  let initialCredits: bigint;
  try {
    initialCredits = usdToNanos(config.initialCredits);
  } catch (err) {
    if (err instanceof MoneyFormatError) throw new Error(`GATEWAY_INITIAL_CREDITS must be a USD amount such as 25 or 10.50: ${err.message}`);
    throw err;
  }
  if (initialCredits < 0n) throw new Error('GATEWAY_INITIAL_CREDITS must not be negative');

  mkdirSync(config.dataDir, { recursive: true });
  const [dynamodb, simulator, kms] = await Promise.all([
    startDynamoDbLocal({ dataDir: join(config.dataDir, 'dynamodb') }),
    config.simulatorUrl ? externalSimulator(config.simulatorUrl) : startSimulator({ port: config.simulatorPort, host: config.host }),
    startLocalKms({ dataDir: join(config.dataDir, 'kms') }),
  ]);
  try {
    process.env.SIMULATOR_URL = simulator.url;
    // The vault's envelope encryption talks to the local KMS exactly as it talks to AWS KMS on Lambda.
    process.env.GATEWAY_KMS_KEY_ID = kms.keyArn;
    process.env.KMS_ENDPOINT = kms.url;
    process.env.TABLE_NAME = config.tableName;
    process.env.DYNAMODB_ENDPOINT = dynamodb.endpoint;
    process.env.AWS_REGION ??= 'local';
    if (config.adminKey) process.env.GATEWAY_ADMIN_KEY = config.adminKey;

    const admin = new DynamoDBClient({ endpoint: dynamodb.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    await ensureTable(admin, config.tableName);
    admin.destroy();

    // The handlers build their AWS clients (and middy its streaming wrapper) at import: set up the environment first.
    installAwsLambdaShim();
    const [{ handler: inference }, { handler: management }, { defaultDeps }] = await Promise.all([
      import('../../lambdas/handlers/inference.js'),
      import('../../lambdas/handlers/management.js'),
      import('../../lambdas/http/deps.js'),
    ]);
    const deps = await defaultDeps();
    const bootstrap = await bootstrapLocal({
      organizations: deps.organizations, keys: deps.keys, adminKeyText: config.adminKey, initialCredits, internProgramme: config.internProgramme, now: new Date(),
    });
    const server = await startLocalServer({
      port: config.port,
      host: config.host,
      handlers: { inference: inference as unknown as StreamingHandler, management: management as unknown as BufferedHandler },
      log,
    });
    // What the scheduled maintenance function does on AWS: release holds of requests that never settled.
    const sweeper = setInterval(() => {
      deps.engine.ledger.releaseExpired().catch((err: unknown) => log(`releasing expired holds failed: ${String(err)}`));
    }, HOLD_SWEEP_INTERVAL_MS);
    sweeper.unref();
    const runtimeFile = join(config.dataDir, 'runtime.json');
    writeFileSync(runtimeFile, JSON.stringify({ pid: process.pid, url: server.url, dynamodb_endpoint: dynamodb.endpoint, table_name: config.tableName }, null, 2));
    let stopped: Promise<void> | undefined;
    return {
      url: server.url,
      config,
      dynamodb,
      simulator,
      bootstrap,
      server,
      stop: () => {
        stopped ??= (async () => {
          clearInterval(sweeper);
          await server.close();
          await Promise.all([dynamodb.stop(), simulator.close(), kms.close()]);
          rmSync(runtimeFile, { force: true });
        })();
        return stopped;
      },
    };
  } catch (err) {
    await Promise.all([dynamodb.stop(), simulator.close(), kms.close()]);
    throw err;
  }
}

function externalSimulator(url: string): Simulator {
  return { url: url.replace(/\/+$/, ''), port: Number(new URL(url).port), close: async () => undefined };
}
