// npm start's stream feeder against the run's DynamoDB Local (a fresh table per test): Lambda-shaped events
// for new pages only, batching, checkpoints across a restart, bisection, partial failures, dead letters,
// drain(), and a DynamoDB Local that dies and comes back. Prints the write → handler lag it measures.
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateTableCommand, DeleteItemCommand, DeleteTableCommand, DescribeTableCommand, DynamoDBClient, PutItemCommand,
  TransactWriteItemsCommand, UpdateItemCommand, type AttributeValue,
} from '@aws-sdk/client-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { createTestStore, type TestStore } from '../support/store.js';
import { waitFor } from '../support/wait.js';
import { fileCheckpoints, memoryCheckpoints, startStreamFeeder, type StreamFeeder, type StreamFeederOptions } from '../../bin/local/stream-feeder.js';
import { startDynamoDbLocal } from '../../bin/local/dynamodb-local.js';
import { ensureTable } from '../../lambdas/platform/dynamo/create-table.js';
import { matchesPageFilter } from '../../lambdas/billing/page-stream.js';
import { Logger } from '../../lambdas/platform/logger.js';

let store: TestStore;
let client: DynamoDBClient;
let dir: string;
const feeders: StreamFeeder[] = [];
const logs: string[] = [];

beforeEach(async () => {
  store = await createTestStore();
  client = new DynamoDBClient({ endpoint: store.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  dir = mkdtempSync(join(tmpdir(), 'gateway-feeder-'));
  logs.length = 0;
});

afterEach(async () => {
  for (const feeder of feeders.splice(0)) await feeder.stop();
  client.destroy();
  await store.drop();
  rmSync(dir, { recursive: true, force: true });
});

type Handler = StreamFeederOptions['handler'];

/** What the handler was given: each invocation's records, by their sort keys. */
function recorder(reply: (event: DynamoDBStreamEvent, call: number) => DynamoDBBatchResponse | void | Promise<DynamoDBBatchResponse | void> = () => undefined) {
  const batches: DynamoDBRecord[][] = [];
  const handler: Handler = async (event) => {
    batches.push(event.Records);
    return reply(event, batches.length);
  };
  const keys = () => batches.map((batch) => batch.map((record) => record.dynamodb?.Keys?.sk?.S));
  return { batches, handler, keys };
}

function feed(handler: Handler, options: Partial<StreamFeederOptions> = {}): StreamFeeder {
  const feeder = startStreamFeeder({
    endpoint: store.endpoint, tableName: store.tableName, handler, filter: matchesPageFilter,
    batchSize: 100, batchWindowMs: 0, retryAttempts: 2, pollMs: 50, retryDelayMs: 1,
    checkpoints: memoryCheckpoints(), deadLetterFile: join(dir, 'dead-letters.jsonl'),
    log: new Logger((line) => { logs.push(line); }),
    ...options,
  });
  feeders.push(feeder);
  return feeder;
}

const page = (block: string, seq: string, extra: Record<string, AttributeValue> = {}) =>
  ({ pk: { S: `GENS#${block}` }, sk: { S: `P#${seq}` }, ...extra });

async function put(item: Record<string, AttributeValue>, tableName = store.tableName, db = client): Promise<void> {
  await db.send(new PutItemCommand({ TableName: tableName, Item: item }));
}

async function putPages(count: number, block = 'b1'): Promise<string[]> {
  const keys: string[] = [];
  for (let i = 0; i < count; i++) {
    const seq = String(i).padStart(4, '0');
    await put(page(block, seq));
    keys.push(`P#${seq}`);
  }
  return keys;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

describe('events', () => {
  it('are Lambda-shaped DynamoDB stream events, for page INSERTs only, in write order', async () => {
    const { batches, handler } = recorder();
    const feeder = feed(handler);
    const before = Math.floor(Date.now() / 1000);
    const maps = { budgets: { M: {} }, nested: { M: { inner: { M: {} }, list: { L: [{ M: {} }] } } } };
    await put(page('a', '0001', { body: { B: Buffer.from([0, 1, 254, 255]) }, n: { N: '12345678901234567890' }, tags: { L: [{ S: 'x' }, { BOOL: true }, { NULL: true }] }, ...maps }));
    await put({ pk: { S: 'GENS#a' }, sk: { S: 'APPLIED' }, through: { S: 'P#0001' } });
    await put({ pk: { S: 'ORG#o1' }, sk: { S: 'ORG' } });
    await put({ pk: { S: 'GEN#g1' }, sk: { S: 'GEN' } });
    await put(page('b', '0001'));
    await client.send(new UpdateItemCommand({ TableName: store.tableName, Key: { pk: { S: 'GENS#a' }, sk: { S: 'P#0001' } }, UpdateExpression: 'SET touched = :t', ExpressionAttributeValues: { ':t': { BOOL: true } } }));
    await client.send(new DeleteItemCommand({ TableName: store.tableName, Key: { pk: { S: 'GENS#b' }, sk: { S: 'P#0001' } } }));
    // Pages written in one transaction with other items, as a settlement would.
    await client.send(new TransactWriteItemsCommand({ TransactItems: [
      { Put: { TableName: store.tableName, Item: page('a', '0002') } },
      { Put: { TableName: store.tableName, Item: { pk: { S: 'KEY#k1' }, sk: { S: 'KEY' } } } },
      { Put: { TableName: store.tableName, Item: page('c', '0001') } },
    ] }));
    expect(await feeder.drain()).toBe(true);

    const records = batches.flat();
    expect(records.map((record) => `${record.dynamodb?.Keys?.pk?.S} ${record.dynamodb?.Keys?.sk?.S}`)).toEqual(['GENS#a P#0001', 'GENS#b P#0001', 'GENS#a P#0002', 'GENS#c P#0001']);
    const streamArn = (await client.send(new DescribeTableCommand({ TableName: store.tableName }))).Table!.LatestStreamArn;
    for (const record of records) {
      expect(Object.keys(record).sort()).toEqual(['awsRegion', 'dynamodb', 'eventID', 'eventName', 'eventSource', 'eventSourceARN', 'eventVersion']);
      expect(record).toMatchObject({ eventName: 'INSERT', eventSource: 'aws:dynamodb', eventSourceARN: streamArn, eventVersion: '1.1', eventID: expect.any(String), awsRegion: expect.any(String) });
      expect(Object.keys(record.dynamodb!).sort()).toEqual(['ApproximateCreationDateTime', 'Keys', 'NewImage', 'SequenceNumber', 'SizeBytes', 'StreamViewType']);
      expect(record.dynamodb).toMatchObject({ StreamViewType: 'NEW_IMAGE', SizeBytes: expect.any(Number), SequenceNumber: expect.stringMatching(/^\d+$/) });
      // Epoch seconds, as Lambda gives it (DynamoDB Local rounds it down to the minute).
      expect(record.dynamodb!.ApproximateCreationDateTime).toBeGreaterThan(before - 120);
      expect(record.dynamodb!.ApproximateCreationDateTime).toBeLessThanOrEqual(Date.now() / 1000);
    }
    // Binary values base64, numbers as strings, lists, nulls and empty maps as Lambda's JSON has them
    // (DynamoDB Local's stream spells an empty map `{}`).
    expect(records[0]!.dynamodb!.NewImage).toEqual({
      pk: { S: 'GENS#a' }, sk: { S: 'P#0001' }, body: { B: 'AAH+/w==' }, n: { N: '12345678901234567890' }, tags: { L: [{ S: 'x' }, { BOOL: true }, { NULL: true }] }, ...maps,
    });
    expect(records[0]!.dynamodb!.Keys).toEqual({ pk: { S: 'GENS#a' }, sk: { S: 'P#0001' } });
    const sequence = records.map((record) => BigInt(record.dynamodb!.SequenceNumber!));
    expect(sequence).toEqual([...sequence].sort((a, b) => (a < b ? -1 : 1)));
  });

  it('come in batches of at most batchSize, one at a time, in stream order', async () => {
    const written = await putPages(5);
    const { handler, keys } = recorder();
    const feeder = feed(handler, { batchSize: 2 });
    expect(await feeder.drain()).toBe(true);
    expect(keys()).toEqual([written.slice(0, 2), written.slice(2, 4), written.slice(4)]);
  });

  it('gather records for the batching window; drain() does not wait for it', async () => {
    const { handler, keys } = recorder();
    const feeder = feed(handler, { batchSize: 10, batchWindowMs: 600_000 });
    const written = await putPages(3);
    expect(await feeder.drain()).toBe(true);
    expect(keys()).toEqual([written]);
  });
});

describe('checkpoints', () => {
  it('let a restarted feeder resume after the last acknowledged record, from a file', async () => {
    const file = join(dir, 'checkpoints.json');
    const first = recorder();
    const before = await putPages(3, 'before');
    const feeder = feed(first.handler, { checkpoints: fileCheckpoints(file) });
    expect(await feeder.drain()).toBe(true);
    await feeder.stop();
    expect(first.keys().flat()).toEqual(before);

    const after = await putPages(2, 'after');
    const second = recorder();
    const restarted = feed(second.handler, { checkpoints: fileCheckpoints(file) });
    expect(await restarted.drain()).toBe(true);
    expect(second.batches.flat().map((record) => record.dynamodb?.Keys?.pk?.S)).toEqual(['GENS#after', 'GENS#after']);
    expect(second.keys().flat()).toEqual(after);
    const saved = JSON.parse(readFileSync(file, 'utf8')) as Record<string, Record<string, string>>;
    expect(Object.values(Object.values(saved)[0]!)).toEqual([second.batches.flat().at(-1)!.dynamodb!.SequenceNumber]);
  });

  it('are not moved past a batch that failed when the feeder stops', async () => {
    const checkpoints = memoryCheckpoints();
    const written = await putPages(2);
    let release: () => void = () => undefined;
    const blocked = new Promise<void>((resolve) => { release = resolve; });
    const failing = recorder(async () => {
      await blocked;
      throw new Error('store unavailable');
    });
    const feeder = feed(failing.handler, { checkpoints, retryAttempts: 100 });
    // Blocked inside the handler: drain cannot finish, and says so.
    expect(await feeder.drain({ timeoutMs: 300 })).toBe(false);
    release();
    await feeder.stop();

    const next = recorder();
    const restarted = feed(next.handler, { checkpoints });
    expect(await restarted.drain()).toBe(true);
    expect(next.keys().flat()).toEqual(written);
  });

  it('stop() does not wait for a handler that never returns', async () => {
    const checkpoints = memoryCheckpoints();
    const written = await putPages(1);
    const hung = recorder(() => new Promise<void>(() => undefined));
    const feeder = feed(hung.handler, { checkpoints });
    expect(await feeder.drain({ timeoutMs: 300 })).toBe(false);
    // The handler holds the batch before stop() (on a loaded machine the drain's 300 ms can pass before
    // the first read of the stream hands it over, and stop() then has no batch running to warn of).
    await waitFor(() => hung.batches.length > 0, { what: 'the hung handler to get its batch' });
    await feeder.stop();
    expect(logs.map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([expect.objectContaining({ level: 'warn', message: expect.stringContaining('still running a batch') })]);

    const next = recorder();
    expect(await feed(next.handler, { checkpoints }).drain()).toBe(true);
    expect(next.keys()).toEqual([written]);
  });
});

describe('failures', () => {
  it('bisect a batch whose invocation threw, down to the record that fails, without counting the splits as retries', async () => {
    const written = await putPages(8);
    // Page 5 fails whenever it is not alone: only splitting the batch gets it through.
    const { handler, keys } = recorder((event) => {
      if (event.Records.length > 1 && event.Records.some((record) => record.dynamodb?.Keys?.sk?.S === written[5])) throw new Error('poisoned batch');
    });
    const feeder = feed(handler, { retryAttempts: 0 });
    expect(await feeder.drain()).toBe(true);
    expect(keys()).toEqual([
      written, written.slice(0, 4), written.slice(4), written.slice(4, 6), [written[4]], [written[5]], [written[6]], [written[7]],
    ]);
    expect(logs.filter((line) => line.includes('dead-letter'))).toEqual([]);
  });

  it('retry from the first failed record a partial failure names, acknowledging the ones before it', async () => {
    const written = await putPages(5);
    const { handler, keys } = recorder((event, call) => {
      const seq = (i: number) => event.Records[i]!.dynamodb!.SequenceNumber!;
      // The first reply names records 3 and 2 (out of order): the retry starts at 2.
      return call === 1 ? { batchItemFailures: [{ itemIdentifier: seq(3) }, { itemIdentifier: seq(2) }] } : { batchItemFailures: [] };
    });
    const feeder = feed(handler);
    expect(await feeder.drain()).toBe(true);
    expect(keys()).toEqual([written, written.slice(2)]);
  });

  it('treat a reply naming a record not in the batch as a failed invocation', async () => {
    const written = await putPages(2);
    const { handler, keys } = recorder((_event, call) => (call === 1 ? { batchItemFailures: [{ itemIdentifier: 'not-a-sequence-number' }] } : undefined));
    const feeder = feed(handler);
    expect(await feeder.drain()).toBe(true);
    expect(keys()).toEqual([written, [written[0]], [written[1]]]);
  });

  it('send a record to the dead-letter file after its retries, log an error and move on', async () => {
    const written = await putPages(3);
    const { batches, handler, keys } = recorder((event) => {
      if (event.Records.some((record) => record.dynamodb?.Keys?.sk?.S === written[1])) throw new Error('cannot apply this page');
    });
    const checkpoints = memoryCheckpoints();
    const feeder = feed(handler, { retryAttempts: 2, checkpoints });
    expect(await feeder.drain()).toBe(true);
    // Split to the failing record, which then fails alone once and twice more (retryAttempts 2), then page 2.
    expect(keys()).toEqual([written, written.slice(0, 2), [written[0]], [written[1]], [written[1]], [written[1]], [written[2]]]);

    const dead = readFileSync(join(dir, 'dead-letters.jsonl'), 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, any>);
    const poisoned = batches[3]![0]!;
    expect(dead).toEqual([expect.objectContaining({
      shard_id: expect.any(String), stream_arn: poisoned.eventSourceARN, sequence_number: poisoned.dynamodb!.SequenceNumber,
      attempts: 3, error: 'Error: cannot apply this page', record: poisoned,
    })]);
    const errors = logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.level === 'error');
    expect(errors).toEqual([expect.objectContaining({ sequence_number: poisoned.dynamodb!.SequenceNumber, attempts: 3, file: join(dir, 'dead-letters.jsonl') })]);

    // Dead-lettered means done: a restart does not deliver it again.
    await feeder.stop();
    const next = recorder();
    expect(await feed(next.handler, { checkpoints }).drain()).toBe(true);
    expect(next.batches).toEqual([]);
  });

  it('dead-letter a record a partial failure keeps naming', async () => {
    const written = await putPages(3);
    const { handler, keys } = recorder((event) => {
      const failed = event.Records.find((record) => record.dynamodb?.Keys?.sk?.S === written[1]);
      return { batchItemFailures: failed ? [{ itemIdentifier: failed.dynamodb!.SequenceNumber! }] : [] };
    });
    const feeder = feed(handler, { retryAttempts: 1 });
    expect(await feeder.drain()).toBe(true);
    // Named once after record 0 was done, then again when it came first: past retryAttempts 1.
    expect(keys()).toEqual([written, written.slice(1), [written[2]]]);
    const dead = readFileSync(join(dir, 'dead-letters.jsonl'), 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, any>);
    expect(dead.map((entry) => [entry.record.dynamodb.Keys.sk.S, entry.attempts, entry.error])).toEqual([[written[1], 2, 'reported as a batch item failure']]);
  });
});

describe('drain()', () => {
  it('resolves once everything written before it was delivered, round after round', async () => {
    const { handler, batches } = recorder();
    const feeder = feed(handler, { pollMs: 250 });
    expect(await feeder.drain()).toBe(true);
    let total = 0;
    for (const count of [1, 7, 0, 30, 2]) {
      await putPages(count, `round-${total}`);
      total += count;
      expect(await feeder.drain()).toBe(true);
      expect(batches.flat()).toHaveLength(total);
    }
  });

  it('waits for a table whose stream is enabled only later (an older local table)', async () => {
    const tableName = `${store.tableName}-old`;
    await client.send(new CreateTableCommand({
      TableName: tableName, BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
    }));
    try {
      const { handler, keys } = recorder();
      const feeder = feed(handler, { tableName });
      expect(await feeder.drain({ timeoutMs: 1500 })).toBe(false);
      expect(logs.map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([
        expect.objectContaining({ level: 'warn', message: expect.stringContaining('cannot read the table\'s stream'), error: `Error: table ${tableName} has no stream enabled` }),
      ]);
      await ensureTable(client, tableName);
      expect((await client.send(new DescribeTableCommand({ TableName: tableName }))).Table!.StreamSpecification).toEqual({ StreamEnabled: true, StreamViewType: 'NEW_IMAGE' });
      await put(page('x', '0001'), tableName);
      expect(await feeder.drain()).toBe(true);
      expect(keys()).toEqual([['P#0001']]);
    } finally {
      for (const feeder of feeders.splice(0)) await feeder.stop();
      await client.send(new DeleteTableCommand({ TableName: tableName }));
    }
  });
});

describe('a DynamoDB Local that dies', () => {
  it('is waited for, reported once, and read again from where the feeder was once it is back', async () => {
    const dataDir = join(dir, 'dynamodb');
    let db = await startDynamoDbLocal({ dataDir });
    const own = () => new DynamoDBClient({ endpoint: db.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
    let admin = own();
    try {
      await ensureTable(admin, 'gateway');
      const { handler, keys } = recorder();
      const feeder = startStreamFeeder({
        endpoint: db.endpoint, tableName: 'gateway', handler, filter: matchesPageFilter, batchSize: 100, batchWindowMs: 0, retryAttempts: 2,
        pollMs: 50, checkpoints: memoryCheckpoints(), deadLetterFile: join(dir, 'dead-letters.jsonl'), log: new Logger((line) => { logs.push(line); }),
      });
      feeders.push(feeder);
      await put(page('a', '0001'), 'gateway', admin);
      expect(await feeder.drain()).toBe(true);

      db.kill();
      await new Promise((resolve) => db.process.once('exit', resolve));
      expect(await feeder.drain({ timeoutMs: 2500 })).toBe(false);
      db = await startDynamoDbLocal({ dataDir, port: db.port });
      admin.destroy();
      admin = own();
      await put(page('a', '0002'), 'gateway', admin);
      expect(await feeder.drain()).toBe(true);
      expect(keys().flat()).toEqual(['P#0001', 'P#0002']);
      const messages = logs.map((line) => (JSON.parse(line) as { level: string; message: string }));
      expect(messages.filter((line) => line.level === 'warn')).toHaveLength(1);
      expect(messages.at(-1)).toEqual(expect.objectContaining({ level: 'info', message: 'stream feeder: reading the stream again' }));
    } finally {
      for (const feeder of feeders.splice(0)) await feeder.stop();
      admin.destroy();
      await db.stop();
    }
  }, 60_000);
});

describe('lag', () => {
  it('is measured from a page write to the handler starting on it (printed)', async () => {
    const lags: number[] = [];
    const { handler } = recorder((event) => {
      const now = Date.now();
      for (const record of event.Records) lags.push(now - Number(record.dynamodb!.NewImage!.written_at!.N));
    });
    // npm start's settings: window 0, a shard read four times a second when it had nothing new.
    const feeder = feed(handler, { pollMs: 250 });
    expect(await feeder.drain()).toBe(true);
    const count = 60;
    for (let i = 0; i < count; i++) {
      await put(page('lag', String(i).padStart(4, '0'), { written_at: { N: String(Date.now()) } }));
      // Irregular gaps, so writes land at every point of the poll cycle.
      await new Promise((resolve) => setTimeout(resolve, 20 + ((i * 37) % 90)));
    }
    expect(await feeder.drain()).toBe(true);
    expect(lags).toHaveLength(count);
    const sorted = [...lags].sort((a, b) => a - b);
    console.log(`stream feeder lag, write → handler start, ${count} pages, poll 250 ms: p50 ${percentile(sorted, 50)} ms, p99 ${percentile(sorted, 99)} ms, max ${sorted.at(-1)} ms`);
  }, 60_000);
});
