// A batch's states and the only ways between them. SPEC lists the states and that a batch starts in
// validating once its input is stored and queued; the transitions follow OpenAI's Batch API, whose states
// SPEC's are:
//
//   validating ──validated──► in_progress ──items_done──► finalizing ──finalized──► completed
//       │                         │                            │
//       ├──validation_failed──► failed ◄──────failed───────────┘  (also from in_progress)
//       ├──cancel──► cancelling ──cancelled──► cancelled           (also from in_progress; cancelling may fail)
//       └──expire──► expired                                       (also from in_progress, finalizing and cancelling)
//
// Every step of the workflow (the state machine, a worker, a cancel request) asks `transition` and stores
// the result with a condition on the status it read, so two steps racing cannot both move a batch.
import { ConflictError } from '../platform/errors.js';

export const BATCH_STATUSES = ['validating', 'in_progress', 'finalizing', 'completed', 'failed', 'expired', 'cancelling', 'cancelled'] as const;
export type BatchStatus = typeof BATCH_STATUSES[number];

export type BatchEvent =
  /** The input was read and every item checked; at least one item can run. */
  | 'validated'
  /** The input cannot run at all (unreadable, no valid item, the balance cannot cover it). */
  | 'validation_failed'
  /** Every item has its result (or was given up). */
  | 'items_done'
  /** The results file and the usage are written. */
  | 'finalized'
  /** Running stopped for a reason other than the caller (the provider's batch failed, a step gave up). */
  | 'failed'
  /** The caller asked to cancel. */
  | 'cancel'
  /** Every item that was running has stopped after a cancel. */
  | 'cancelled'
  /** The completion window passed before the batch ended. */
  | 'expire';

const TERMINAL_STATUSES: ReadonlySet<BatchStatus> = new Set(['completed', 'failed', 'expired', 'cancelled']);

const TRANSITIONS: Record<BatchStatus, Partial<Record<BatchEvent, BatchStatus>>> = {
  validating: { validated: 'in_progress', validation_failed: 'failed', failed: 'failed', cancel: 'cancelling', expire: 'expired' },
  in_progress: { items_done: 'finalizing', failed: 'failed', cancel: 'cancelling', expire: 'expired' },
  // A finalizer that never finishes is ended by the window like any other step.
  finalizing: { finalized: 'completed', failed: 'failed', expire: 'expired' },
  // A cancel asked twice is answered with the batch as it is; the items that were running still end.
  cancelling: { cancel: 'cancelling', cancelled: 'cancelled', failed: 'failed', expire: 'expired' },
  cancelled: { cancel: 'cancelled' },
  completed: {},
  failed: {},
  expired: {},
};

/** A transition the batch's current state does not allow (a cancel of a finished batch, a step run twice). */
export class BatchStateError extends ConflictError {
  constructor(readonly status: BatchStatus, readonly event: BatchEvent) {
    super(status === 'finalizing' && event === 'cancel'
      ? 'Batch is finalizing: its results are being written and it can no longer be cancelled'
      : TERMINAL_STATUSES.has(status)
        ? `Batch is already ${status}${event === 'cancel' ? ' and cannot be cancelled' : ''}`
        : `Batch is ${status}: "${event}" does not apply`, { metadata: { status, event } });
  }
}

/** The state `event` moves a batch in `status` to; a BatchStateError (409) when it does not apply. */
export function transition(status: BatchStatus, event: BatchEvent): BatchStatus {
  const next = TRANSITIONS[status][event];
  if (next === undefined) throw new BatchStateError(status, event);
  return next;
}

/** Whether `event` applies to a batch in `status`, without throwing. */
export function canTransition(status: BatchStatus, event: BatchEvent): boolean {
  return TRANSITIONS[status][event] !== undefined;
}

export function isTerminal(status: BatchStatus): boolean {
  return TERMINAL_STATUSES.has(status);
}
