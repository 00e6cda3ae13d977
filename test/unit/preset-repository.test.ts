// The preset repository's version transaction, checked with aws-sdk-client-mock: its conditions, and what it
// does when DynamoDB refuses it (a lost race or, on AWS, a transaction conflict, which DynamoDB Local never
// reports): read again and try on top of the winner, and give up only after VERSION_ATTEMPTS tries.
import { beforeEach, describe, expect, it } from '@jest/globals';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoDBDocumentClient, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDBClient, TransactionCanceledException, TransactionConflictException } from '@aws-sdk/client-dynamodb';
import { PresetRepository, VERSION_ATTEMPTS } from '../../lambdas/presets/preset-repository.js';

const db = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const mock = mockClient(db);
let waits: number[] = [];
const repo = new PresetRepository(db, 'table', async (attempt) => { waits.push(attempt); });
const scope = { orgId: 'org1', workspaceId: 'ws1' };
const next = { config: { model: 'a/b' }, systemPrompt: 'Be brief.', creator: 'keyhash', now: '2026-11-25T00:00:00.000Z' };
const cancelled = (code: string) => new TransactionCanceledException({ message: 'cancelled', $metadata: {}, CancellationReasons: [{ Code: code }, { Code: 'None' }] });
const stored = (version: number) => ({
  pk: 'PRESETS#org1#ws1', sk: 'PRESET#p', type: 'preset', org_id: 'org1', id: 'preset-id', name: 'p', slug: 'p', description: null, status: 'active',
  status_updated_at: null, created_at: 'c', updated_at: 'u', creator_user_id: 'k', workspace_id: 'ws1', designated_version_id: `v${version}`,
  designated_version: { id: `v${version}`, version }, latest_version: version,
});

beforeEach(() => {
  mock.reset();
  waits = [];
});

describe('PresetRepository.addVersion', () => {
  it('creates version 1 with the preset only if neither exists', async () => {
    mock.on(GetCommand).resolves({});
    mock.on(TransactWriteCommand).resolves({});
    const outcome = await repo.addVersion(scope, 'p', next);
    expect(outcome).toMatchObject({ kind: 'saved', attempts: 1, preset: { slug: 'p', name: 'p', designated_version: { version: 1, system_prompt: 'Be brief.', config: { model: 'a/b' } } } });
    const [presetPut, versionPut] = mock.commandCalls(TransactWriteCommand)[0]!.args[0].input.TransactItems!;
    expect(presetPut!.Put).toMatchObject({ ConditionExpression: 'attribute_not_exists(pk)', Item: { pk: 'PRESETS#org1#ws1', sk: 'PRESET#p', latest_version: 1 } });
    expect(versionPut!.Put).toMatchObject({ ConditionExpression: 'attribute_not_exists(pk)', Item: { sk: 'V#000000001', type: 'preset_version', version: 1 } });
    expect(mock.commandCalls(GetCommand)[0]!.args[0].input.ConsistentRead).toBe(true);
  });

  it('takes the next number on the condition that the preset is still at the one it read', async () => {
    mock.on(GetCommand).resolves({ Item: stored(4) });
    mock.on(TransactWriteCommand).resolves({});
    const outcome = await repo.addVersion(scope, 'p', next);
    expect(outcome).toMatchObject({ kind: 'saved', preset: { id: 'preset-id', designated_version: { version: 5, preset_id: 'preset-id' } } });
    const [presetPut, versionPut] = mock.commandCalls(TransactWriteCommand)[0]!.args[0].input.TransactItems!;
    expect(presetPut!.Put).toMatchObject({ ConditionExpression: 'latest_version = :seen', ExpressionAttributeValues: { ':seen': 4 }, Item: { latest_version: 5, created_at: 'c' } });
    expect(versionPut!.Put!.Item).toMatchObject({ pk: 'PRESET#preset-id', sk: 'V#000000005' });
  });

  it('after a lost race or a transaction conflict reads again and builds on the winner', async () => {
    mock.on(GetCommand).resolvesOnce({ Item: stored(1) }).resolvesOnce({ Item: stored(2) }).resolves({ Item: stored(3) });
    mock.on(TransactWriteCommand)
      .rejectsOnce(cancelled('ConditionalCheckFailed'))
      .rejectsOnce(new TransactionConflictException({ message: 'conflict', $metadata: {} }))
      .resolves({});
    const outcome = await repo.addVersion(scope, 'p', next);
    expect(outcome).toMatchObject({ kind: 'saved', attempts: 3, preset: { designated_version: { version: 4 } } });
    expect(waits).toEqual([1, 2]);
  });

  it('gives up after VERSION_ATTEMPTS refused tries (the route answers 409), and rethrows any other failure', async () => {
    mock.on(GetCommand).resolves({ Item: stored(1) });
    mock.on(TransactWriteCommand).rejects(cancelled('TransactionConflict'));
    expect(await repo.addVersion(scope, 'p', next)).toEqual({ kind: 'contended', attempts: VERSION_ATTEMPTS });
    expect(mock.commandCalls(TransactWriteCommand)).toHaveLength(VERSION_ATTEMPTS);
    mock.on(TransactWriteCommand).rejects(new Error('network down'));
    await expect(repo.addVersion(scope, 'p', next)).rejects.toThrow('network down');
  });
});
