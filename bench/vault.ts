// What a vault read costs: releasing a secret to an outbound request (DynamoDB read of the sealed row,
// AES-256-GCM open, audit write) with the vault's data key warm in memory, and cold (one KMS Decrypt of the
// stored data key first), against DynamoDB Local on disk and the local KMS stand-in over HTTP.
//
//   npm run bench:vault [-- --quick]
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { startDynamoDbLocal } from '../bin/local/dynamodb-local.js';
import { startLocalKms } from '../bin/local/kms.js';
import { ensureTable } from '../lambdas/platform/dynamo/create-table.js';
import { createDocumentClient } from '../lambdas/platform/dynamo/client.js';
import { VaultRepository } from '../lambdas/vault/vault-repository.js';
import { AwsKms } from '../lambdas/platform/aws/kms.js';
import { Vault } from '../lambdas/vault/vault.js';
import type { VaultRef } from '../lambdas/vault/envelope.js';
import { distribution } from './stats.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const N = process.argv.includes('--quick') ? 100 : 500;

const dir = mkdtempSync(join(tmpdir(), 'gateway-vault-bench-'));
const [ddb, kms] = await Promise.all([startDynamoDbLocal({ dataDir: join(dir, 'dynamodb') }), startLocalKms({ dataDir: join(dir, 'kms') })]);
const admin = new DynamoDBClient({ endpoint: ddb.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
await ensureTable(admin, 'vault-bench');
const db = createDocumentClient({ endpoint: ddb.endpoint });
const repository = new VaultRepository(db, 'vault-bench');
const kmsConfig = { keyId: kms.keyArn, endpoint: kms.url };
const ms = (value: number) => `${value.toFixed(2)} ms`;

try {
  const writer = new Vault(repository, new AwsKms(kmsConfig));
  const refs: VaultRef[] = Array.from({ length: N }, (_, i) => ({ orgId: 'org-bench', workspaceId: `ws-${i}`, purpose: 'vault' }));
  for (const ref of refs) await writer.put(ref, 'api_token', ['api.example.com'], `token-${ref.workspaceId}`);

  // Warm: one vault whose data key stays cached.
  const warmVault = new Vault(repository, new AwsKms(kmsConfig));
  await warmVault.release(refs[0]!, 'api_token', 'https://api.example.com/', 'bench');
  const warm: number[] = [];
  for (let i = 0; i < N; i += 1) {
    const started = performance.now();
    await warmVault.release(refs[0]!, 'api_token', 'https://api.example.com/v1', 'bench');
    warm.push(performance.now() - started);
  }
  // Cold: a new vault each time (as after the key TTL or on a new Lambda instance): KMS Decrypt first.
  const coldVault = new Vault(repository, new AwsKms(kmsConfig));
  const cold: number[] = [];
  for (const ref of refs) {
    const started = performance.now();
    await coldVault.release(ref, 'api_token', 'https://api.example.com/v1', 'bench');
    cold.push(performance.now() - started);
  }
  const w = distribution(warm);
  const c = distribution(cold);
  const report = [
    `## Vault read benchmark — ${new Date().toISOString()}`,
    '',
    `Release of one secret (DynamoDB read, AES-256-GCM open, audit write), ${N} each; DynamoDB Local on disk, local KMS over HTTP.`,
    '',
    '| Data-key cache | p50 | p90 | p99 | KMS calls |',
    '|---|---|---|---|---|',
    `| warm (key in memory) | ${ms(w.p50)} | ${ms(w.p90)} | ${ms(w.p99)} | ${warmVault.kmsCalls} for ${N + 1} reads |`,
    `| cold (KMS Decrypt of the data key first) | ${ms(c.p50)} | ${ms(c.p90)} | ${ms(c.p99)} | ${coldVault.kmsCalls} for ${N} reads |`,
    '',
    `Cold − warm at p50: ${ms(c.p50 - w.p50)} (the KMS round trip; AWS KMS adds its own network latency instead).`,
    '',
  ].join('\n');
  console.log(report);
  mkdirSync(join(process.cwd(), 'bench', 'results'), { recursive: true });
  writeFileSync(join(process.cwd(), 'bench', 'results', 'vault.md'), `${report}\n`);
} finally {
  db.destroy();
  admin.destroy();
  await Promise.all([ddb.stop(), kms.close()]);
  rmSync(dir, { recursive: true, force: true });
}
