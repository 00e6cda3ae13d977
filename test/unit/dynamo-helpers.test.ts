// The shared DynamoDB helpers: the update/condition builder, the decoding of refused writes, the paging helper,
// and the SDK clients without their logger middleware.
import { itemSize, writeUnitsOf } from '../../lambdas/platform/dynamo/item-size.js';
import { beforeEach, describe, expect, it } from '@jest/globals';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { Readable } from 'node:stream';
import { KMSClient } from '@aws-sdk/client-kms';
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { withoutSdkLogging } from '../../lambdas/platform/aws/quiet-client.js';
import { retryTransactionConflicts, CONFLICT_ATTEMPTS, transactRetryingConflicts } from '../../lambdas/platform/dynamo/conflict-retry.js';
import { ConditionalCheckFailedException, DynamoDBClient, GetItemCommand, PutItemCommand, TransactWriteItemsCommand, TransactionCanceledException, TransactionConflictException } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { UpdateBuilder } from '../../lambdas/platform/dynamo/update-builder.js';
import { cancellationOf, isConditionFailed, unlessConditionFails, unlessConditionFailsOrConflicts } from '../../lambdas/platform/dynamo/write-failures.js';
import { partition, queryAll, queryItems, queryPage, queryUpTo } from '../../lambdas/platform/dynamo/query.js';

describe('UpdateBuilder', () => {
  it('writes SET clauses for the defined fields only, in order, with a placeholder per name and value', () => {
    const built = new UpdateBuilder().set('updated_at', 'now').setFields({ name: 'n', limit: undefined, disabled: false }).build();
    expect(built).toEqual({
      UpdateExpression: 'SET #updated_at = :updated_at, #name = :name, #disabled = :disabled',
      ExpressionAttributeNames: { '#updated_at': 'updated_at', '#name': 'name', '#disabled': 'disabled' },
      ExpressionAttributeValues: { ':updated_at': 'now', ':name': 'n', ':disabled': false },
    });
  });

  it('encodes field values and sets them under a path', () => {
    const update = new UpdateBuilder();
    update.name('settings');
    const built = update.setFields({ limit: 5n, flag: true }, '#settings.', (field, value) => (field === 'limit' ? Number(value) : value)).build();
    expect(built.UpdateExpression).toBe('SET #settings.#limit = :limit, #settings.#flag = :flag');
    expect(built.ExpressionAttributeNames).toEqual({ '#settings': 'settings', '#limit': 'limit', '#flag': 'flag' });
    expect(built.ExpressionAttributeValues).toEqual({ ':limit': 5, ':flag': true });
  });

  it('orders ADD, SET and REMOVE, ANDs the conditions and leaves out what is empty', () => {
    const update = new UpdateBuilder().add('held', 3).add('usage-total', 2, 'u');
    const path = `${update.name('budgets')}.${update.name('daily', 'i')}`;
    update.removeExpression(path).setExpression(`${update.name('budget_version', 'bv')} = if_not_exists(#bv, ${update.value('zero', 0)})`);
    update.condition('attribute_exists(pk)').condition(`#held <= ${update.value('ceiling', 10)}`);
    expect(update.build()).toEqual({
      UpdateExpression: 'ADD #held :held, #u :u SET #bv = if_not_exists(#bv, :zero) REMOVE #budgets.#i',
      ConditionExpression: 'attribute_exists(pk) AND #held <= :ceiling',
      ExpressionAttributeNames: { '#held': 'held', '#u': 'usage-total', '#budgets': 'budgets', '#i': 'daily', '#bv': 'budget_version' },
      ExpressionAttributeValues: { ':held': 3, ':u': 2, ':zero': 0, ':ceiling': 10 },
    });
    expect(new UpdateBuilder().addExpression('held :h').build()).toEqual({ UpdateExpression: 'ADD held :h' });
  });

  it('drops characters a placeholder may not hold', () => {
    expect(new UpdateBuilder().add('usage-total.x', 1).build().UpdateExpression).toBe('ADD #usagetotalx :usagetotalx');
    expect(new UpdateBuilder().hasUpdates).toBe(false);
  });
});

const conditionFailed = () => new ConditionalCheckFailedException({ message: 'failed', $metadata: {} });
const conflicted = () => new TransactionConflictException({ message: 'Transaction is ongoing for the item', $metadata: {} });
const cancelled = (codes: Array<string | { Code: string; Item: Record<string, unknown> }>) => new TransactionCanceledException({
  message: 'cancelled',
  $metadata: {},
  CancellationReasons: codes.map((code) => (typeof code === 'string' ? { Code: code } : { Code: code.Code, Item: marshall(code.Item) })),
});

describe('refused writes', () => {
  it('answers a failed condition with the fallback and rethrows anything else', async () => {
    expect(await unlessConditionFails(Promise.reject(conditionFailed()), 'gone')).toBe('gone');
    expect(await unlessConditionFails(Promise.resolve('written'), 'gone')).toBe('written');
    await expect(unlessConditionFails(Promise.reject(new Error('throttled')), 'gone')).rejects.toThrow('throttled');
    expect(isConditionFailed(conditionFailed())).toBe(true);
    expect(isConditionFailed(cancelled(['ConditionalCheckFailed']))).toBe(false);
  });

  it('reads a cancelled transaction item by item: which condition failed, the item as stored, a conflict', () => {
    const cancellation = cancellationOf(cancelled(['None', { Code: 'ConditionalCheckFailed', Item: { pk: 'KEY#a', held: 5 } }, 'ConditionalCheckFailed']))!;
    expect(cancellation.conflict).toBe(false);
    expect(cancellation.failedAt(0)).toBe(false);
    expect(cancellation.failedAt(1)).toBe(true);
    expect(cancellation.failedAt(-1)).toBe(false);
    expect(cancellation.stored(0)).toBeUndefined();
    expect(cancellation.stored(1)).toEqual({ item: { pk: 'KEY#a', held: 5 } });
    expect(cancellation.stored(2)).toEqual({ item: undefined });
    expect(cancellationOf(cancelled(['None', 'TransactionConflict']))!.conflict).toBe(true);
    // Throttled: DynamoDB cancels the whole transaction, no condition failed, and sending it again later may pass.
    expect(cancellationOf(cancelled(['None', 'ThrottlingError', 'None']))!.conflict).toBe(true);
    expect(cancellationOf(cancelled(['ProvisionedThroughputExceeded', 'None']))!.conflict).toBe(true);
    expect(cancellationOf(cancelled(['None', 'ValidationError']))!.conflict).toBe(false);
    expect(cancellationOf(conditionFailed())).toBeUndefined();
    expect(cancellationOf(new Error('other'))).toBeUndefined();
  });

  it('takes a TransactionConflictException for a conflict: a transaction tries again, a window roll leaves it to the next attempt', async () => {
    const cancellation = cancellationOf(conflicted())!;
    expect(cancellation.conflict).toBe(true);
    expect(cancellation.failedAt(0)).toBe(false);
    expect(cancellation.stored(0)).toBeUndefined();
    expect(await unlessConditionFailsOrConflicts(Promise.reject(conflicted()), 'later')).toBe('later');
    expect(await unlessConditionFailsOrConflicts(Promise.reject(conditionFailed()), 'later')).toBe('later');
    await expect(unlessConditionFailsOrConflicts(Promise.reject(new Error('throttled')), 'later')).rejects.toThrow('throttled');
    // Elsewhere a single write's conflict is not a failed condition: it is rethrown.
    await expect(unlessConditionFails(Promise.reject(conflicted()), 'gone')).rejects.toThrow('ongoing');
  });
});

const db = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const mock = mockClient(db);
const input = { TableName: 't', KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'P' } };
const items = (...names: string[]) => names.map((name) => ({ name }));

describe('paging', () => {
  beforeEach(() => { mock.reset(); });

  it('follows LastEvaluatedKey to the end', async () => {
    mock.on(QueryCommand)
      .resolvesOnce({ Items: items('a', 'b'), LastEvaluatedKey: { pk: 'x' } })
      .resolvesOnce({ Items: items('c') });
    expect((await queryAll(db, input)).map((item) => item.name)).toEqual(['a', 'b', 'c']);
    const calls = mock.commandCalls(QueryCommand).map((call) => call.args[0].input);
    expect(calls[0]).toEqual({ ...input, ExclusiveStartKey: undefined });
    expect(calls[1]!.ExclusiveStartKey).toEqual({ pk: 'x' });
  });

  it('reads no page a caller that stops early does not need', async () => {
    mock.on(QueryCommand)
      .resolvesOnce({ Items: items('a', 'b'), LastEvaluatedKey: { pk: 'x' } })
      .resolvesOnce({ Items: items('c') });
    for await (const item of queryItems(db, input)) {
      expect(item.name).toBe('a');
      break;
    }
    expect(mock.commandCalls(QueryCommand)).toHaveLength(1);
  });

  it('asks each page only for what is still wanted, and stops at atMost', async () => {
    mock.on(QueryCommand)
      .resolvesOnce({ Items: items('a', 'b'), LastEvaluatedKey: { pk: 'x' } })
      .resolvesOnce({ Items: items('c'), LastEvaluatedKey: { pk: 'y' } });
    const read: unknown[] = [];
    for await (const item of queryItems(db, input, { atMost: 3 })) read.push(item.name);
    expect(read).toEqual(['a', 'b', 'c']);
    expect(mock.commandCalls(QueryCommand).map((call) => call.args[0].input.Limit)).toEqual([3, 1]);
  });

  it('skips an offset across pages and stops at the page size', async () => {
    mock.on(QueryCommand)
      .resolvesOnce({ Items: items('a', 'b'), LastEvaluatedKey: { pk: 'x' } })
      .resolvesOnce({ Items: items('c', 'd'), LastEvaluatedKey: { pk: 'y' } })
      .resolvesOnce({ Items: items('e') });
    expect((await queryPage(db, input, { offset: 1, limit: 2 })).map((item) => item.name)).toEqual(['b', 'c']);
    expect(mock.commandCalls(QueryCommand)).toHaveLength(2);
    mock.reset();
    expect(await queryPage(db, input, { offset: 0, limit: 0 })).toEqual([]);
    expect(mock.commandCalls(QueryCommand)).toHaveLength(0);
  });

  it('tells a read cut at its limit from one that just fits', async () => {
    mock.on(QueryCommand).resolves({ Items: items('a', 'b') });
    expect(await queryUpTo(db, input, 2)).toEqual({ items: items('a', 'b'), truncated: false });
    expect(await queryUpTo(db, input, 1)).toEqual({ items: items('a'), truncated: true });
  });

  it('reads a partition, optionally under a sort-key prefix, consistently or projected', () => {
    expect(partition('t', 'ORG#o')).toEqual({ TableName: 't', KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'ORG#o' } });
    expect(partition('t', 'ORG#o', { skPrefix: 'WS#', consistent: true, projection: 'pk, sk' })).toEqual({
      TableName: 't',
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': 'ORG#o', ':prefix': 'WS#' },
      ConsistentRead: true,
      ProjectionExpression: 'pk, sk',
    });
  });
});

describe('itemSize', () => {
  it('counts names and values as DynamoDB bills them', () => {
    // 'name' (4) + 'abc' (3); 'n' (1) + 123 (2 digits pairs + 1 = 3); 'ok' (2) + true (1); 'z' (1) + null (1).
    expect(itemSize({ name: 'abc', n: 123, ok: true, z: null, gone: undefined })).toBe(7 + 4 + 3 + 2);
    // Leading and trailing zeros are not significant; a list is 3 + 1 per element + the elements.
    expect(itemSize({ a: 1000, b: 0.0015 })).toBe(1 + 2 + 1 + 2);
    expect(itemSize({ l: ['ab', 7] })).toBe(1 + 3 + (1 + 2) + (1 + 2));
    // A map: 3 + 1 per entry + its names and values; a multi-byte character counts its UTF-8 bytes.
    expect(itemSize({ m: { k: 'é' } })).toBe(1 + 3 + 1 + (1 + 2));
    expect(writeUnitsOf(0)).toBe(1);
    expect(writeUnitsOf(1024)).toBe(1);
    expect(writeUnitsOf(1025)).toBe(2);
  });
});

describe('withoutSdkLogging', () => {
  // A client whose logger records what reaches it, answering every command with an empty item from memory.
  const client = () => {
    const logged: unknown[] = [];
    const logger = { debug: () => undefined, info: (entry: unknown) => logged.push(entry), warn: () => undefined, error: () => undefined };
    const requestHandler = { handle: async () => ({ response: { statusCode: 200, headers: {}, body: Readable.from([Buffer.from('{}')]) } }) };
    const dynamo = new DynamoDBClient({ region: 'local', endpoint: 'http://127.0.0.1:9', credentials: { accessKeyId: 'a', secretAccessKey: 'b' }, logger, requestHandler });
    return { dynamo, logged };
  };

  it('takes the logger middleware out, so commands no longer walk their input and output for the logger', async () => {
    const plain = client();
    await plain.dynamo.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'x' } } }));
    expect(plain.logged).toHaveLength(1);
    const quiet = client();
    withoutSdkLogging(quiet.dynamo);
    await quiet.dynamo.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'x' } } }));
    expect(quiet.logged).toEqual([]);
  });

  it('finds the middleware by name in each client we build (a renamed one would be left in place silently)', () => {
    const config = { region: 'local', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } };
    for (const client of [new DynamoDBClient(config), new KMSClient(config), new BedrockRuntimeClient(config)]) {
      const named = () => client.middlewareStack.identify().filter((entry) => entry.startsWith('loggerMiddleware'));
      expect(named()).toHaveLength(1);
      withoutSdkLogging(client);
      expect(named()).toEqual([]);
    }
  });
});

describe('retryTransactionConflicts', () => {
  // A DynamoDB endpoint in memory: answers TransactionConflictException `conflicts` times, then success.
  const endpoint = (conflicts: number) => {
    const seen: string[] = [];
    const requestHandler = {
      handle: async (request: { headers: Record<string, string> }) => {
        seen.push(request.headers['x-amz-target']!.split('.')[1]!);
        const conflict = seen.length <= conflicts;
        const body = conflict ? '{"__type":"com.amazonaws.dynamodb.v20120810#TransactionConflictException","message":"Transaction is ongoing for the item"}' : '{}';
        return { response: { statusCode: conflict ? 400 : 200, headers: { 'content-type': 'application/x-amz-json-1.0' }, body: Readable.from([Buffer.from(body)]) } };
      },
    };
    const client = new DynamoDBClient({ region: 'local', endpoint: 'http://127.0.0.1:9', credentials: { accessKeyId: 'a', secretAccessKey: 'b' }, requestHandler });
    retryTransactionConflicts(client, async () => undefined);
    return { client, seen };
  };

  it('tries a single write again while a transaction holds its item', async () => {
    const { client, seen } = endpoint(2);
    await DynamoDBDocumentClient.from(client).send(new UpdateCommand({ TableName: 't', Key: { pk: 'k', sk: 'k' }, UpdateExpression: 'SET a = :a', ExpressionAttributeValues: { ':a': 1 } }));
    expect(seen).toEqual(['UpdateItem', 'UpdateItem', 'UpdateItem']);
  });

  it('gives up after CONFLICT_ATTEMPTS tries, and leaves transactions and reads to their callers', async () => {
    const busy = endpoint(100);
    await expect(busy.client.send(new PutItemCommand({ TableName: 't', Item: { pk: { S: 'k' } } }))).rejects.toBeInstanceOf(TransactionConflictException);
    expect(busy.seen).toHaveLength(CONFLICT_ATTEMPTS);
    const transaction = endpoint(1);
    await expect(transaction.client.send(new TransactWriteItemsCommand({ TransactItems: [{ Put: { TableName: 't', Item: { pk: { S: 'k' } } } }] }))).rejects.toBeInstanceOf(TransactionConflictException);
    expect(transaction.seen).toEqual(['TransactWriteItems']);
  });
});

describe('transactRetryingConflicts', () => {
  const conflict = () => new TransactionCanceledException({ message: 'cancelled', $metadata: {}, CancellationReasons: [{ Code: 'None' }, { Code: 'TransactionConflict' }] });
  const refused = () => new TransactionCanceledException({ message: 'cancelled', $metadata: {}, CancellationReasons: [{ Code: 'ConditionalCheckFailed' }, { Code: 'None' }] });
  // A transaction that fails with each of `failures` in turn, then succeeds; the waits it was made to take.
  const sequence = (...failures: Error[]) => {
    let sent = 0;
    const waits: number[] = [];
    return { send: async () => { sent += 1; if (failures.length) throw failures.shift(); }, sleep: async (ms: number) => { waits.push(ms); }, sent: () => sent, waits };
  };

  it('sends again while a concurrent transaction is in the way, waiting longer each time', async () => {
    const tx = sequence(conflict(), new TransactionConflictException({ message: 'busy', $metadata: {} }), conflict());
    await expect(transactRetryingConflicts(tx.send, { attempts: 5, sleep: tx.sleep })).resolves.toBeUndefined();
    expect(tx.sent()).toBe(4);
    expect(tx.waits).toHaveLength(3);
    tx.waits.forEach((ms, i) => {
      const cap = Math.min(200, 5 * 2 ** (i + 1));
      expect(ms).toBeGreaterThanOrEqual(cap / 2);
      expect(ms).toBeLessThanOrEqual(cap);
    });
  });

  it('answers a refusal with its reasons, at once', async () => {
    const tx = sequence(refused());
    const refusal = await transactRetryingConflicts(tx.send, { attempts: 5, sleep: tx.sleep });
    expect(refusal?.failedAt(0)).toBe(true);
    expect(tx.sent()).toBe(1);
  });

  it('rethrows a refusal the caller does not take as an answer, and any other failure', async () => {
    const error = refused();
    await expect(transactRetryingConflicts(sequence(error).send, { attempts: 5, outcome: (c) => c.failedAt(1) })).rejects.toBe(error);
    const other = new Error('network');
    await expect(transactRetryingConflicts(sequence(other).send, { attempts: 5 })).rejects.toBe(other);
  });

  it('gives up after the attempts: the conflict rethrown, or the error `busy` makes', async () => {
    const last = conflict();
    const tx = sequence(conflict(), conflict(), last);
    await expect(transactRetryingConflicts(tx.send, { attempts: 3, sleep: tx.sleep })).rejects.toBe(last);
    expect(tx.sent()).toBe(3);
    const busy = sequence(conflict(), conflict());
    await expect(transactRetryingConflicts(busy.send, { attempts: 2, sleep: busy.sleep, busy: () => new Error('retry shortly') })).rejects.toThrow('retry shortly');
  });
});
