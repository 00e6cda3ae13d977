// The spend meter kept on API key and workspace items: usage counters per window (lifetime, day, week,
// month), BYOK usage beside them, the window each counter belongs to, and the amount held by requests in
// flight. Stored as flat top-level attributes so that DynamoDB's ADD works on them (ADD ignores nested
// paths) and a missing attribute counts as zero.
//
// Conditions cannot add numbers, so "usage + held + this request <= limit" is kept checkable by storing the
// sums themselves: exp_<window> = usage + held and expb_<window> = usage + BYOK usage + held. A reservation
// then asks `exp_daily <= limit - amount`, a single comparison.
import { nanosFromStore, nanosToStore, type Nanos } from '../platform/money.js';
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
  /** Reserved by requests in flight, not yet settled. */
  held: Nanos;
}

/** The meter window a budget interval counts in: lifetime budgets count the lifetime total. */
export const budgetWindow = (interval: Interval | 'lifetime'): Window => (interval === 'lifetime' ? 'total' : interval);

export const zeroUsage = (): UsageCounters => ({ total: 0n, daily: 0n, weekly: 0n, monthly: 0n });

export const newMeter = (at: Date): Meter => ({ usage: zeroUsage(), byok_usage: zeroUsage(), periods: currentPeriods(at), held: 0n });

/** Attribute names, one place. */
export const meterAttr = {
  usage: (window: Window) => `usage_${window}`,
  byok: (window: Window) => `byok_${window}`,
  exposure: (window: Window, withByok: boolean) => `${withByok ? 'expb' : 'exp'}_${window}`,
  period: (interval: Interval) => `period_${interval}`,
  held: 'held',
} as const;

export function meterToItem(meter: Meter): Record<string, unknown> {
  const item: Record<string, unknown> = { [meterAttr.held]: nanosToStore(meter.held) };
  for (const window of WINDOWS) {
    item[meterAttr.usage(window)] = nanosToStore(meter.usage[window]);
    item[meterAttr.byok(window)] = nanosToStore(meter.byok_usage[window]);
    item[meterAttr.exposure(window, false)] = nanosToStore(meter.usage[window] + meter.held);
    item[meterAttr.exposure(window, true)] = nanosToStore(meter.usage[window] + meter.byok_usage[window] + meter.held);
  }
  for (const interval of INTERVALS) item[meterAttr.period(interval)] = meter.periods[interval];
  return item;
}

export function meterFromItem(item: Record<string, unknown>): Meter {
  const counters = (name: (window: Window) => string): UsageCounters => ({
    total: nanosFromStore(item[name('total')]),
    daily: nanosFromStore(item[name('daily')]),
    weekly: nanosFromStore(item[name('weekly')]),
    monthly: nanosFromStore(item[name('monthly')]),
  });
  return {
    usage: counters(meterAttr.usage),
    byok_usage: counters(meterAttr.byok),
    periods: {
      daily: String(item[meterAttr.period('daily')] ?? ''),
      weekly: String(item[meterAttr.period('weekly')] ?? ''),
      monthly: String(item[meterAttr.period('monthly')] ?? ''),
    },
    held: nanosFromStore(item[meterAttr.held]),
  };
}

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
  return { usage, byok_usage: byok, periods: now, held: meter.held };
}

/** Spend counted against a limit of the given window. */
export function spent(meter: Meter, window: Window, withByok: boolean): Nanos {
  return meter.usage[window] + (withByok ? meter.byok_usage[window] : 0n);
}
