// Money is integer nano-dollars (1e-9 USD) held in bigint: exact for per-token prices and for balances
// up to billions of dollars. Conversion to and from JSON numbers happens only at the edges, via decimal text.
export type Nanos = bigint;

const SCALE_DIGITS = 9;
const SCALE = 10n ** BigInt(SCALE_DIGITS);
const DECIMAL = /^([+-]?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

export class MoneyFormatError extends Error {}

/** Parses a USD amount given as a JSON number or decimal text, exactly. More than 9 decimals is an error, never rounded. */
export function usdToNanos(value: number | string): Nanos {
  const text = typeof value === 'number' ? numberToText(value) : value.trim();
  const match = DECIMAL.exec(text);
  if (!match) throw new MoneyFormatError(`not a decimal amount: ${text}`);
  const [, sign, whole = '0', fraction = '', exponentText] = match;
  const exponent = exponentText ? Number(exponentText) : 0;
  let digits = whole + fraction;
  let scale = fraction.length - exponent; // value = digits * 10^-scale
  if (scale < 0) {
    digits += '0'.repeat(-scale);
    scale = 0;
  }
  if (scale > SCALE_DIGITS) {
    const dropped = digits.slice(digits.length - (scale - SCALE_DIGITS));
    if (/[1-9]/.test(dropped)) throw new MoneyFormatError(`amount has more than ${SCALE_DIGITS} decimal places: ${text}`);
    digits = digits.slice(0, digits.length - (scale - SCALE_DIGITS)) || '0';
    scale = SCALE_DIGITS;
  }
  const nanos = BigInt(digits) * 10n ** BigInt(SCALE_DIGITS - scale);
  return sign === '-' ? -nanos : nanos;
}

function numberToText(value: number): string {
  if (!Number.isFinite(value)) throw new MoneyFormatError(`not a finite amount: ${value}`);
  return String(value);
}

/** Exact decimal text of an integer count of 10^-digits units, without trailing zeros ("12.5", "0.000000003"). */
export function fixedToDecimal(value: bigint, digits: number): string {
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const scale = 10n ** BigInt(digits);
  const fraction = (abs % scale).toString().padStart(digits, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${abs / scale}${fraction ? `.${fraction}` : ''}`;
}

/** Exact decimal text of an amount, without trailing zeros ("12.5", "0.000000003"). */
export function nanosToDecimal(nanos: Nanos): string {
  return fixedToDecimal(nanos, SCALE_DIGITS);
}

/** The JSON number for an amount: the double nearest to its exact decimal value. */
export function nanosToUsd(nanos: Nanos): number {
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
