// What billing refuses, in its own words: a reservation that no balance, key limit or workspace budget can
// cover (with what is left and what was required), a key or tenant that vanished or was disabled while its
// copy was in use, and contention that outlasted the retries. The HTTP error map gives each the status of
// the platform class it extends (402, 401, 403, 503).
import { ForbiddenError, InsufficientFundsError, UnauthenticatedError, UnavailableError, type DomainErrorOptions } from '../platform/errors.js';
import type { Nanos } from '../platform/money.js';

/** Which limit refused a reservation (also `error.metadata.reason` of the reply). */
export type RefusalReason = 'insufficient_credits' | 'key_limit' | 'workspace_budget' | 'end_user_limit' | 'guardrail_limit';

export interface RefusalDetails {
  reason: RefusalReason;
  /** What the refusing limit has left (never negative). */
  remaining: Nanos;
  /** What the reservation asked for. */
  required: Nanos;
  /** One sentence naming the refusing limit and what is left of it. */
  state: string;
  /** How to lift it ("add credits", "raise the key's limit" …). */
  remedy: string;
}

/** A reservation the named limit cannot cover. */
export abstract class ReservationRefused extends InsufficientFundsError {
  readonly reason: RefusalReason;
  readonly remaining: Nanos;
  readonly required: Nanos;
  readonly state: string;
  readonly remedy: string;

  constructor(message: string, details: RefusalDetails, options: DomainErrorOptions = {}) {
    super(message, options);
    this.reason = details.reason;
    this.remaining = details.remaining;
    this.required = details.required;
    this.state = details.state;
    this.remedy = details.remedy;
  }
}

/** The organization's credits cannot cover the reservation. */
export class CreditsExhausted extends ReservationRefused {}
/** The key's spending limit (in its reset window) cannot cover the reservation. */
export class KeyLimitExceeded extends ReservationRefused {}
/** One of the workspace's budgets cannot cover the reservation. */
export class WorkspaceBudgetExceeded extends ReservationRefused {}
/** The request's end user's spending limit cannot cover the reservation. */
export class EndUserLimitExceeded extends ReservationRefused {}
/** A guardrail's spending limit (on the key, or on the member who created it) cannot cover the reservation. */
export class GuardrailLimitExceeded extends ReservationRefused {}

/** The key was deleted while a copy of it was in use. */
export class KeyDeleted extends UnauthenticatedError {
  constructor() { super('API key not found'); }
}

/** The key was disabled while a copy of it was in use. */
export class KeyDisabled extends UnauthenticatedError {
  constructor() { super('API key disabled'); }
}

/** The key's workspace or organization no longer exists. */
export class TenantGone extends ForbiddenError {
  constructor(readonly tenant: 'organization' | 'workspace') {
    super(`The ${tenant} of this API key no longer exists`);
  }
}

/** Every attempt to reserve met a concurrent transaction on the same items; the caller may retry shortly. */
export class ReservationContended extends UnavailableError {
  constructor() {
    super('Could not reserve credits: too much contention on this account; retry shortly', { retryAfterSeconds: 1 });
  }
}

/**
 * A hold under this generation id exists already: another run of the same batch item (whose id is the
 * item's) holds it now. Not a domain error: the item is not failed; its other run records it.
 */
export class HoldExistsError extends Error {
  constructor(readonly generationId: string, kind: string) {
    super(`${kind} ${generationId} exists already`);
    this.name = 'HoldExistsError';
  }
}
