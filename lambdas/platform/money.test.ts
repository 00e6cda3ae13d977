import { describe, expect, it } from '@jest/globals';
import { fixedToDecimal, MoneyFormatError, nanosFromStore, nanosToDecimal, nanosToStore, nanosToUsd, roundUsdToNanos, usdToNanos } from './money.js';

describe('money', () => {
  it('parses JSON numbers and decimal text exactly', () => {
    expect(usdToNanos(0.1)).toBe(100_000_000n);
    expect(usdToNanos(10.5)).toBe(10_500_000_000n);
    expect(usdToNanos('0.000000003')).toBe(3n);
    expect(usdToNanos(1e-7)).toBe(100n);
    expect(usdToNanos('1.5e3')).toBe(1_500_000_000_000n);
    expect(usdToNanos(-2)).toBe(-2_000_000_000n);
  });

  it('refuses more than nine decimals instead of rounding', () => {
    expect(() => usdToNanos('0.0000000001')).toThrow(MoneyFormatError);
    expect(() => usdToNanos(Number.NaN)).toThrow(MoneyFormatError);
    expect(() => usdToNanos('ten')).toThrow(MoneyFormatError);
    expect(usdToNanos('1.1000000000')).toBe(1_100_000_000n);
  });

  it('refuses absurd exponents before building their digits', () => {
    expect(() => usdToNanos('1e999999999')).toThrow('amount too large');
    expect(() => roundUsdToNanos('1e999999999')).toThrow('amount too large');
    expect(() => roundUsdToNanos(1e300)).toThrow('amount too large');
    expect(roundUsdToNanos('1e-999999999')).toBe(0n);
  });

  it('sums without binary float drift', () => {
    const total = [0.1, 0.2].map((value) => usdToNanos(value)).reduce((a, b) => a + b, 0n);
    expect(nanosToDecimal(total)).toBe('0.3');
    expect(nanosToUsd(total)).toBe(0.3);
  });

  it('round-trips stored values, including beyond the safe integer range', () => {
    const big = 10n ** 18n;
    expect(nanosToStore(big)).toBe(big);
    expect(nanosFromStore(nanosToStore(big))).toBe(big);
    expect(nanosToStore(5n)).toBe(5);
    expect(nanosFromStore(5)).toBe(5n);
    expect(() => nanosFromStore(1.5)).toThrow(MoneyFormatError);
    expect(nanosToDecimal(-1_500_000_000n)).toBe('-1.5');
  });

  describe('amounts from clients, to the nearest nano-dollar', () => {
    it('takes the issue\'s amount, and real float products, to the amount the client meant', () => {
      // JSON.parse reads the issue's text as the double whose shortest text is 0.000036750000000000006.
      const issue = JSON.parse('0.000036750000000000004') as number;
      expect(() => usdToNanos(issue)).toThrow(MoneyFormatError);
      expect(roundUsdToNanos(issue)).toBe(36_750n);
      expect(roundUsdToNanos('0.000036750000000000004')).toBe(36_750n);
      expect(nanosToUsd(roundUsdToNanos(issue))).toBe(0.00003675);
      const product = 3.5 * 0.00000105;
      expect(String(product)).toBe('0.0000036749999999999995');
      expect(roundUsdToNanos(product)).toBe(3_675n);
      expect(roundUsdToNanos(0.1 + 0.2)).toBe(300_000_000n);
    });

    it('rounds ties half away from zero, on the decimal text of the number', () => {
      expect(roundUsdToNanos(0.0000000015)).toBe(2n);
      expect(roundUsdToNanos(0.0000000025)).toBe(3n);
      expect(roundUsdToNanos(0.0000000005)).toBe(1n);
      expect(roundUsdToNanos(0.00000000049999)).toBe(0n);
      expect(roundUsdToNanos(-0.0000000025)).toBe(-3n);
      // The double nearest 1.0000000015 lies just below it, but its text is the tie the client wrote.
      expect(roundUsdToNanos(1.0000000015)).toBe(1_000_000_002n);
    });

    it('takes amounts below half a nano-dollar to 0, and negative zero to 0', () => {
      expect(roundUsdToNanos(1e-10)).toBe(0n);
      expect(roundUsdToNanos(4e-10)).toBe(0n);
      expect(roundUsdToNanos(Number.MIN_VALUE)).toBe(0n);
      expect(roundUsdToNanos(-0)).toBe(0n);
      expect(roundUsdToNanos('-0.0000000001')).toBe(0n);
    });

    it('reads exponents and large amounts exactly', () => {
      expect(roundUsdToNanos(1.5e-7)).toBe(150n);
      expect(roundUsdToNanos(1e21)).toBe(10n ** 30n);
      expect(roundUsdToNanos('2.5E+3')).toBe(2_500_000_000_000n);
      expect(roundUsdToNanos(1e9)).toBe(10n ** 18n);
      expect(roundUsdToNanos(123456789.12345679)).toBe(123_456_789_123_456_790n);
      expect(roundUsdToNanos(-2)).toBe(-2_000_000_000n);
    });

    it('rounds decimal text the same way as numbers', () => {
      expect(roundUsdToNanos('0.000036750000000000004')).toBe(36_750n);
      expect(roundUsdToNanos(' 0.0000000015 ')).toBe(2n);
      expect(roundUsdToNanos('0.00000000149999999999')).toBe(1n);
    });

    it('refuses what is not a finite decimal amount', () => {
      expect(() => roundUsdToNanos(Number.NaN)).toThrow(MoneyFormatError);
      expect(() => roundUsdToNanos(Number.POSITIVE_INFINITY)).toThrow(MoneyFormatError);
      expect(() => roundUsdToNanos('ten')).toThrow(MoneyFormatError);
      expect(() => roundUsdToNanos('')).toThrow(MoneyFormatError);
    });
  });

  it('writes amounts below 2^53 with double arithmetic exactly as the BigInt path does, and beyond with BigInt', () => {
    const edges = [0n, 1n, -1n, 999_999_999n, 1_000_000_000n, 1_000_000_001n, 8_999_999_999_999_999n, 9_007_199_254_740_991n, -9_007_199_254_740_991n, 9_007_199_254_740_992n, -9_007_199_254_740_993n, 123_456_789_012_345_678_901n];
    let seed = 7;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648);
    const samples = [...edges];
    for (let i = 0; i < 20_000; i += 1) {
      const digits = 1 + (next() % 16);
      let value = 0n;
      for (let d = 0; d < digits; d += 1) value = value * 10n + BigInt(next() % 10);
      samples.push(next() % 5 === 0 ? -value : value);
    }
    for (const nanos of samples) {
      const exact = fixedToDecimal(nanos, 9);
      expect(nanosToDecimal(nanos)).toBe(exact);
      expect(nanosToUsd(nanos)).toBe(Number(exact));
    }
  });
});
