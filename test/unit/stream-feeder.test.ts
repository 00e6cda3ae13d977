// The stream feeder's shard handling that DynamoDB Local does not show on demand (it keeps one shard per
// stream and expires iterators after 15 minutes): a split shard read parent first, an expired iterator, a
// checkpoint older than the stream's records. The SDK clients are mocked; test/integration has the real store.
import { afterEach, beforeEach, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand, DynamoDBStreamsClient, ExpiredIteratorException, GetRecordsCommand, GetShardIteratorCommand,
  TrimmedDataAccessException, type _Record,
} from '@aws-sdk/client-dynamodb-streams';
import { mockClient } from 'aws-sdk-client-mock';
import type { DynamoDBRecord } from 'aws-lambda';
import { memoryCheckpoints, startStreamFeeder, type StreamCheckpoints, type StreamFeeder } from '../../bin/local/stream-feeder.js';
import { matchesPageFilter } from '../../lambdas/billing/page-stream.js';
import { Logger } from '../../lambdas/platform/logger.js';

const STREAM = 'arn:aws:dynamodb:ddblocal:000000000000:table/gateway/stream/2026-01-01T00:00:00.000';
const tables = mockClient(DynamoDBClient);
const streams = mockClient(DynamoDBStreamsClient);
let dir: string;
let feeder: StreamFeeder | undefined;
const logs: string[] = [];

beforeEach(() => {
  tables.reset();
  streams.reset();
  logs.length = 0;
  dir = mkdtempSync(join(tmpdir(), 'gateway-feeder-unit-'));
  tables.on(DescribeTableCommand).resolves({ Table: { StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_IMAGE' }, LatestStreamArn: STREAM } });
});

afterEach(async () => {
  await feeder?.stop();
  feeder = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const pageRecord = (seq: string): _Record => ({
  eventID: `e${seq}`, eventName: 'INSERT', eventVersion: '1.1', eventSource: 'aws:dynamodb', awsRegion: 'ddblocal',
  dynamodb: {
    ApproximateCreationDateTime: new Date('2026-01-01T00:00:00Z'), Keys: { pk: { S: 'GENS#1' }, sk: { S: `P#${seq}` } },
    NewImage: { pk: { S: 'GENS#1' }, sk: { S: `P#${seq}` } }, SequenceNumber: seq, SizeBytes: 20, StreamViewType: 'NEW_IMAGE',
  },
});

function start(checkpoints: StreamCheckpoints = memoryCheckpoints()) {
  const delivered: DynamoDBRecord[] = [];
  feeder = startStreamFeeder({
    endpoint: 'http://127.0.0.1:1', tableName: 'gateway', filter: matchesPageFilter,
    handler: async (event) => { delivered.push(...event.Records); },
    batchSize: 100, batchWindowMs: 0, retryAttempts: 2, pollMs: 10, retryDelayMs: 1,
    checkpoints, deadLetterFile: join(dir, 'dead-letters.jsonl'), log: new Logger((line) => { logs.push(line); }),
  });
  return { feeder, sequenceNumbers: () => delivered.map((record) => record.dynamodb?.SequenceNumber) };
}

const iteratorCalls = () => streams.commandCalls(GetShardIteratorCommand).map((call) => {
  const { ShardId, ShardIteratorType, SequenceNumber } = call.args[0].input;
  return [ShardId, ShardIteratorType, SequenceNumber];
});

it('reads a split shard\'s parent to its end before its child, and renews an expired iterator after the last record read', async () => {
  // Listed child first: the order of the listing must not decide the order of reading.
  streams.on(DescribeStreamCommand).resolves({ StreamDescription: { StreamArn: STREAM, Shards: [
    { ShardId: 'shard-2', ParentShardId: 'shard-1', SequenceNumberRange: { StartingSequenceNumber: '21' } },
    { ShardId: 'shard-1', SequenceNumberRange: { StartingSequenceNumber: '11', EndingSequenceNumber: '12' } },
  ] } });
  streams.on(GetShardIteratorCommand, { ShardId: 'shard-1', ShardIteratorType: 'TRIM_HORIZON' }).resolves({ ShardIterator: 'it-1' });
  streams.on(GetShardIteratorCommand, { ShardId: 'shard-2', ShardIteratorType: 'TRIM_HORIZON' }).resolves({ ShardIterator: 'it-2a' });
  streams.on(GetShardIteratorCommand, { ShardId: 'shard-2', ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: '21' }).resolves({ ShardIterator: 'it-2b' });
  // The parent is closed: its last page has no next iterator.
  streams.on(GetRecordsCommand, { ShardIterator: 'it-1' }).resolves({ Records: [pageRecord('11'), pageRecord('12')] });
  streams.on(GetRecordsCommand, { ShardIterator: 'it-2a' }).resolves({ Records: [pageRecord('21')], NextShardIterator: 'it-2-expired' });
  streams.on(GetRecordsCommand, { ShardIterator: 'it-2-expired' }).rejects(new ExpiredIteratorException({ message: 'Iterator expired', $metadata: {} }));
  streams.on(GetRecordsCommand, { ShardIterator: 'it-2b' }).resolves({ Records: [pageRecord('22')], NextShardIterator: 'it-2c' });
  streams.on(GetRecordsCommand, { ShardIterator: 'it-2c' }).resolves({ Records: [], NextShardIterator: 'it-2c' });

  const { feeder: running, sequenceNumbers } = start();
  expect(await running.drain()).toBe(true);
  expect(sequenceNumbers()).toEqual(['11', '12', '21', '22']);
  expect(iteratorCalls()).toEqual([
    ['shard-1', 'TRIM_HORIZON', undefined],
    ['shard-2', 'TRIM_HORIZON', undefined],
    ['shard-2', 'AFTER_SEQUENCE_NUMBER', '21'],
  ]);
  // An expired iterator is routine, not an outage.
  expect(logs).toEqual([]);
});

it('reads from the oldest record kept when the records after its checkpoint have expired from the stream', async () => {
  const checkpoints = memoryCheckpoints();
  checkpoints.set(STREAM, 'shard-1', '5');
  streams.on(DescribeStreamCommand).resolves({ StreamDescription: { StreamArn: STREAM, Shards: [{ ShardId: 'shard-1' }] } });
  streams.on(GetShardIteratorCommand, { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER' }).rejects(new TrimmedDataAccessException({ message: 'trimmed', $metadata: {} }));
  streams.on(GetShardIteratorCommand, { ShardIteratorType: 'TRIM_HORIZON' }).resolves({ ShardIterator: 'it-1' });
  streams.on(GetRecordsCommand, { ShardIterator: 'it-1' }).resolves({ Records: [pageRecord('40')], NextShardIterator: 'it-1b' });
  streams.on(GetRecordsCommand, { ShardIterator: 'it-1b' }).resolves({ Records: [], NextShardIterator: 'it-1b' });

  const { feeder: running, sequenceNumbers } = start(checkpoints);
  expect(await running.drain()).toBe(true);
  expect(sequenceNumbers()).toEqual(['40']);
  expect(iteratorCalls()).toEqual([['shard-1', 'AFTER_SEQUENCE_NUMBER', '5'], ['shard-1', 'TRIM_HORIZON', undefined]]);
  expect(checkpoints.get(STREAM, 'shard-1')).toBe('40');
  expect(logs.map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([
    expect.objectContaining({ level: 'warn', message: expect.stringContaining('have expired from the stream'), shard: 'shard-1', checkpoint: '5' }),
  ]);
});
