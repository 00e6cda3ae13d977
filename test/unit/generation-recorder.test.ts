// Batched generation-record writes: one BatchWriteItem per window, at most 25 items each, unprocessed items retried.
import { beforeEach, describe, expect, it } from '@jest/globals';
import { mockClient } from 'aws-sdk-client-mock';
import { BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GenerationRepository, type GenerationRecord } from '../../lambdas/store/generation-repository.js';
import { GenerationRecorder } from '../../lambdas/inference/generation-recorder.js';
import { emptyUsage } from '../../lambdas/providers/types.js';

const db = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const mock = mockClient(db);
const repository = new GenerationRepository(db, 'table');

function record(id: string): GenerationRecord {
  const zero = 0n;
  return {
    id, org_id: 'o', workspace_id: 'w', key_hash: 'k', model: 'm/x', provider: 'p', upstream_model: 'x', provider_id: null, api: 'chat',
    streamed: false, status: 'completed', finish_reason: 'stop', native_finish_reason: 'stop', usage: emptyUsage(),
    cost: { prompt: 5n, completion: zero, cache_read: zero, cache_write: zero, reasoning: zero, request: zero, total: 5n },
    is_byok: false, service_tier: null, attempts: 1, created_at: '2026-01-01T00:00:00.000Z', latency_ms: 1, first_token_ms: 1,
    generation_time_ms: 0, session_id: null, user_hash: null, error: null,
  };
}

beforeEach(() => {
  mock.reset();
});

describe('GenerationRecorder', () => {
  it('writes the records of one window together, 25 per BatchWriteItem', async () => {
    mock.on(BatchWriteCommand).resolves({});
    const recorder = new GenerationRecorder(repository, 20, () => undefined);
    await Promise.all(Array.from({ length: 30 }, (_, i) => recorder.record(record(`gen-${i}`))));
    const sizes = mock.commandCalls(BatchWriteCommand).map((call) => call.args[0].input.RequestItems!.table!.length);
    expect(sizes.sort()).toEqual([25, 5]);
    const item = mock.commandCalls(BatchWriteCommand)[0]!.args[0].input.RequestItems!.table![0]!.PutRequest!.Item!;
    expect(item).toMatchObject({ pk: 'GEN#gen-0', sk: 'GEN', gsi1pk: 'ORG#o#GENS', type: 'generation', cost: { total: 5, prompt: 5 } });
  });

  it('retries unprocessed items until they are stored', async () => {
    mock.on(BatchWriteCommand)
      .resolvesOnce({ UnprocessedItems: { table: [{ PutRequest: { Item: { pk: 'GEN#b' } } }] } })
      .resolves({});
    const recorder = new GenerationRecorder(repository, 0, () => undefined);
    await Promise.all([recorder.record(record('a')), recorder.record(record('b'))]);
    const calls = mock.commandCalls(BatchWriteCommand).map((call) => call.args[0].input.RequestItems!.table!.length);
    expect(calls).toEqual([2, 1]);
  });

  it('logs a lost batch and still settles every caller', async () => {
    mock.on(BatchWriteCommand).rejects(new Error('table gone'));
    const logs: string[] = [];
    const recorder = new GenerationRecorder(repository, 0, (line) => logs.push(line));
    await recorder.record(record('lost'));
    expect(JSON.parse(logs[0]!)).toMatchObject({ level: 'error', generation_ids: ['lost'], error: 'Error: table gone' });
  });

  it('lets records that finish during a write wait and go together in the next batch', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    mock.on(BatchWriteCommand).callsFakeOnce(async () => { await gate; return {}; }).resolves({});
    const recorder = new GenerationRecorder(repository, 0, () => undefined, 1);
    const first = recorder.record(record('first'));
    await new Promise((resolve) => setImmediate(resolve));
    const later = Array.from({ length: 7 }, (_, i) => recorder.record(record(`later-${i}`)));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(mock.commandCalls(BatchWriteCommand)).toHaveLength(1);
    release();
    await Promise.all([first, ...later]);
    expect(mock.commandCalls(BatchWriteCommand).map((call) => call.args[0].input.RequestItems!.table!.length)).toEqual([1, 7]);
  });

  it('holds new requests back while the backlog is over its bound, until it drains to half', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    mock.on(BatchWriteCommand).callsFake(async () => { await gate; return {}; });
    const recorder = new GenerationRecorder(repository, 0, () => undefined, 1, 10);
    const pending = Array.from({ length: 12 }, (_, i) => recorder.record(record(`r-${i}`)));
    await new Promise((resolve) => setImmediate(resolve));
    expect(recorder.backlog).toBe(12);
    let admitted = false;
    const admission = recorder.admit().then(() => { admitted = true; });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(admitted).toBe(false);
    release();
    await Promise.all([...pending, admission]);
    expect(admitted).toBe(true);
    expect(recorder.backlog).toBe(0);
    await recorder.admit();
  });
});
