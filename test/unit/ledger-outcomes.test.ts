// The money path's typed outcomes: what LedgerRepository makes of a refused transaction (aws-sdk-client-mock),
// and the domain errors the Ledger refuses with (a fake repository), with the statuses the error map gives them.
import { beforeEach, describe, expect, it } from '@jest/globals';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { LedgerRepository, type HoldRequest, type ReserveOutcome } from '../../lambdas/billing/ledger-repository.js';
import { Ledger } from '../../lambdas/billing/ledger.js';
import { CreditsExhausted, KeyDisabled, KeyLimitExceeded, KeyDeleted, ReservationContended, ReservationRefused, TenantGone, WorkspaceBudgetExceeded } from '../../lambdas/billing/errors.js';
import { keyToItem } from '../../lambdas/keys/api-key-item.js';
import { workspaceToItem } from '../../lambdas/organizations/organization-item.js';
import { newApiKey } from '../../lambdas/keys/new-key.js';
import { newWorkspace } from '../../lambdas/organizations/new-workspace.js';
import { currentPeriods } from '../../lambdas/billing/periods.js';
import { RecordCache } from '../../lambdas/platform/record-cache.js';
import { httpErrorOf, toErrorReply } from '../../lambdas/platform/http/errors.js';
import type { WorkspaceRepository } from '../../lambdas/organizations/workspace-repository.js';
import type { ApiKey } from '../../lambdas/keys/types.js';
import type { Workspace } from '../../lambdas/organizations/types.js';
import { meteredItemCodecs } from '../../lambdas/app/aggregator-deps.js';
import { Logger } from '../../lambdas/platform/logger.js';

const now = new Date('2026-11-24T10:00:00Z');
const periods = currentPeriods(now);
const key: ApiKey = { ...newApiKey({ orgId: 'org1', orgKind: 'organization', workspaceId: 'ws1', kind: 'standard', name: 'k', limit: 1000n, now }).key, settings_version: 2 };
const workspace: Workspace = { ...newWorkspace('org1', { name: 'W', slug: 'w' }, null, now), id: 'ws1', budget_version: 1 };

const db = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const mock = mockClient(db);
const repository = new LedgerRepository(db, 'table', meteredItemCodecs);

const request: HoldRequest = {
  generationId: 'gen-1', orgId: 'org1', workspaceId: 'ws1', keyHash: key.hash, amount: 100n,
  key: { hash: key.hash, settingsVersion: 2, limit: { amount: 1000n, window: 'total', withByok: false } },
  workspace: { id: 'ws1', budgetVersion: 1, budgets: [], withByok: false },
  keyPeriods: periods, workspacePeriods: periods, createdAt: now.toISOString(), expiresAt: now.toISOString(),
};

type Reason = string | { Code: string; Item?: Record<string, unknown> };
const cancel = (...reasons: Reason[]) => new TransactionCanceledException({
  message: 'cancelled',
  $metadata: {},
  CancellationReasons: reasons.map((reason) => (typeof reason === 'string' ? { Code: reason } : { Code: reason.Code, ...(reason.Item ? { Item: marshall(reason.Item, { removeUndefinedValues: true }) } : {}) })),
});
const failed = (item?: Record<string, unknown>) => ({ Code: 'ConditionalCheckFailed', ...(item ? { Item: item } : {}) });

describe('LedgerRepository: a refused reservation, decoded', () => {
  beforeEach(() => { mock.reset(); });

  it('holds, or reports a conflict or a duplicate hold', async () => {
    mock.on(TransactWriteCommand).resolvesOnce({ ConsumedCapacity: [{ CapacityUnits: 2 }, { WriteCapacityUnits: 4 }] })
      .rejectsOnce(cancel('None', 'TransactionConflict'))
      .rejectsOnce(cancel(failed(), 'None', failed(keyToItem(key))));
    expect(await repository.reserve(request, 1)).toEqual({ kind: 'held', writeUnits: 6 });
    expect(await repository.reserve(request, 2)).toEqual({ kind: 'conflict' });
    expect(await repository.reserve(request, 3)).toEqual({ kind: 'duplicate' });
  });

  it('names the organization that is gone, has no balance yet, or too little of it', async () => {
    mock.on(TransactWriteCommand)
      .rejectsOnce(cancel('None', failed()))
      .rejectsOnce(cancel('None', failed({ pk: 'ORG#org1', total_credits: 5 })))
      .rejectsOnce(cancel('None', failed({ pk: 'ORG#org1', balance: 42, held: 8 })));
    expect(await repository.reserve(request, 1)).toEqual({ kind: 'refused', organization: { kind: 'organization-gone' } });
    expect(await repository.reserve(request, 1)).toEqual({ kind: 'refused', organization: { kind: 'balance-missing' } });
    expect(await repository.reserve(request, 1)).toEqual({ kind: 'refused', organization: { kind: 'insufficient-balance', balance: 42n, held: 8n } });
  });

  it('returns the stored key: stale when its settings changed or it was disabled, its meter otherwise', async () => {
    const stored = { ...key, meter: { ...key.meter, held: 7n } };
    mock.on(TransactWriteCommand)
      .rejectsOnce(cancel('None', 'None', failed()))
      .rejectsOnce(cancel('None', 'None', failed(keyToItem({ ...stored, settings_version: 3 }))))
      .rejectsOnce(cancel('None', 'None', failed(keyToItem({ ...stored, disabled: true }))))
      .rejectsOnce(cancel('None', 'None', failed(keyToItem(stored))));
    expect(await repository.reserve(request, 1)).toEqual({ kind: 'refused', key: { kind: 'key-gone' } });
    expect(await repository.reserve(request, 1)).toEqual({ kind: 'refused', key: { kind: 'stale-key', key: { ...stored, settings_version: 3 } } });
    expect(await repository.reserve(request, 1)).toEqual({ kind: 'refused', key: { kind: 'stale-key', key: { ...stored, disabled: true } } });
    expect(await repository.reserve(request, 1)).toEqual({ kind: 'refused', key: { kind: 'key-meter', key: stored } });
  });

  it('returns the stored workspace: stale when its budgets changed, its meter otherwise; several refusals at once', async () => {
    mock.on(TransactWriteCommand)
      .rejectsOnce(cancel('None', 'None', 'None', failed(workspaceToItem({ ...workspace, budget_version: 2 }))))
      .rejectsOnce(cancel('None', failed({ balance: 1 }), 'None', failed(workspaceToItem(workspace))))
      .rejectsOnce(cancel('None', 'None', 'None', failed()));
    expect(await repository.reserve(request, 1)).toEqual({ kind: 'refused', workspace: { kind: 'stale-workspace', workspace: { ...workspace, budget_version: 2 } } });
    expect(await repository.reserve(request, 1)).toEqual({
      kind: 'refused', organization: { kind: 'insufficient-balance', balance: 1n, held: 0n }, workspace: { kind: 'workspace-meter', workspace },
    });
    expect(await repository.reserve(request, 1)).toEqual({ kind: 'refused', workspace: { kind: 'workspace-gone' } });
  });

  it('rethrows what is not a cancelled transaction', async () => {
    mock.on(TransactWriteCommand).rejects(new Error('throttled'));
    await expect(repository.reserve(request, 1)).rejects.toThrow('throttled');
  });
});

describe('LedgerRepository: a refused release, decoded', () => {
  beforeEach(() => { mock.reset(); });
  const hold = { generationId: 'gen-1', orgId: 'org1', workspaceId: 'ws1', keyHash: key.hash, amount: 100n };

  it('tells a hold already ended, a conflict and a deleted meter apart', async () => {
    // Items: hold (0), organization (1), key (2), workspace (3).
    mock.on(TransactWriteCommand)
      .rejectsOnce(cancel(failed(), 'None', 'None', 'None'))
      .rejectsOnce(cancel('None', 'TransactionConflict', 'None', 'None'))
      .rejectsOnce(cancel('None', 'None', failed(), 'None'))
      .resolvesOnce({ ConsumedCapacity: [{ TableName: 'table', CapacityUnits: 8 }] });
    expect(await repository.release({ hold }, 1)).toEqual({ kind: 'already' });
    expect(await repository.release({ hold }, 1)).toEqual({ kind: 'conflict' });
    expect(await repository.release({ hold }, 1)).toEqual({ kind: 'meter-gone', key: true, workspace: false });
    expect(await repository.release({ hold }, 1)).toEqual({ kind: 'released', writeUnits: 8 });
  });

  it('leaves a skipped meter out of the transaction (its reasons shift)', async () => {
    mock.on(TransactWriteCommand).rejectsOnce(cancel('None', 'None', failed()));
    expect(await repository.release({ hold, skipKey: true }, 1)).toEqual({ kind: 'meter-gone', key: false, workspace: true });
    const items = mock.commandCalls(TransactWriteCommand)[0]!.args[0].input.TransactItems!;
    expect(items.map((item) => (item.Update ?? item.Delete)!.Key!.pk)).toEqual(['HOLD#gen-1', 'ORG#org1', 'ORG#org1']);
  });
});

/** A Ledger over a repository that answers reservations from a script. */
function ledgerWith(outcomes: ReserveOutcome[], calls: string[] = [], more: Partial<Record<'release' | 'endLease', () => Promise<unknown>>> = {}, tokens: number[] = []) {
  const fake = {
    reserve: async (_request: unknown, attempt: number) => {
      tokens.push(attempt);
      return outcomes.shift() ?? { kind: 'conflict' };
    },
    roll: async (meter: { of: string }) => { calls.push(`roll ${meter.of}`); },
    addBalance: async () => { calls.push('addBalance'); },
    ...more,
  } as unknown as LedgerRepository;
  const workspaces = { getWorkspace: async () => workspace } as unknown as WorkspaceRepository;
  return new Ledger({
    repository: fake, codecs: meteredItemCodecs, workspaces, workspaceCache: new RecordCache<Workspace>(), keySeen: (seen) => calls.push(`seen ${seen.settings_version}`),
    clock: () => now, random: () => 0, sleep: async () => {}, log: new Logger(() => {}),
  });
}

const spentKey = (usage: bigint): ApiKey => ({ ...key, meter: { ...key.meter, usage: { ...key.meter.usage, total: usage } } });

describe('Ledger: refusals in domain errors', () => {
  it('refuses with KeyLimitExceeded: the reason, what is left and what was required, answered as the 402 it was', async () => {
    const refusal = await ledgerWith([{ kind: 'refused', key: { kind: 'key-meter', key: spentKey(950n) } }]).reserve('gen-1', key, 100n).catch((err: unknown) => err);
    expect(refusal).toBeInstanceOf(KeyLimitExceeded);
    expect(refusal).toBeInstanceOf(ReservationRefused);
    expect(refusal).toMatchObject({ reason: 'key_limit', remaining: 50n, required: 100n });
    const reply = toErrorReply(refusal, 'req-1');
    expect(reply.status).toBe(402);
    expect(reply.body.error.metadata).toEqual({ reason: 'key_limit', limit_reset: null, limit: '0.000001', required: '0.0000001', remaining: '0.00000005' });
    expect(reply.headers).toEqual({});
  });

  it('waits a moment when only what is held refuses it, and holds once enough came back; refuses at once otherwise', async () => {
    const calls: string[] = [];
    // 40 left, 70 held: a request of 100 could pass once held requests end.
    const heldBack: ReserveOutcome = { kind: 'refused', organization: { kind: 'insufficient-balance', balance: 40n, held: 70n } };
    const tokens: number[] = [];
    const ledger = ledgerWith([heldBack, heldBack, { kind: 'held', writeUnits: 4 }], calls, {}, tokens);
    await expect(ledger.reserve('gen-1', key, 100n)).resolves.toMatchObject({ amount: 100n, attempts: 1 });
    // Each send after a wait has a token of its own (its times differ: a reused token would be refused).
    expect(tokens).toEqual([1, 2, 3]);
    // Short of it even with everything held back: no wait.
    const short: ReserveOutcome = { kind: 'refused', organization: { kind: 'insufficient-balance', balance: 10n, held: 20n } };
    await expect(ledgerWith([short, { kind: 'held', writeUnits: 4 }]).reserve('gen-1', key, 100n)).rejects.toMatchObject({ constructor: CreditsExhausted });
  });

  it('names the tightest of several refusing limits, as its own kind', async () => {
    const both: ReserveOutcome = { kind: 'refused', organization: { kind: 'insufficient-balance', balance: 10n, held: 0n }, key: { kind: 'key-meter', key: spentKey(950n) } };
    await expect(ledgerWith([both]).reserve('gen-1', key, 100n)).rejects.toMatchObject({ constructor: CreditsExhausted, reason: 'insufficient_credits', remaining: 10n });
    const budgeted: Workspace = { ...workspace, budgets: { daily: { id: 'b', limit: 60n, created_at: '', updated_at: '' } } };
    await expect(ledgerWith([{ kind: 'refused', workspace: { kind: 'workspace-meter', workspace: budgeted } }]).reserve('gen-1', key, 100n))
      .rejects.toMatchObject({ constructor: WorkspaceBudgetExceeded, reason: 'workspace_budget', remaining: 60n, required: 100n });
  });

  it('refuses a key that is gone or disabled as unauthenticated, a vanished tenant as forbidden', async () => {
    const cases: Array<[ReserveOutcome, unknown, number, string]> = [
      [{ kind: 'refused', key: { kind: 'key-gone' } }, KeyDeleted, 401, 'API key not found'],
      [{ kind: 'refused', key: { kind: 'stale-key', key: { ...key, disabled: true, settings_version: 3 } } }, KeyDisabled, 401, 'API key disabled'],
      [{ kind: 'refused', organization: { kind: 'organization-gone' } }, TenantGone, 403, 'The organization of this API key no longer exists'],
      [{ kind: 'refused', workspace: { kind: 'workspace-gone' } }, TenantGone, 403, 'The workspace of this API key no longer exists'],
    ];
    for (const [outcome, kind, status, message] of cases) {
      const err = await ledgerWith([outcome]).reserve('gen-1', key, 100n).catch((thrown: unknown) => thrown);
      expect(err).toBeInstanceOf(kind as new () => Error);
      expect(httpErrorOf(err as KeyDeleted)).toMatchObject({ status, message });
    }
  });

  it('gives up on contention with ReservationContended: a 503 that says when to retry', async () => {
    const err = await ledgerWith([]).reserve('gen-1', key, 100n).catch((thrown: unknown) => thrown);
    expect(err).toBeInstanceOf(ReservationContended);
    const reply = toErrorReply(err, 'req-1', new Logger(() => {}));
    expect(reply.status).toBe(503);
    expect(reply.headers).toEqual({ 'retry-after': '1' });
    expect(reply.body.error.message).toBe('Could not reserve credits: too much contention on this account; retry shortly');
  });

  it('retries after taking a fresher key, adding a missing balance or rolling a window, then holds', async () => {
    const calls: string[] = [];
    const behind: ApiKey = { ...key, meter: { ...key.meter, periods: { daily: '2026-11-23', weekly: periods.weekly, monthly: periods.monthly } } };
    const ledger = ledgerWith([
      { kind: 'refused', key: { kind: 'stale-key', key: { ...key, settings_version: 3 } } },
      { kind: 'refused', organization: { kind: 'balance-missing' } },
      { kind: 'refused', key: { kind: 'key-meter', key: behind } },
      { kind: 'held', writeUnits: 6 },
    ], calls);
    expect(await ledger.reserve('gen-1', key, 100n)).toMatchObject({ generationId: 'gen-1', amount: 100n, attempts: 4, writeUnits: 6 });
    expect(calls).toEqual(['seen 3', 'addBalance', 'roll key']);
  });

  it('never hides a duplicate generation id behind a retry', async () => {
    await expect(ledgerWith([{ kind: 'duplicate' }]).reserve('gen-1', key, 100n)).rejects.toThrow('hold gen-1 exists already');
  });
});

describe('Ledger: a release or a lease return the store refuses', () => {
  const storeError = (name: string) => Object.assign(new Error(name), { name });
  const hold = { generationId: 'gen-1', orgId: 'org1', workspaceId: 'ws1', keyHash: key.hash, amount: 100n };
  const grant = { id: 'lease-1', orgId: 'org1', workspaceId: 'ws1', keyHash: key.hash, amount: 500n, settingsVersion: 2, budgetVersion: 1, useUntil: 0 };

  it('tries a release again after a passing failure, and gives up at once when the store would answer the same', async () => {
    const passing = [storeError('ThrottlingException'), storeError('InternalServerError')];
    let calls = 0;
    const release = async () => {
      calls += 1;
      const next = passing.shift();
      if (next) throw next;
      return { kind: 'released', writeUnits: 8 };
    };
    expect(await ledgerWith([], [], { release }).release(hold)).toEqual({ outcome: 'released', writeUnits: 8, attempts: 3 });
    expect(calls).toBe(3);

    for (const name of ['ResourceNotFoundException', 'ValidationException', 'AccessDeniedException']) {
      calls = 0;
      const refused = async () => { calls += 1; throw storeError(name); };
      expect(await ledgerWith([], [], { release: refused }).release(hold)).toEqual({ outcome: 'failed', writeUnits: 0, attempts: 1 });
      expect(calls).toBe(1);
    }
  });

  it('gives a lease return up at once when the table is gone, and tries it again after a passing failure', async () => {
    let calls = 0;
    const gone = async () => { calls += 1; throw storeError('ResourceNotFoundException'); };
    await expect(ledgerWith([], [], { endLease: gone }).returnLease(grant, 100n)).resolves.toBeUndefined();
    expect(calls).toBe(1);

    calls = 0;
    const once = async () => {
      calls += 1;
      if (calls === 1) throw storeError('ThrottlingException');
      return { kind: 'returned' };
    };
    await ledgerWith([], [], { endLease: once }).returnLease(grant, 100n);
    expect(calls).toBe(2);
  });
});
