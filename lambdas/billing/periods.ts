// Reset windows of usage counters, key limits and workspace budgets, all in UTC: a day starts at
// midnight, a week on Monday, a month on its first day. A window is named by its first day.
export type Interval = 'daily' | 'weekly' | 'monthly';
export const INTERVALS: readonly Interval[] = ['daily', 'weekly', 'monthly'];

export type Periods = Record<Interval, string>;

/** The windows a workspace budget can have: the reset windows, or none (lifetime). */
export type BudgetInterval = Interval | 'lifetime';
export const BUDGET_INTERVALS: readonly BudgetInterval[] = ['daily', 'weekly', 'monthly', 'lifetime'];

const DAY_MS = 86_400_000;

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** First day (YYYY-MM-DD) of the window holding `at`. */
export function windowStart(interval: Interval, at: Date): string {
  const midnight = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
  if (interval === 'daily') return day(midnight);
  if (interval === 'weekly') return day(midnight - ((at.getUTCDay() + 6) % 7) * DAY_MS);
  return day(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

/** The instant the window holding `at` ends (the next window's start), ISO 8601. */
export function windowEnd(interval: Interval, at: Date): string {
  const start = Date.parse(`${windowStart(interval, at)}T00:00:00Z`);
  if (interval === 'daily') return new Date(start + DAY_MS).toISOString();
  if (interval === 'weekly') return new Date(start + 7 * DAY_MS).toISOString();
  const first = new Date(start);
  return new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth() + 1, 1)).toISOString();
}

export function currentPeriods(at: Date): Periods {
  return { daily: windowStart('daily', at), weekly: windowStart('weekly', at), monthly: windowStart('monthly', at) };
}

/** The later of the current windows and the ones a meter is already counting (another clock may be ahead). */
export function laterPeriods(current: Periods, stored: Partial<Periods>): Periods {
  const later = { ...current };
  for (const interval of INTERVALS) {
    const seen = stored[interval];
    if (seen && seen > later[interval]) later[interval] = seen;
  }
  return later;
}

/** Whether a meter counts windows older than `periods` (or none: stored before meters had windows). */
export function isBehind(stored: Partial<Periods>, periods: Periods): boolean {
  return INTERVALS.some((interval) => !stored[interval] || stored[interval]! < periods[interval]);
}
