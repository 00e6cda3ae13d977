// The spend meter an API key and a workspace each have: usage counters per window (lifetime, day, week,
// month), BYOK usage beside them, the window each counter belongs to, and the amount held by requests in
// flight. How it is stored on their items is meter-item.ts.
import type { Nanos } from '../platform/money.js';
import { currentPeriods, INTERVALS, type Interval, type Periods } from './periods.js';

export type Window = 'total' | Interval;
export const WINDOWS: readonly Window[] = ['total', ...INTERVALS];

export interface UsageCounters {
  total: Nanos;
  daily: Nanos;
  weekly: Nanos;
  monthly: Nanos;
}

export interface Meter {
  usage: UsageCounters;
  byok_usage: UsageCounters;
  /** The window (its first day) each periodic counter is counting. */
  periods: Periods;
  /** Reserved by requests in flight and by processes' leases, not yet settled. */
  held: Nanos;
  /** Leases outstanding against it: a change of its terms must wait until their holders see it (leases.ts). */
  leases: number;
}

/** The meter window a budget interval counts in: lifetime budgets count the lifetime total. */
export const budgetWindow = (interval: Interval | 'lifetime'): Window => (interval === 'lifetime' ? 'total' : interval);

export const zeroUsage = (): UsageCounters => ({ total: 0n, daily: 0n, weekly: 0n, monthly: 0n });

export const newMeter = (at: Date): Meter => ({ usage: zeroUsage(), byok_usage: zeroUsage(), periods: currentPeriods(at), held: 0n, leases: 0 });

/** The meter as of `at`: counters of a window that has ended read zero (the store resets them lazily). */
export function meterAt(meter: Meter, at: Date): Meter {
  const now = currentPeriods(at);
  const usage = { ...meter.usage };
  const byok = { ...meter.byok_usage };
  for (const interval of INTERVALS) {
    if (meter.periods[interval] !== now[interval]) {
      usage[interval] = 0n;
      byok[interval] = 0n;
    }
  }
  return { usage, byok_usage: byok, periods: now, held: meter.held, leases: meter.leases };
}

/** Spend counted against a limit of the given window. */
export function spent(meter: Meter, window: Window, withByok: boolean): Nanos {
  return meter.usage[window] + (withByok ? meter.byok_usage[window] : 0n);
}
