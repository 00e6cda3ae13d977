// A credit grant as it is recorded with the organization: the one constructor for the credits route and
// the operator's CLI (bin/admin.ts add-credits).
import { randomUUID } from 'node:crypto';
import type { Nanos } from '../platform/money.js';
import type { CreditGrant } from './credit-repository.js';

export function newCreditGrant(input: { amount: Nanos; note: string | null; by: string; now: Date }): CreditGrant {
  return { id: randomUUID(), amount: input.amount, note: input.note, by: input.by, created_at: input.now.toISOString() };
}
