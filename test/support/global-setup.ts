// One DynamoDB Local (in memory) for the whole test run; each test file creates its own table in it.
// It is watched: if it dies, its output is printed and the tests fail with that one message (dead-store.ts).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDynamoDbLocal } from '../../bin/local/dynamodb-local.js';
import { watchStore } from './dead-store.js';

export default async function globalSetup(): Promise<void> {
  const db = await startDynamoDbLocal({ timeoutMs: 60_000 });
  const markerFile = join(mkdtempSync(join(tmpdir(), 'gateway-test-store-')), 'dead');
  watchStore(db, markerFile);
  process.env.TEST_DYNAMODB_ENDPOINT = db.endpoint;
  process.env.TEST_DYNAMODB_DEAD_FILE = markerFile;
  (globalThis as unknown as { __dynamodbLocal: typeof db }).__dynamodbLocal = db;
}
