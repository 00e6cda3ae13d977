// The lease pool over a scripted ledger: reservations in memory once a lease is taken, spend counted only
// for stored records, refills before a lease runs out, and every lease given back exactly once with what
// its requests did not spend (replaced, stale terms, idle, shutdown).
import { describe, expect, it } from '@jest/globals';
import { LeasePool, type LeaseGrant, type LeaseLedger } from '../../lambdas/billing/leases.js';
import { newApiKey } from '../../lambdas/keys/new-key.js';
import { newWorkspace } from '../../lambdas/organizations/new-workspace.js';
import type { ApiKey } from '../../lambdas/keys/types.js';
import type { Workspace } from '../../lambdas/organizations/types.js';
import { Logger } from '../../lambdas/platform/logger.js';

const at = new Date('2026-11-24T10:00:00Z');
const key: ApiKey = newApiKey({ orgId: 'org1', orgKind: 'organization', workspaceId: 'ws1', kind: 'standard', name: 'k', now: at }).key;
const workspace: Workspace = { ...newWorkspace('org1', { name: 'W', slug: 'w' }, null, at), id: 'ws1' };

function setup(left = 1_000_000_000n) {
  let now = at.getTime();
  let headroomLeft = left;
  let n = 0;
  const taken: LeaseGrant[] = [];
  const returned: Array<{ id: string; spent: bigint }> = [];
  const ledger: LeaseLedger = {
    headroom: async () => ({ left: headroomLeft, capacity: 1_000_000_000n }),
    takeLease: async (k, w, amount, useUntil) => {
      n += 1;
      const grant = { id: `lease-${n}`, orgId: k.org_id, workspaceId: w.id, keyHash: k.hash, amount, settingsVersion: k.settings_version, budgetVersion: w.budget_version, useUntil };
      taken.push(grant);
      return grant;
    },
    returnLease: async (grant, spent) => { returned.push({ id: grant.id, spent }); },
  };
  const pool = new LeasePool({ ledger, owner: 'test', now: () => now, log: new Logger(() => undefined), policy: { idleMs: 10_000 } });
  const settle = async () => { await new Promise((resolve) => setImmediate(resolve)); };
  return { pool, taken, returned, advance: (ms: number) => { now += ms; }, settle, setLeft: (value: bigint) => { headroomLeft = value; } };
}

describe('LeasePool', () => {
  it('holds exactly until a lease is taken, then reserves from it in memory', async () => {
    const s = setup();
    expect(s.pool.reserve(key, workspace, 1000n)).toBeUndefined();
    await s.settle();
    expect(s.taken).toHaveLength(1);
    expect(s.taken[0]!.amount).toBe(4000n);
    const draws = [1, 2, 3].map(() => s.pool.reserve(key, workspace, 1000n));
    expect(draws.every((draw) => draw?.leaseId === 'lease-1')).toBe(true);
    expect(s.pool.held()[0]).toMatchObject({ available: 1000n, inFlight: 3 });
  });

  it('counts a draw as spent only once its record is stored; what was not spent serves others at once', async () => {
    const s = setup();
    s.pool.reserve(key, workspace, 1000n);
    await s.settle();
    const draw = s.pool.reserve(key, workspace, 1000n)!;
    const settled = s.pool.settle(draw, 300n);
    expect(settled.spent).toBe(300n);
    expect(s.pool.held()[0]).toMatchObject({ available: 3700n, spent: 0n, inFlight: 1 });
    settled.stored(true);
    expect(s.pool.held()[0]).toMatchObject({ available: 3700n, spent: 300n, inFlight: 0 });
    // A cost beyond the reservation claims the reservation only; a record that may not be stored retires the
    // lease without lending its spend again.
    const over = s.pool.reserve(key, workspace, 1000n)!;
    expect(s.pool.settle(over, 5000n).spent).toBe(1000n);
    const lost = s.pool.reserve(key, workspace, 1000n)!;
    s.pool.settle(lost, 200n).stored(false);
    expect(s.pool.held()[0]).toMatchObject({ available: 2500n, spent: 300n, inFlight: 1, retired: true });
    expect(() => s.pool.settle(lost, 1n)).toThrow('settled twice');
  });

  it('takes the next lease before the active one runs out, and gives the old one back when its requests end', async () => {
    const s = setup();
    s.pool.reserve(key, workspace, 1000n);
    await s.settle();
    const first = s.pool.reserve(key, workspace, 1000n)!;
    const second = s.pool.reserve(key, workspace, 1000n)!;
    s.pool.reserve(key, workspace, 1000n);
    s.pool.reserve(key, workspace, 1000n);
    // Nothing left in lease-1: the next lease is taken in the background.
    await s.settle();
    expect(s.taken.map((grant) => grant.id)).toEqual(['lease-1', 'lease-2']);
    expect(s.pool.reserve(key, workspace, 1000n)?.leaseId).toBe('lease-2');
    expect(s.returned).toEqual([]);
    s.pool.settle(first, 600n).stored(true);
    s.pool.release(second);
    expect(s.returned).toEqual([]);
    for (const lease of s.pool.held().filter((held) => held.id === 'lease-1')) expect(lease).toMatchObject({ retired: true, inFlight: 2 });
  });

  it('retires a lease whose key or budgets changed, and one past its end; gives back idle ones and all at shutdown', async () => {
    const s = setup();
    s.pool.reserve(key, workspace, 1000n);
    await s.settle();
    expect(s.pool.reserve({ ...key, settings_version: key.settings_version + 1 }, workspace, 1000n)).toBeUndefined();
    await s.settle();
    expect(s.returned).toEqual([{ id: 'lease-1', spent: 0n }]);
    const onSecond = s.pool.reserve({ ...key, settings_version: key.settings_version + 1 }, workspace, 1000n)!;
    expect(onSecond.leaseId).toBe('lease-2');
    s.pool.release(onSecond);
    expect(s.pool.reserve(key, { ...workspace, budget_version: 7 }, 1000n)).toBeUndefined();
    await s.settle();
    s.advance(61_000);
    expect(s.pool.reserve(key, { ...workspace, budget_version: 7 }, 1000n)).toBeUndefined();
    await s.settle();
    s.advance(11_000);
    s.pool.returnIdle();
    await s.pool.returnAll();
    // Every lease taken was given back once.
    expect(s.returned.map((entry) => entry.id).sort()).toEqual(s.taken.map((grant) => grant.id).sort());
    expect(s.pool.held()).toEqual([]);
  });

  it('never gives back a lease one of whose records may not be stored: the sweep ends it from what was applied', async () => {
    const s = setup();
    s.pool.reserve(key, workspace, 1000n);
    await s.settle();
    const lost = s.pool.reserve(key, workspace, 1000n)!;
    const kept = s.pool.reserve(key, workspace, 1000n)!;
    s.pool.settle(lost, 400n).stored(false);
    // Retired at once: no request reserves from it any more, and what the lost record spent is not lent again.
    expect(s.pool.reserve(key, workspace, 1000n)).toBeUndefined();
    s.pool.settle(kept, 300n).stored(true);
    await s.pool.returnAll(1000);
    expect(s.returned.map((entry) => entry.id)).not.toContain('lease-1');
  });

  it('returnAll gives up after its timeout on a lease whose requests are still in flight, leaving it taken', async () => {
    const s = setup();
    s.pool.reserve(key, workspace, 1000n);
    await s.settle();
    s.pool.reserve(key, workspace, 1000n);
    const started = Date.now();
    let clock = 0;
    const pool = s.pool as unknown as { deps: { now: () => number } };
    const realNow = pool.deps.now;
    pool.deps.now = () => realNow() + (clock += 20);
    await s.pool.returnAll(200);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(s.returned).toEqual([]);
  });

  it('gives back at once a lease too thin for a request when the headroom allows no next one, so that its rest serves exact holds', async () => {
    const s = setup();
    s.pool.reserve(key, workspace, 1000n);
    await s.settle();
    s.setLeft(10_000n);
    for (let i = 0; i < 3; i += 1) s.pool.settle(s.pool.reserve(key, workspace, 1000n)!, 1000n).stored(true);
    // What is left (1000) still covers a smaller request: the lease stays.
    s.pool.settle(s.pool.reserve(key, workspace, 400n)!, 400n).stored(true);
    await s.settle();
    expect(s.returned).toEqual([]);
    // Not this one (600 left), and no next lease can be taken: lease-1 goes back now, not when the key is idle.
    expect(s.pool.reserve(key, workspace, 1000n)).toBeUndefined();
    await s.settle();
    expect(s.taken.map((grant) => grant.id)).toEqual(['lease-1']);
    expect(s.returned).toEqual([{ id: 'lease-1', spent: 3400n }]);
    expect(s.pool.held()).toEqual([]);
  });

  it('takes no lease for a disabled key, or when the headroom is too thin', async () => {
    const s = setup();
    expect(s.pool.reserve({ ...key, disabled: true }, workspace, 1000n)).toBeUndefined();
    await s.settle();
    expect(s.taken).toEqual([]);
    const thin = setup(10_000n);
    thin.pool.reserve(key, workspace, 1000n);
    await thin.settle();
    expect(thin.taken).toEqual([]);
  });
});
