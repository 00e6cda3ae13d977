// Pages written to DynamoDB Local through the hand-signed JSON client (page-repository.ts, json-client.ts):
// what is stored is the page item, to the byte; a page written again is stored already; DynamoDB's
// refusals, a store that is not there and one that does not answer are errors the page writer retries.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server, type Socket } from 'node:net';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDocumentClient } from '../../lambdas/platform/dynamo/client.js';
import { PageRepository, pageFromItem, pageToItem } from '../../lambdas/billing/page-repository.js';
import { DynamoJsonClient, DynamoJsonError, jsonClientConfigOf } from '../../lambdas/platform/dynamo/json-client.js';
import { itemKeys } from '../../lambdas/platform/dynamo/item-keys.js';
import type { Page } from '../../lambdas/billing/pages.js';
import { generationRecord } from '../support/records.js';
import { createTestStore, type TestStore } from '../support/store.js';

let store: TestStore;
let silent: Server;
let silentPort: number;
const silentSockets = new Set<Socket>();

beforeAll(async () => {
  store = await createTestStore();
  // Accepts connections and never answers. What they send is read (and dropped), so that a connection the
  // client closes closes here too: one left unread would keep the worker process alive after the tests.
  silent = createServer((socket) => {
    socket.resume();
    silentSockets.add(socket);
    socket.once('close', () => silentSockets.delete(socket));
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  silentPort = (silent.address() as { port: number }).port;
}, 60_000);

afterAll(async () => {
  await store?.drop();
  for (const socket of silentSockets) socket.destroy();
  await new Promise<void>((resolve) => (silent ? silent.close(() => resolve()) : resolve()));
});

const page = (seq: number): Page => ({
  block: 'PAGEWRITES00',
  seq,
  writtenAt: 1_795_514_400_000,
  entries: [
    { record: generationRecord('gen-1795514400-PAGEWRITES0000', { cost: { ...generationRecord('x').cost, total: 2n ** 60n } }), claim: { kind: 'lease', leaseId: 'lease-1', amount: 30n } },
    { record: generationRecord('gen-1795514400-PAGEWRITES0001', { is_byok: true }), claim: { kind: 'none', amount: 0n } },
  ],
});

describe('page writes', () => {
  it('store the page item exactly, report its write units, and find a page written twice stored already', async () => {
    const db = createDocumentClient({ endpoint: store.endpoint });
    const pages = new PageRepository(db, store.tableName);
    expect(await pages.put(page(1))).toEqual({ writeUnits: 1 });
    const stored = (await db.send(new GetCommand({ TableName: store.tableName, Key: itemKeys.page('PAGEWRITES00', 1), ConsistentRead: true }))).Item!;
    const expected = pageToItem(page(1));
    expect({ ...stored, data: Buffer.from(stored.data as Uint8Array) }).toEqual(expected);
    expect(pageFromItem(stored)).toEqual(pageFromItem(expected));
    // The reply of a write that landed was lost, and the writer tries again: the page is there.
    expect(await pages.put(page(1))).toEqual({ writeUnits: 0 });
    db.destroy();
  });

  it('name DynamoDB\'s refusal, and fail when the store is not there or does not answer', async () => {
    const db = createDocumentClient({ endpoint: store.endpoint });
    const missingTable = new PageRepository(db, 'no-such-table');
    const refused = await missingTable.put(page(2)).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(DynamoJsonError);
    expect(refused).toMatchObject({ name: 'ResourceNotFoundException', status: 400 });

    const closed = new PageRepository(db, store.tableName, new DynamoJsonClient(jsonClientConfigOf(new DynamoDBClient({ endpoint: 'http://127.0.0.1:1', region: 'local', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } }))));
    await expect(closed.put(page(3))).rejects.toThrow(/ECONNREFUSED/);

    const mute = new DynamoJsonClient({ ...jsonClientConfigOf(new DynamoDBClient({ endpoint: `http://127.0.0.1:${silentPort}`, region: 'local', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } })), timeoutMs: 200 });
    await expect(new PageRepository(db, store.tableName, mute).put(page(4))).rejects.toThrow('DynamoDB PutItem not answered within 200 ms');
    mute.destroy();
    db.destroy();
  });
});
