// A fresh table in the run's DynamoDB Local, with the real repositories and deps over it.
import { randomUUID } from 'node:crypto';
import { DynamoDBClient, DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { ensureTable } from '../../lambdas/platform/dynamo/create-table.js';
import { createDocumentClient } from '../../lambdas/platform/dynamo/client.js';
import { ApiKeyRepository } from '../../lambdas/keys/api-key-repository.js';
import { OrganizationRepository } from '../../lambdas/organizations/organization-repository.js';
import { RollupRepository } from '../../lambdas/billing/rollup-repository.js';
import { KeyCache } from '../../lambdas/keys/key-cache.js';
import { createVault, type GatewayDeps } from '../../lambdas/app/deps.js';
import { VaultRepository } from '../../lambdas/vault/vault-repository.js';
import { ByokRepository } from '../../lambdas/byok/byok-repository.js';
import { ByokSource } from '../../lambdas/byok/byok-source.js';
import { startLocalKms, type LocalKms } from '../../bin/local/kms.js';
import { createEngineDeps } from '../../lambdas/inference/engine-deps.js';
import { deadStoreMessage, failClearlyWhenDead } from './dead-store.js';

export interface TestStore {
  tableName: string;
  endpoint: string;
  deps: GatewayDeps;
  logs: string[];
  /** The local KMS the vault uses (its `calls` count KMS requests). */
  kms: LocalKms;
  /** Moves the deps' clock. */
  setNow(date: Date | undefined): void;
  drop(): Promise<void>;
}

/** `env` configures the inference engine (SIMULATOR_URL, timeouts …) as the environment does in production. */
export async function createTestStore(env: NodeJS.ProcessEnv = {}): Promise<TestStore> {
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
  const logs: string[] = [];
  let now: Date | undefined;
  const kms = await startLocalKms();
  const vault = createVault(db, tableName, { GATEWAY_KMS_KEY_ID: kms.keyArn, KMS_ENDPOINT: kms.url }, () => now ?? new Date());
  const byok = new ByokRepository(db, tableName);
  const deps: GatewayDeps = {
    keys: new ApiKeyRepository(db, tableName),
    organizations: new OrganizationRepository(db, tableName),
    rollups: new RollupRepository(db, tableName),
    vault,
    interns: new VaultRepository(db, tableName),
    byok,
    engine: createEngineDeps(db, tableName, env, { log: (line) => { logs.push(line); }, clock: () => now ?? new Date(), workspaceCacheTtlMs: 0 }),
    keyCache: new KeyCache(0),
    clock: () => now ?? new Date(),
    log: (line) => { logs.push(line); },
  };
  deps.engine.byok = new ByokSource(byok, vault!, 0);
  return {
    tableName,
    endpoint,
    deps,
    logs,
    setNow: (date) => { now = date; },
    kms,
    drop: async () => {
      await kms.close();
      await admin.send(new DeleteTableCommand({ TableName: tableName }));
      admin.destroy();
      db.destroy();
    },
  };
}
