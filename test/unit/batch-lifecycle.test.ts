import { describe, expect, it } from '@jest/globals';
import { BATCH_STATUSES, BatchStateError, canTransition, isTerminal, transition, type BatchEvent, type BatchStatus } from '../../lambdas/batches/lifecycle.js';
import { httpErrorOf } from '../../lambdas/platform/http/errors.js';

const EVENTS: BatchEvent[] = ['validated', 'validation_failed', 'items_done', 'finalized', 'failed', 'cancel', 'cancelled', 'expire'];

describe('batch lifecycle', () => {
  it('runs the happy path validating → in_progress → finalizing → completed', () => {
    let status: BatchStatus = 'validating';
    for (const event of ['validated', 'items_done', 'finalized'] as const) status = transition(status, event);
    expect(status).toBe('completed');
  });

  it('reaches every state of SPEC from validating', () => {
    const reached = new Set<BatchStatus>(['validating']);
    const queue: BatchStatus[] = ['validating'];
    while (queue.length) {
      const status = queue.shift()!;
      for (const event of EVENTS) {
        if (!canTransition(status, event)) continue;
        const next = transition(status, event);
        if (!reached.has(next)) { reached.add(next); queue.push(next); }
      }
    }
    expect([...reached].sort()).toEqual([...BATCH_STATUSES].sort());
  });

  it('cancels while validating or running, and a second cancel answers with the batch as it is', () => {
    expect(transition('validating', 'cancel')).toBe('cancelling');
    expect(transition('in_progress', 'cancel')).toBe('cancelling');
    expect(transition('cancelling', 'cancel')).toBe('cancelling');
    expect(transition('cancelling', 'cancelled')).toBe('cancelled');
    expect(transition('cancelled', 'cancel')).toBe('cancelled');
    // A provider that fails while the batch is being cancelled ends it as failed.
    expect(transition('cancelling', 'failed')).toBe('failed');
  });

  it('refuses a cancel of a finishing or finished batch with a 409 that says why', () => {
    for (const status of ['finalizing', 'completed', 'failed', 'expired'] as const) {
      let caught: unknown;
      try { transition(status, 'cancel'); } catch (err) { caught = err; }
      expect(caught).toBeInstanceOf(BatchStateError);
      const mapped = httpErrorOf(caught as BatchStateError);
      expect(mapped.status).toBe(409);
      expect(mapped.message).toMatch(status === 'finalizing' ? /finalizing.*can no longer be cancelled/ : new RegExp(`already ${status}.*cannot be cancelled`));
    }
  });

  it('expires a batch that has not finished (a finalizer that never ends included), and never a finished one', () => {
    expect(transition('validating', 'expire')).toBe('expired');
    expect(transition('in_progress', 'expire')).toBe('expired');
    expect(transition('finalizing', 'expire')).toBe('expired');
    expect(transition('cancelling', 'expire')).toBe('expired');
    for (const status of ['completed', 'failed', 'cancelled', 'expired'] as const) expect(canTransition(status, 'expire')).toBe(false);
  });

  it('moves a terminal batch nowhere but an idempotent cancel of a cancelled one', () => {
    for (const status of BATCH_STATUSES) {
      if (!isTerminal(status)) continue;
      const allowed = EVENTS.filter((event) => canTransition(status, event));
      expect(allowed).toEqual(status === 'cancelled' ? ['cancel'] : []);
    }
  });

  it('does not run a step twice: a batch already running is not validated again', () => {
    expect(() => transition('in_progress', 'validated')).toThrow(BatchStateError);
    expect(() => transition('completed', 'finalized')).toThrow(/already completed/);
  });
});
