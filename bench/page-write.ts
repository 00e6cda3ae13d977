// `npm run bench:pages`: the gateway's CPU per page write, the one DynamoDB write on every request's path.
// 2,000 sequential PutItems of a one-record page (as on Lambda) against DynamoDB Local on disk, after 300 to
// warm up, through the page repository's hand-signed JSON client (lambdas/platform/dynamo/json-client.ts) and
// through the SDK's document client (what it replaced), alternating twice. CPU is this process's
// (process.cpuUsage), so it includes encoding the page; wall time includes DynamoDB Local's.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { startDynamoDbLocal } from '../bin/local/dynamodb-local.js';
import { ensureTable } from '../lambdas/platform/dynamo/create-table.js';
import { createDocumentClient } from '../lambdas/platform/dynamo/client.js';
import { PageRepository, pageToItem } from '../lambdas/billing/page-repository.js';
import type { Page } from '../lambdas/billing/pages.js';
import { generationRecord } from '../test/support/records.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const WRITES = 2000;
const WARM_UP = 300;

const dataDir = mkdtempSync(join(tmpdir(), 'bench-pages-'));
const store = await startDynamoDbLocal({ dataDir });
try {
  const tableName = 'gateway';
  await ensureTable(new DynamoDBClient({ endpoint: store.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }), tableName);
  const db = createDocumentClient({ endpoint: store.endpoint });
  const pages = new PageRepository(db, tableName);
  const entries = [{ record: generationRecord('gen-1795514400-BENCHPAGES000'), claim: { kind: 'lease' as const, leaseId: 'lease-1', amount: 5n } }];
  let seq = 0;
  const next = (): Page => ({ block: 'BENCHPAGES00', seq: ++seq, entries, writtenAt: Date.now() });
  const ways: Record<string, (page: Page) => Promise<unknown>> = {
    'hand-signed JSON client (PageRepository.put)': (page) => pages.put(page),
    'SDK document client (PutCommand)': (page) => db.send(new PutCommand({
      TableName: tableName, Item: pageToItem(page), ConditionExpression: 'attribute_not_exists(pk)', ReturnConsumedCapacity: 'TOTAL',
    })),
  };
  for (let round = 1; round <= 2; round += 1) {
    for (const [name, put] of Object.entries(ways)) {
      for (let i = 0; i < WARM_UP; i += 1) await put(next());
      const cpu = process.cpuUsage();
      const started = performance.now();
      for (let i = 0; i < WRITES; i += 1) await put(next());
      const used = process.cpuUsage(cpu);
      const wallUs = ((performance.now() - started) * 1000) / WRITES;
      console.log(`round ${round}, ${name}: ${((used.user + used.system) / WRITES).toFixed(0)} µs CPU per page write (${(used.system / WRITES).toFixed(0)} system), ${wallUs.toFixed(0)} µs wall`);
    }
  }
  db.destroy();
} finally {
  await store.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
