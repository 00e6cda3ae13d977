// When DynamoDB Local dies under a test run: one clear message with its output, not ECONNREFUSED everywhere.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { startDynamoDbLocal, type DynamoDbLocal } from '../../bin/local/dynamodb-local.js';
import { createDocumentClient } from '../../lambdas/platform/dynamo/client.js';
import { deadStoreMessage, failClearlyWhenDead, watchStore } from '../support/dead-store.js';
import { createTestStore } from '../support/store.js';

let db: DynamoDbLocal;
const markerFile = join(mkdtempSync(join(tmpdir(), 'gateway-dead-store-')), 'dead');
const reported: string[] = [];

beforeAll(async () => {
  db = await startDynamoDbLocal({ timeoutMs: 60_000 });
  watchStore(db, markerFile, (text) => reported.push(text));
}, 90_000);

afterAll(async () => {
  await db?.stop();
});

describe('a dead test store', () => {
  it('is reported once with its output, and requests fail with that message', async () => {
    const client = new DynamoDBClient({ endpoint: db.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const documents = createDocumentClient({ endpoint: db.endpoint });
    failClearlyWhenDead(client, markerFile);
    failClearlyWhenDead(documents, markerFile);
    await client.send(new ListTablesCommand({}));
    expect(existsSync(markerFile)).toBe(false);

    db.kill();
    // Up to 20 s: under a full parallel run on two cores the killed JVM's exit can take longer than a few seconds to be seen.
    for (let i = 0; i < 400 && !existsSync(markerFile); i++) await new Promise((resolve) => setTimeout(resolve, 50));

    const message = deadStoreMessage(markerFile)!;
    expect(message).toMatch(/^The test run's DynamoDB Local \(http:\/\/127\.0\.0\.1:\d+\) died \(SIGKILL\); every test that needs the store fails from here on\. Its last output:\n/);
    expect(message).toContain('Initializing DynamoDB Local');
    expect(reported).toEqual([`\n${message}\n`]);
    await expect(client.send(new ListTablesCommand({}))).rejects.toThrow(message);
    await expect(documents.send(new ListTablesCommand({}))).rejects.toThrow(message);
    client.destroy();
    documents.destroy();
  }, 30_000);

  it('makes createTestStore fail with the message at once', async () => {
    const saved = process.env.TEST_DYNAMODB_DEAD_FILE;
    process.env.TEST_DYNAMODB_DEAD_FILE = markerFile;
    try {
      await expect(createTestStore()).rejects.toThrow(/^The test run's DynamoDB Local .* died/);
    } finally {
      process.env.TEST_DYNAMODB_DEAD_FILE = saved;
    }
  });
});
