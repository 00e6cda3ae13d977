// The batch worker over its real stand-ins (DynamoDB Local, the local S3, fauxqs, the upstream simulator):
// every step message taken from the queue is delivered twice at once, as SQS may, and each item still has one
// result, one generation record and one charge. A page of an item found already written by another run is a
// duplicate: not charged again, and its lease draw is given back.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startFauxqs } from 'fauxqs';
import { DeleteMessageCommand, ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { createTestStore, type TestStore } from '../support/store.js';
import { createTenant } from '../support/tenants.js';
import { manage } from '../support/handler-calls.js';
import { startLocalS3, type LocalS3 } from '../../bin/local/s3.js';
import { startSimulator, type Simulator } from '../../bin/simulator/server.js';
import { createSqsClient } from '../../lambdas/platform/aws/sqs.js';
import { handleBatchMessages } from '../../lambdas/handlers/batch-worker.js';
import { batchDepsOf } from '../../lambdas/app/batch-deps.js';
import { createBatchOperations } from '../../lambdas/batches/operations.js';
import { createBatchBody, getBatchQuery } from '../../lambdas/batches/schemas.js';
import { batchGenerationId } from '../../lambdas/app/batch-items.js';
import { ItemCommitter } from '../../lambdas/batches/item-commits.js';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { itemKeys } from '../../lambdas/platform/dynamo/item-keys.js';
import { pageFromItem } from '../../lambdas/billing/page-repository.js';
import type { Page } from '../../lambdas/billing/pages.js';
import { createDocumentClient } from '../../lambdas/platform/dynamo/client.js';

let simulator: Simulator;
let s3: LocalS3;
let sqsServer: Awaited<ReturnType<typeof startFauxqs>>;
let queueUrl: string;
let store: TestStore;

beforeAll(async () => {
  [simulator, s3, sqsServer] = await Promise.all([
    startSimulator({ port: 0 }),
    startLocalS3({ directory: mkdtempSync(join(tmpdir(), 'batch-worker-s3-')), buckets: ['batches'] }),
    startFauxqs({ port: 0, logger: false }),
  ]);
  queueUrl = sqsServer.createQueue('batch-work', { attributes: { VisibilityTimeout: '60' } }).queueUrl;
  store = await createTestStore({
    SIMULATOR_URL: simulator.url, GATEWAY_BATCH_BUCKET: 'batches', GATEWAY_BATCH_QUEUE_URL: queueUrl, S3_ENDPOINT: s3.endpoint, SQS_ENDPOINT: sqsServer.address,
    GATEWAY_BATCH_CHECK_SECONDS: '1', GATEWAY_BATCH_ITEM_CONCURRENCY: '4',
  });
}, 60_000);

afterAll(async () => {
  await store?.drop();
  await Promise.all([simulator?.close(), s3?.close(), sqsServer?.stop()]);
});

/** Takes every message the queue has now (delayed ones when they are due), deleting them. */
async function take(): Promise<Message[]> {
  const sqs = createSqsClient({ endpoint: sqsServer.address });
  const taken: Message[] = [];
  for (;;) {
    const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: taken.length === 0 ? 2 : 0 }));
    if (Messages.length === 0) break;
    for (const message of Messages) await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle! }));
    taken.push(...Messages);
  }
  sqs.destroy();
  return taken;
}

const eventOf = (messages: Message[]): SQSEvent => ({
  Records: messages.map((message) => ({
    messageId: message.MessageId!, receiptHandle: message.ReceiptHandle!, body: message.Body!, attributes: {} as SQSEvent['Records'][number]['attributes'],
    messageAttributes: {}, md5OfBody: '', eventSource: 'aws:sqs', eventSourceARN: 'arn:aws:sqs:local:000000000000:batch-work', awsRegion: 'local',
  })),
});

describe('the batch worker', () => {
  it('runs a batch whose every step is delivered twice at once: one result, one record and one charge per item', async () => {
    const tenant = await createTenant(store.deps, 'organization', 'Twice Co');
    const { key, text } = await tenant.addKey('standard');
    // The state machine's executions: recorded here, and their steps run by the test, twice each.
    const started: string[] = [];
    batchDepsOf(store.deps).executions = { start: async (batchId) => { started.push(batchId); } };
    const worker = batchDepsOf(store.deps).worker!;
    const requests = Array.from({ length: 30 }, (_, i) => ({ custom_id: `c${i}`, body: { messages: [{ role: 'user', content: `twice ${i}` }] } }));
    const submitted = await manage(store.deps, text, 'POST', '/batches', { endpoint: '/v1/chat/completions', model: 'simulator/echo', requests });
    expect(submitted.status).toBe(202);
    const id = submitted.json.id as string;
    expect(started).toEqual([id]);

    // Validate, twice at once (a Task Step Functions retried while the first try still ran).
    const validated = await Promise.all([worker.step({ step: 'validate', batch_id: id }), worker.step({ step: 'validate', batch_id: id })]);
    expect(validated.map((output) => output.status)).toEqual(['in_progress', 'in_progress']);
    let status = 'in_progress';
    let deliveries = 0;
    let retried = 0;
    let pending: Message[] = [];
    for (let round = 0; round < 40 && status !== 'completed'; round += 1) {
      // What the queue has, and what failed last round (SQS would deliver it again after its visibility timeout).
      const messages = [...pending, ...(await take())];
      // Each message to two invocations at once. A step that cannot go on while its twin holds an item (an
      // exact hold of the same generation) fails and is delivered again, as SQS would.
      const replies = await Promise.all([handleBatchMessages(eventOf(messages), store.deps), handleBatchMessages(eventOf(messages), store.deps)]);
      deliveries += messages.length * 2;
      const failed = new Set(replies.flatMap((reply) => reply.batchItemFailures.map((failure) => failure.itemIdentifier)));
      retried += failed.size;
      pending = messages.filter((message) => failed.has(message.MessageId!));
      // The state machine's check, twice at once.
      const checked = await Promise.all([worker.step({ step: 'check', batch_id: id, wait_seconds: 1 }), worker.step({ step: 'check', batch_id: id, wait_seconds: 1 })]);
      status = checked[0]!.status === 'completed' || checked[1]!.status === 'completed' ? 'completed' : checked[0]!.status;
    }
    console.log(`${deliveries} deliveries, ${retried} delivered again after a failure`);
    expect((await manage(store.deps, text, 'GET', `/batches/${id}`)).json.status).toBe('completed');
    expect(status).toBe('completed');
    expect(deliveries).toBeGreaterThanOrEqual(2);

    const batch = (await manage(store.deps, text, 'GET', `/batches/${id}`, undefined, { results_limit: '100' })).json;
    expect(batch.request_counts).toEqual({ total: 30, completed: 30, failed: 0 });
    expect(batch.results.map((result: { custom_id: string }) => result.custom_id)).toEqual(requests.map((request) => request.custom_id));
    const results = await store.scan('pk = :pk AND begins_with(sk, :r)', { ':pk': itemKeys.batch(id).pk, ':r': 'R#' });
    expect(results).toHaveLength(30);

    await store.quiesce();
    const records = await store.records(tenant.orgId);
    const expected = Array.from({ length: 30 }, (_, i) => batchGenerationId({ id, created_at: batch.created_at as number }, i + 1));
    expect(records.map((record) => record.id).sort()).toEqual([...expected].sort());
    const charged = records.reduce((total, record) => total + record.cost.total, 0n);
    const org = await store.item(itemKeys.organization(tenant.orgId));
    expect(BigInt(org!.total_usage as number)).toBe(charged);
    expect(BigInt(org!.held as number)).toBe(0n);
    const keyItem = await store.item(itemKeys.apiKey(key.hash));
    expect(keyItem).toBeDefined();
    expect(BigInt(Math.round(batch.usage.cost * 1e9))).toBe(charged);
  }, 120_000);

  it('commits an item once: a second run of it is told so, and its page and counts are not written', async () => {
    const db = createDocumentClient({ endpoint: store.endpoint });
    const committer = new ItemCommitter(db, store.tableName, store.deps.log);
    const [sample] = await store.records();
    expect(sample).toBeDefined();
    const batch = { id: 'batch_committest', created_at: 1_795_000_000 };
    await db.send(new PutCommand({ TableName: store.tableName, Item: { ...itemKeys.batch(batch.id), type: 'batch', id: batch.id, request_counts: { total: 3, completed: 0, failed: 0 }, usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost_nanos: 0 } } }));
    const id = batchGenerationId(batch, 1);
    const page = (createdAt: string): Page => ({ block: id.slice(-14, -2), seq: 1, entries: [{ record: { ...sample!, id, created_at: createdAt }, claim: { kind: 'none', amount: 0n } }] });
    const result = (text: string) => ({ custom_id: 'one', id, error: null, response: { body: { text }, request_id: id, status_code: 200 } });
    const usage = { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7, cost_nanos: 1000 };
    const first = committer.commit({ batchId: batch.id, line: 1, result: result('first'), usage, page: page('2026-11-24T10:00:00.000Z') });
    // The same item again, at once and later: never recorded twice (and never in one transaction with itself).
    const twin = committer.commit({ batchId: batch.id, line: 1, result: result('twin'), usage, page: page('2026-11-24T10:00:01.000Z') });
    const other = committer.commit({ batchId: batch.id, line: 2, result: { ...result('two'), custom_id: 'two' }, usage });
    // The two copies of line 1 go in two transactions, written at once: either may win, exactly one does.
    const outcomes = await Promise.all([first, twin, other]);
    expect(outcomes[2]).toBe('committed');
    expect([...outcomes.slice(0, 2)].sort()).toEqual(['already', 'committed']);
    const [text, createdAt] = outcomes[0] === 'committed' ? ['first', '2026-11-24T10:00:00.000Z'] : ['twin', '2026-11-24T10:00:01.000Z'];
    expect(await committer.commit({ batchId: batch.id, line: 1, result: result('later'), usage, page: page('2026-11-24T10:00:02.000Z') })).toBe('already');
    // The winner's result and the winner's record, never a mix.
    const stored = await store.item(itemKeys.batchResult(batch.id, 1));
    expect((stored!.response as { body: { text: string } }).body.text).toBe(text);
    const pageItem = await store.item(itemKeys.page(id.slice(-14, -2), 1));
    expect(pageFromItem(pageItem!).entries[0]!.record.created_at).toBe(createdAt);
    const counted = await store.item(itemKeys.batch(batch.id));
    expect(counted).toMatchObject({ request_counts: { completed: 2, failed: 0 }, usage: { prompt_tokens: 6, cost_nanos: 2000 } });
    db.destroy();
  });

  it('submits a provider batch once, even when the step dies between submitting it and storing its id', async () => {
    const tenant = await createTenant(store.deps, 'organization', 'Provider Retry Co');
    const { text } = await tenant.addKey('standard');
    const deps = batchDepsOf(store.deps);
    deps.executions = { start: async () => undefined };
    const requests = Array.from({ length: 3 }, (_, i) => ({ custom_id: `p${i}`, body: { messages: [{ role: 'user', content: `retry ${i}` }] } }));
    const submitted = await manage(store.deps, text, 'POST', '/batches', { endpoint: '/v1/chat/completions', model: 'simulator/echo-batch', requests });
    const id = submitted.json.id as string;
    // The write that would store the provider's batch id fails once, as a step that dies right after submitting.
    const worker = deps.worker as unknown as { deps: { batches: { plan: (batchId: string, set: { provider_batch?: { id: string | null } }) => Promise<void> } } };
    const plan = worker.deps.batches.plan.bind(worker.deps.batches);
    let failed = false;
    worker.deps.batches = Object.create(worker.deps.batches, {
      plan: { value: async (batchId: string, set: { provider_batch?: { id: string | null } }) => {
        if (!failed && set.provider_batch?.id) {
          failed = true;
          throw new Error('the step died here');
        }
        return plan(batchId, set);
      } },
    });
    try {
      await expect(deps.worker!.step({ step: 'validate', batch_id: id })).rejects.toThrow('the step died here');
      expect((await deps.worker!.step({ step: 'validate', batch_id: id })).status).toBe('in_progress');
    } finally {
      worker.deps.batches = Object.getPrototypeOf(worker.deps.batches) as typeof worker.deps.batches;
    }
    // One batch at the provider for it, and that is the one the gateway's batch follows.
    const listed = await (await fetch(`${simulator.url}/v1/batches`)).json() as { data: Array<{ id: string; metadata: Record<string, string> | null }> };
    const mine = listed.data.filter((batch) => batch.metadata?.gateway_batch_id === id);
    expect(mine).toHaveLength(1);
    expect((await deps.repository.get(id))!.provider_batch).toMatchObject({ id: mine[0]!.id, submitting: false });
  });

  it('expires on read a batch that nothing runs any more, long past its deadline, so that it can be deleted', async () => {
    const tenant = await createTenant(store.deps, 'organization', 'Stuck Co');
    const { key } = await tenant.addKey('standard');
    const batches = batchDepsOf(store.deps);
    let now = Date.now();
    // An execution that never runs: the state machine is gone.
    const operations = createBatchOperations({
      batches: batches.repository, results: batches.results, uploads: batches.uploads, objects: batches.objects,
      executions: () => ({ start: async () => undefined }), clock: () => new Date(now), log: store.deps.log, windowSeconds: 60, stuckAfterSeconds: 3600,
    });
    const principal = { key } as never;
    const created = await operations.createBatch({ principal, body: createBatchBody.parse({ endpoint: '/v1/chat/completions', model: 'simulator/echo', requests: [{ custom_id: 'a', body: { messages: [{ role: 'user', content: 'x' }] } }] }) } as never);
    const id = (created.body as { id: string }).id;
    const read = async () => (await operations.getBatch({ principal, params: { id }, query: getBatchQuery.parse({}) } as never)).body as { status: string; error: { message: string } | null };
    // Past its deadline, but not by the margin the state machine has: left to it.
    now += 61_000;
    expect((await read()).status).toBe('validating');
    await expect(operations.deleteBatch({ principal, params: { id } } as never)).rejects.toThrow(/only an ended batch/);
    now += 3600_000;
    expect(await read()).toMatchObject({ status: 'expired', error: { message: expect.stringMatching(/completion window/) } });
    expect(((await operations.deleteBatch({ principal, params: { id } } as never)).body as { deleted: boolean }).deleted).toBe(true);
  });
});
