// The meter aggregator's rules (what pages do to each item, summed), how its repository decodes a refused
// transaction (aws-sdk-client-mock), and what the aggregator does about each refusal (a scripted repository).
import { beforeEach, describe, expect, it } from '@jest/globals';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { effectsOf, groupPages, itemCount } from '../../lambdas/billing/aggregation.js';
import { AggregatorRepository, type ApplyOutcome, type ApplyRequest } from '../../lambdas/billing/aggregator-repository.js';
import { MeterAggregator } from '../../lambdas/billing/aggregator.js';
import { currentPeriods } from '../../lambdas/billing/periods.js';
import type { GenerationRecord } from '../../lambdas/billing/generation-record.js';
import { generationRecord } from '../support/records.js';
import type { Page } from '../../lambdas/billing/pages.js';
import { Logger } from '../../lambdas/platform/logger.js';

const now = new Date('2026-11-24T10:00:00Z');
const periods = currentPeriods(now);
const none = { late: new Set<string>(), sweptLeases: new Set<string>(), goneKeys: new Set<string>(), goneWorkspaces: new Set<string>() };

const record = generationRecord;

const page = (block: string, seq: number, ...records: GenerationRecord[]): Page => ({
  block, seq, entries: records.map((r) => ({ record: r, claim: { kind: 'hold' as const, amount: r.reserved } })),
});

describe('aggregation rules', () => {
  it('moves each item once per group: held out, cost in, BYOK apart, rollups summed, holds ended', () => {
    const effects = effectsOf([
      page('B1', 1, record('g1'), record('g2', { key_hash: 'k2', is_byok: true, cost: { ...record('x').cost, total: 7n } })),
      page('B2', 4, record('g3', { workspace_id: 'ws2', created_at: '2026-11-24T08:00:00.000Z' })),
    ], none);
    expect(effects.pages).toEqual([{ block: 'B1', seq: 1 }, { block: 'B2', seq: 4 }]);
    expect(effects.organizations.get('org1')).toEqual({ release: 300n, credits: 60n, byok: 7n });
    expect(effects.keys.get('k1')).toEqual({ release: 200n, credits: 60n, byok: 0n });
    expect(effects.keys.get('k2')).toEqual({ release: 100n, credits: 0n, byok: 7n });
    expect(effects.workspaces.get('org1/ws1')).toMatchObject({ release: 200n, credits: 30n, byok: 7n, orgId: 'org1', workspaceId: 'ws1' });
    expect(effects.holds).toEqual(['g1', 'g2', 'g3']);
    // g1 and g2 share an hour but not a key; g3 is another hour and workspace.
    expect(effects.rollups.size).toBe(3);
    const [first] = effects.rollups.values();
    expect(first!.counters).toMatchObject({ requests: 1, cost: 30, prompt_tokens: 10 });
    expect(itemCount(effects)).toBe(2 + 1 + 2 + 2 + 3 + 3);

    const summed = effectsOf([page('B1', 1, record('g1'), record('g4'))], none);
    expect([...summed.rollups.values()][0]!.counters).toMatchObject({ requests: 2, cost: 60, completion_tokens: 10 });
  });

  it('charges a record that held nothing (BYOK only) and releases nothing, with no hold or lease to touch', () => {
    const unheld: Page = { block: 'B1', seq: 1, entries: [{ record: record('g1', { is_byok: true, cost: { ...record('x').cost, total: 7n } }), claim: { kind: 'none', amount: 0n } }] };
    const effects = effectsOf([unheld], none);
    expect(effects.organizations.get('org1')).toEqual({ release: 0n, credits: 0n, byok: 7n });
    expect(effects.keys.get('k1')).toEqual({ release: 0n, credits: 0n, byok: 7n });
    expect(effects.holds).toEqual([]);
    expect(effects.leases.size).toBe(0);
    // Its marker, organization, key, workspace and rollup row: no hold item.
    expect(itemCount(effects)).toBe(5);
    expect(groupPages([unheld], 5)).toEqual([[unheld]]);
  });

  it('applies a record whose hold is gone late (nothing released), and skips deleted meters', () => {
    const effects = effectsOf([page('B1', 1, record('g1'), record('g2'))], { late: new Set(['g2']), sweptLeases: new Set<string>(), goneKeys: new Set(['k1']), goneWorkspaces: new Set<string>() });
    expect(effects.organizations.get('org1')).toEqual({ release: 100n, credits: 60n, byok: 0n });
    expect(effects.holds).toEqual(['g1']);
    expect(effects.keys.size).toBe(0);
    expect(effects.workspaces.get('org1/ws1')).toMatchObject({ release: 100n, credits: 60n });
  });

  it('moves the extra meters a record names: released where its exact hold held on them, charged either way, skipped once gone', () => {
    const alice = { of: 'end-user' as const, orgId: 'org1', userHash: 'h1', epoch: 'e1' };
    const member = { of: 'member' as const, orgId: 'org1', userId: 'u1' };
    const held = record('g1', { spend_meters: [{ meter: alice, held: true }, { meter: member, held: true }] });
    const late = record('g2', { spend_meters: [{ meter: alice, held: true }] });
    const leased: Page = { block: 'B2', seq: 1, entries: [{ record: record('g3', { spend_meters: [{ meter: alice, held: false }] }), claim: { kind: 'lease', leaseId: 'L1', amount: 30n } }] };
    const effects = effectsOf([page('B1', 1, held, late), leased], { ...none, late: new Set(['g2']) });
    // g1 releases its hold (100) on both; g2's hold is gone (nothing released); g3 drew from a lease, which never holds on them.
    expect(effects.extras.get('end-user org1/h1#e1')).toEqual({ ref: alice, release: 100n, credits: 90n, byok: 0n });
    expect(effects.extras.get('member org1/u1')).toEqual({ ref: member, release: 100n, credits: 30n, byok: 0n });
    // Two markers, the organization, key and workspace, the two extra meters, one rollup row, g1's hold and the lease.
    expect(itemCount(effects)).toBe(2 + 3 + 2 + 1 + 1 + 1);
    const gone = effectsOf([page('B1', 1, held)], { ...none, goneExtras: new Set(['end-user org1/h1#e1']) });
    expect([...gone.extras.keys()]).toEqual(['member org1/u1']);
  });

  it('groups pages in order within the transaction limit, never splitting a page', () => {
    // Each page brings 13 items (its block's marker, 10 holds, its key and its rollup row); the organization
    // and the workspace are shared: 7 pages are 93 items, an 8th would make 106.
    const pages = Array.from({ length: 12 }, (_, i) => page(`B${i}`, 1, ...Array.from({ length: 10 }, (_, j) => record(`g${i}-${j}`, { key_hash: `k${i}` }))));
    const groups = groupPages(pages, 100);
    expect(groups.flat()).toEqual(pages);
    for (const group of groups) expect(itemCount(effectsOf(group, none))).toBeLessThanOrEqual(100);
    expect(groups.map((group) => group.length)).toEqual([7, 5]);
  });
});

type Reason = string | { Code: string; Item?: Record<string, unknown> };
const cancel = (...reasons: Reason[]) => new TransactionCanceledException({
  message: 'cancelled',
  $metadata: {},
  CancellationReasons: reasons.map((reason) => (typeof reason === 'string' ? { Code: reason } : { Code: reason.Code, ...(reason.Item ? { Item: marshall(reason.Item) } : {}) })),
});
const failed = (item?: Record<string, unknown>) => ({ Code: 'ConditionalCheckFailed', ...(item ? { Item: item } : {}) });

describe('AggregatorRepository: a refused application, decoded', () => {
  const db = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
  const mock = mockClient(db);
  const repository = new AggregatorRepository(db, 'table');
  beforeEach(() => { mock.reset(); });
  const effects = effectsOf([page('B1', 1, record('g1')), page('B1', 2, record('g2'))], none);
  const request: ApplyRequest = { effects, keyPeriods: new Map([['k1', periods]]), workspacePeriods: new Map([['org1/ws1', periods]]), nowS: 1000 };

  it('writes the marker first, then organization, key, workspace, rollup and holds', async () => {
    mock.on(TransactWriteCommand).resolves({ ConsumedCapacity: [{ TableName: 'table', CapacityUnits: 14 }] });
    expect(await repository.apply(request, 1)).toEqual({ kind: 'applied', writeUnits: 14 });
    const items = mock.commandCalls(TransactWriteCommand)[0]!.args[0].input.TransactItems!;
    expect(items.map((item) => `${(item.Update ?? item.Delete)!.Key!.pk} ${(item.Update ?? item.Delete)!.Key!.sk}`)).toEqual([
      'GENS#B1 APPLIED', 'ORG#org1 ORG', 'KEY#k1 KEY', 'ORG#org1 WS#ws1', 'ORG#org1#RU 2026-11-24T09#ws1#k1#m/a#a', 'HOLD#g1 HOLD', 'HOLD#g2 HOLD',
    ]);
    expect(items[0]!.Update!.ConditionExpression).toBe('attribute_not_exists(seqs) OR (NOT contains(seqs, :s0) AND NOT contains(seqs, :s1))');
    expect(items[0]!.Update!.ExpressionAttributeValues![':seqs']).toEqual(new Set([1, 2]));
  });

  it('tells pages applied before, holds gone, meters deleted or counting other windows, and conflicts apart', async () => {
    mock.on(TransactWriteCommand)
      .rejectsOnce(cancel(failed({ pk: 'GENS#B1', sk: 'APPLIED', seqs: new Set([2, 7]) })))
      .rejectsOnce(cancel('None', 'None', failed(), failed({ pk: 'x', period_daily: '2026-11-23' }), 'None', 'None', failed()))
      .rejectsOnce(cancel('None', 'TransactionConflict'));
    expect(await repository.apply(request, 1)).toEqual({ kind: 'already', applied: new Map([['B1', new Set([2, 7])]]) });
    expect(await repository.apply(request, 2)).toEqual({
      kind: 'refused', holdsGone: ['g2'], leasesSwept: [], keys: new Map([['k1', 'gone']]), workspaces: new Map([['org1/ws1', { daily: '2026-11-23' }]]),
    });
    expect(await repository.apply(request, 3)).toEqual({ kind: 'conflict' });
  });
});

describe('MeterAggregator: what a refusal means', () => {
  function aggregatorWith(outcomes: ApplyOutcome[]) {
    const requests: ApplyRequest[] = [];
    const rolls: string[] = [];
    const logs: string[] = [];
    const aggregator = new MeterAggregator({
      repository: { apply: async (request) => { requests.push(request); return outcomes.shift() ?? { kind: 'applied', writeUnits: 1 }; } },
      roll: async (meter) => { rolls.push(meter.of); },
      clock: () => now, random: () => 0, sleep: async () => {}, log: new Logger((line) => { logs.push(line); }),
    });
    return { aggregator, requests, rolls, logs };
  }
  const pages = [page('B1', 1, record('g1')), page('B1', 2, record('g2'))];

  it('drops pages applied before and applies the rest; nothing left is done', async () => {
    const a = aggregatorWith([{ kind: 'already', applied: new Map([['B1', new Set([1])]]) }]);
    expect(await a.aggregator.apply(pages)).toMatchObject({ applied: 1, transactions: 1 });
    expect(a.requests[1]!.effects.pages).toEqual([{ block: 'B1', seq: 2 }]);

    const b = aggregatorWith([{ kind: 'already', applied: new Map([['B1', new Set([1, 2])]]) }]);
    expect(await b.aggregator.apply(pages)).toMatchObject({ applied: 0, transactions: 0 });
    expect(b.requests).toHaveLength(1);
  });

  it('applies late after a swept hold, skips a deleted key, rolls a behind meter, follows one ahead, backs off a conflict', async () => {
    const a = aggregatorWith([
      { kind: 'refused', holdsGone: ['g2'], leasesSwept: [], keys: new Map([['k1', 'gone']]), workspaces: new Map([['org1/ws1', { daily: '2026-11-23', weekly: periods.weekly, monthly: periods.monthly }]]) },
      { kind: 'conflict' },
      { kind: 'refused', holdsGone: [], leasesSwept: [], keys: new Map(), workspaces: new Map([['org1/ws1', { daily: '2026-11-25', weekly: periods.weekly, monthly: periods.monthly }]]) },
    ]);
    expect(await a.aggregator.apply(pages)).toMatchObject({ applied: 2, late: 1, transactions: 1 });
    expect(a.rolls).toEqual(['workspace']);
    const last = a.requests.at(-1)!;
    expect(last.effects.holds).toEqual(['g1']);
    expect(last.effects.keys.size).toBe(0);
    expect(last.workspacePeriods.get('org1/ws1')).toEqual({ ...periods, daily: '2026-11-25' });
    expect(a.logs.some((line) => line.includes('hold expired before its record was applied'))).toBe(true);
  });

  it('gives up on a group after its attempts, telling the caller which groups were applied', async () => {
    const a = aggregatorWith(Array.from({ length: 100 }, () => ({ kind: 'conflict' as const })));
    const applied: number[] = [];
    await expect(a.aggregator.apply(pages, (group) => applied.push(group.length))).rejects.toThrow('pages not applied after 24 attempts: B1/1, B1/2');
    expect(applied).toEqual([]);
  });
});
