import { describe, expect, it } from '@jest/globals';
import { MoneyFormatError, nanosFromStore, nanosToDecimal, nanosToStore, nanosToUsd, usdToNanos } from './money.js';

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
});
