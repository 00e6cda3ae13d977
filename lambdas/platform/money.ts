// Money is integer nano-dollars (1e-9 USD) held in bigint: exact for per-token prices and for balances
// up to billions of dollars. Conversion to and from JSON numbers happens only at the edges, via decimal text.
export type Nanos = bigint;

const SCALE_DIGITS = 9;
const DECIMAL = /^([+-]?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

export class MoneyFormatError extends Error {}

/** Parses a USD amount given as a JSON number or decimal text, exactly. More than 9 decimals is an error, never
 *  rounded: for operator configuration (catalog prices, initial credits), where extra digits are a typo to fix. */
export function usdToNanos(value: number | string): Nanos {
  const { negative, digits, scale, text } = parseDecimal(value);
  if (scale <= SCALE_DIGITS) return signed(negative, BigInt(digits) * 10n ** BigInt(SCALE_DIGITS - scale));
  const cut = scale - SCALE_DIGITS;
  if (/[1-9]/.test(digits.slice(-cut))) throw new MoneyFormatError(`amount has more than ${SCALE_DIGITS} decimal places: ${text}`);
  return signed(negative, BigInt(digits.slice(0, -cut) || '0'));
}

/**
 * A USD amount from a client, taken to the nearest nano-dollar. Clients compute amounts in binary floats, so
 * 0.1 + 0.2 arrives as 0.30000000000000004 and 3.5 × 0.00000105 as 0.0000036749999999999995, meaning $0.3 and
 * $0.000003675: refusing them would refuse every JavaScript client. The decimal text of the number is rounded (the shortest text that reads back as the same
 * double, as JSON carries it), not its binary value, so what the client printed is what counts. A tie rounds
 * half away from zero (0.0000000015 → 2 nano-dollars, 0.0000000025 → 3), as a person rounds by hand; its bias
 * does not matter, since each amount is rounded once on the way in, never in sums. Decimal text rounds the
 * same way: the same amount must not be accepted as a number and refused as text.
 */
export function roundUsdToNanos(value: number | string): Nanos {
  const { negative, digits, scale } = parseDecimal(value);
  if (scale <= SCALE_DIGITS) return signed(negative, BigInt(digits) * 10n ** BigInt(SCALE_DIGITS - scale));
  const cut = scale - SCALE_DIGITS;
  const kept = BigInt(digits.slice(0, -cut) || '0');
  // The first dropped digit decides: 5 or more is at least half a nano-dollar.
  const firstDropped = cut > digits.length ? 0 : Number(digits[digits.length - cut]);
  return signed(negative, firstDropped >= 5 ? kept + 1n : kept);
}

/** Far beyond any amount, and small enough that "1e999999999" cannot make a billion-digit string. */
const MAX_INTEGER_DIGITS = 30;

/** value = (negative ? -1 : 1) × digits × 10^-scale, digits without leading zeros (possibly empty for 0). */
function parseDecimal(value: number | string): { negative: boolean; digits: string; scale: number; text: string } {
  if (typeof value === 'number' && !Number.isFinite(value)) throw new MoneyFormatError(`not a finite amount: ${value}`);
  const text = typeof value === 'number' ? String(value) : value.trim();
  const match = DECIMAL.exec(text);
  if (!match) throw new MoneyFormatError(`not a decimal amount: ${text}`);
  const [, sign, whole = '0', fraction = '', exponentText] = match;
  let digits = (whole + fraction).replace(/^0+/, '');
  let scale = fraction.length - (exponentText ? Number(exponentText) : 0);
  if (digits.length - scale > MAX_INTEGER_DIGITS) throw new MoneyFormatError(`amount too large: ${text}`);
  if (scale < 0) {
    digits += '0'.repeat(-scale);
    scale = 0;
  }
  return { negative: sign === '-', digits, scale, text };
}

const signed = (negative: boolean, nanos: Nanos): Nanos => (negative ? -nanos : nanos);

/** Exact decimal text of an integer count of 10^-digits units, without trailing zeros ("12.5", "0.000000003"). */
export function fixedToDecimal(value: bigint, digits: number): string {
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const scale = 10n ** BigInt(digits);
  const fraction = (abs % scale).toString().padStart(digits, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${abs / scale}${fraction ? `.${fraction}` : ''}`;
}

const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER);
const NANOS_PER_USD = 10 ** SCALE_DIGITS;

/** Exact decimal text of an amount, without trailing zeros ("12.5", "0.000000003"). */
export function nanosToDecimal(nanos: Nanos): string {
  if (nanos > SAFE_MAX || nanos < -SAFE_MAX) return fixedToDecimal(nanos, SCALE_DIGITS);
  // Below 2^53 the amount is an exact double, and so are its remainder and whole part: no BigInt work.
  const value = Number(nanos);
  const abs = Math.abs(value);
  const fraction = abs % NANOS_PER_USD;
  const whole = (abs - fraction) / NANOS_PER_USD;
  const digits = fraction === 0 ? '' : `.${String(fraction).padStart(SCALE_DIGITS, '0').replace(/0+$/, '')}`;
  return `${value < 0 ? '-' : ''}${whole}${digits}`;
}

/** The JSON number for an amount: the double nearest to its exact decimal value. */
export function nanosToUsd(nanos: Nanos): number {
  // Below 2^53 both operands are exact doubles and IEEE division rounds the exact quotient to the nearest
  // double: the same number as parsing the exact decimal text.
  if (nanos <= SAFE_MAX && nanos >= -SAFE_MAX) return Number(nanos) / NANOS_PER_USD;
  return Number(nanosToDecimal(nanos));
}

/** DynamoDB returns numbers as number, or bigint beyond the safe range; both come back here exactly. */
export function nanosFromStore(value: unknown): Nanos {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  if (value === undefined || value === null) return 0n;
  throw new MoneyFormatError(`stored amount is not an integer: ${String(value)}`);
}

/** Stored as a plain number while safe, as bigint (still an exact DynamoDB N) beyond. */
export function nanosToStore(nanos: Nanos): number | bigint {
  return nanos <= BigInt(Number.MAX_SAFE_INTEGER) && nanos >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(nanos) : nanos;
}
