// The repository's DynamoDB requests, checked with aws-sdk-client-mock: conditions, index use, paging and error mapping.
import { beforeEach, describe, expect, it } from '@jest/globals';
import { mockClient } from 'aws-sdk-client-mock';
import { DeleteCommand, DynamoDBDocumentClient, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ApiKeyRepository } from '../../lambdas/keys/api-key-repository.js';
import { keyToItem } from '../../lambdas/keys/api-key-item.js';
import { newApiKey } from '../../lambdas/keys/new-key.js';

const db = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const mock = mockClient(db);
const repo = new ApiKeyRepository(db, 'table');
const { key, text } = newApiKey({ orgId: 'org1', orgKind: 'organization', workspaceId: 'ws1', kind: 'standard', name: 'k', limit: 1_500_000_000n, now: new Date('2026-01-02T03:04:05Z') });
const conditionFailed = () => new ConditionalCheckFailedException({ message: 'failed', $metadata: {} });

beforeEach(() => {
  mock.reset();
});

describe('ApiKeyRepository', () => {
  it('creates a key only if its hash is new, indexed for its organization by creation time', async () => {
    mock.on(PutCommand).resolves({});
    await repo.create(key);
    const input = mock.commandCalls(PutCommand)[0]!.args[0].input;
    expect(input.ConditionExpression).toBe('attribute_not_exists(pk)');
    expect(input.Item).toMatchObject({
      pk: `KEY#${key.hash}`, sk: 'KEY', gsi1pk: 'ORG#org1#KEYS', gsi1sk: `2026-01-02T03:04:05.000Z#${key.hash}`,
      type: 'api_key', limit: 1_500_000_000, settings_version: 0, usage_total: 0, usage_daily: 0, held: 0, exp_daily: 0, period_daily: '2026-01-02', period_weekly: '2025-12-29', period_monthly: '2026-01-01',
    });
    expect(JSON.stringify(input.Item, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))).not.toContain(text.slice(12, -3));
  });

  it('lists newest first through gsi1, skipping the offset across pages', async () => {
    const item = (name: string) => ({ ...key, name, limit: null, usage: {}, byok_usage: {} });
    mock.on(QueryCommand)
      .resolvesOnce({ Items: [item('a'), item('b')], LastEvaluatedKey: { pk: 'x' } })
      .resolvesOnce({ Items: [item('c'), item('d')] });
    const page = await repo.list('org1', { offset: 1, pageSize: 2, includeDisabled: false, workspaceId: 'ws1' });
    expect(page.map((k) => k.name)).toEqual(['b', 'c']);
    const [first, second] = mock.commandCalls(QueryCommand).map((call) => call.args[0].input);
    expect(first).toMatchObject({
      IndexName: 'gsi1', ScanIndexForward: false, KeyConditionExpression: 'gsi1pk = :pk',
      FilterExpression: 'disabled = :false AND workspace_id = :ws',
      ExpressionAttributeValues: { ':pk': 'ORG#org1#KEYS', ':false': false, ':ws': 'ws1' },
    });
    expect(second!.ExclusiveStartKey).toEqual({ pk: 'x' });
  });

  it('updates only within the organization and maps a failed condition to "not found"', async () => {
    mock.on(UpdateCommand).rejects(conditionFailed());
    expect(await repo.update(key.hash, 'other-org', { name: 'n' }, 'now')).toBeUndefined();
    const input = mock.commandCalls(UpdateCommand)[0]!.args[0].input;
    expect(input.ConditionExpression).toBe('attribute_exists(pk) AND #org_id = :org_id');
    expect(input.UpdateExpression).toBe('SET #updated_at = :updated_at, #sv = if_not_exists(#sv, :zero) + :one, #name = :name');
    expect(input.ExpressionAttributeValues).toMatchObject({ ':org_id': 'other-org', ':name': 'n' });
  });

  it('writes limits as integer nano-dollars and nulls as null', async () => {
    mock.on(UpdateCommand).resolves({ Attributes: { ...key, limit: 2_000_000_000, usage: {}, byok_usage: {} } });
    const updated = await repo.update(key.hash, 'org1', { limit: 2_000_000_000n, limit_reset: null }, 'now');
    expect(updated?.limit).toBe(2_000_000_000n);
    const values = mock.commandCalls(UpdateCommand)[0]!.args[0].input.ExpressionAttributeValues!;
    expect(values[':limit']).toBe(2_000_000_000);
    expect(values[':limit_reset']).toBeNull();
  });

  it('deletes only within the organization, answering the key as it was, and rethrows other failures', async () => {
    mock.on(DeleteCommand).rejectsOnce(conditionFailed()).rejectsOnce(new Error('throttled')).resolvesOnce({ Attributes: { ...keyToItem(key), leases: 2 } });
    expect(await repo.delete(key.hash, 'org1')).toBeUndefined();
    await expect(repo.delete(key.hash, 'org1')).rejects.toThrow('throttled');
    expect(mock.commandCalls(DeleteCommand)[0]!.args[0].input.ConditionExpression).toBe('attribute_exists(pk) AND org_id = :org_id');
    // Its outstanding leases, so that the deletion can wait until their holders see it.
    expect((await repo.delete(key.hash, 'org1'))?.meter.leases).toBe(2);
  });
});
