// "A USD amount from a client" as a zod schema: key limits, workspace budgets, credit grants and max_price all
// use it, so each refuses the same things with a 400 naming the field, and each rounds to the nearest nano-dollar
// (a positive amount that would round to 0 is refused rather than taken as 0).
import * as z from 'zod';
import { MoneyFormatError, roundUsdToNanos, type Nanos } from '../money.js';

/**
 * The largest amount a client may send: $1e9 is 1e18 nano-dollars, which fits a signed 64-bit integer, so an
 * amount stays exact for any reader of the table (Go, Java, analytics tools), and is far above any real
 * limit, budget or grant: anything larger is a mistake.
 */
export const MAX_CLIENT_USD = 1_000_000_000;
const MAX_CLIENT_NANOS = roundUsdToNanos(MAX_CLIENT_USD);

/** Plain decimal text, as max_price accepts it ("0.5"): no sign, no exponent. */
const DECIMAL_TEXT = /^\d+(\.\d+)?$/;

export interface UsdAmountOptions {
  /** Also accept decimal text ("0.5"), as max_price does. */
  text?: boolean;
  /** Refuse amounts that round to 0 (a credit grant of nothing). */
  positive?: boolean;
}

const tooLarge = `must be at most ${MAX_CLIENT_USD} (USD)`;

/** A non-negative, finite USD amount of at most MAX_CLIENT_USD, parsed to nano-dollars rounded to the nearest. */
export function usdAmount(options: UsdAmountOptions = {}): z.ZodType<Nanos> {
  const number = z.number({ error: (issue) => notANumber(issue.input, options.text === true) })
    .min(0, 'must not be negative')
    .max(MAX_CLIENT_USD, tooLarge);
  const toNanos = (value: number | string, ctx: z.RefinementCtx): Nanos => {
    // Numbers were bounded above; decimal text is bounded here. Valid text fails to convert only when it is
    // too large even to spell out in nano-dollars.
    let nanos: Nanos | undefined;
    try {
      nanos = roundUsdToNanos(value);
    } catch (err) {
      if (!(err instanceof MoneyFormatError)) throw err;
    }
    if (nanos === undefined || nanos > MAX_CLIENT_NANOS) {
      ctx.addIssue({ code: 'custom', message: tooLarge, input: value });
      return z.NEVER;
    }
    // A positive amount below half a nano-dollar would become 0: a limit or budget that allows nothing, a
    // price cap that lets only free models through, a grant of nothing. Said, not done silently.
    const roundedAway = nanos === 0n && Number(value) > 0;
    if (roundedAway || (options.positive && nanos === 0n)) {
      const message = !roundedAway ? 'must be greater than 0'
        : options.positive ? 'must be greater than 0 (it rounds to 0 at the nearest nano-dollar)'
          : 'must be 0 or at least 0.000000001 (it rounds to 0 at the nearest nano-dollar)';
      ctx.addIssue({ code: 'custom', message, input: value });
      return z.NEVER;
    }
    return nanos;
  };
  if (!options.text) return number.transform(toNanos);
  return z.union([number, z.string().regex(DECIMAL_TEXT, 'must be a number, or decimal text like "0.5"')], {
    error: (issue) => notANumber(issue.input, true),
  }).transform(toNanos);
}

/** The message for input that is not an amount at all; undefined (a missing field) keeps zod's "required". */
function notANumber(input: unknown, text: boolean): string | undefined {
  if (input === undefined) return undefined;
  if (typeof input === 'number') return 'must be a finite number';
  return text ? 'must be a number, or decimal text like "0.5"' : 'must be a number (USD)';
}
