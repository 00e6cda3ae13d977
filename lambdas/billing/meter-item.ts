// How a meter (meter.ts) is stored on API key and workspace items: flat top-level attributes, so that
// DynamoDB's ADD works on them (ADD ignores nested paths) and a missing attribute counts as zero.
//
// Conditions cannot add numbers, so "usage + held + this request <= limit" is kept checkable by storing the
// sums themselves: exp_<window> = usage + held and expb_<window> = usage + BYOK usage + held. A reservation
// then asks `exp_daily <= limit - amount`, a single comparison.
import { nanosFromStore, nanosToStore } from '../platform/money.js';
import { INTERVALS, type Interval, type Periods } from './periods.js';
import { WINDOWS, type Meter, type UsageCounters, type Window } from './meter.js';

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
    leases: typeof item.leases === 'number' ? item.leases : 0,
  };
}

/** The windows a meter item counts, as stored (an item from before meters existed has none). */
export function periodsFromItem(item: Record<string, unknown>): Partial<Periods> {
  const periods: Partial<Periods> = {};
  for (const interval of INTERVALS) {
    const value = item[meterAttr.period(interval)];
    if (typeof value === 'string') periods[interval] = value;
  }
  return periods;
}
