import { describe, expect, it } from '@jest/globals';
import { PRICE_TABLE, REGION_FALLBACKS, priceToAttoUsd, pricesFor, type PriceField, type RegionPrices } from './aws-prices.js';

const REQUIRED_REGIONS = ['us-east-1', 'us-east-2', 'us-west-2', 'eu-west-1', 'eu-central-1', 'ap-southeast-1', 'ap-northeast-1'];

const field = (prices: RegionPrices, name: PriceField): string => {
  switch (name) {
    case 'lambdaGbSecond.arm64':
      return prices.lambdaGbSecond.arm64;
    case 'lambdaGbSecond.x86_64':
      return prices.lambdaGbSecond.x86_64;
    default:
      return prices[name];
  }
};

const PRICE_FIELDS: PriceField[] = [
  'lambdaGbSecond.arm64',
  'lambdaGbSecond.x86_64',
  'lambdaRequest',
  'lambdaStreamingGb',
  'dynamodbWriteRequestUnit',
  'dynamodbReadRequestUnit',
  'kmsRequest',
];

describe('priceToAttoUsd', () => {
  it('converts published decimals exactly', () => {
    expect(priceToAttoUsd('0')).toBe(0n);
    expect(priceToAttoUsd('1')).toBe(1_000_000_000_000_000_000n);
    expect(priceToAttoUsd('0.0000002')).toBe(200_000_000_000n);
    expect(priceToAttoUsd('12.5')).toBe(12_500_000_000_000_000_000n);
    expect(priceToAttoUsd('0.0000133334')).toBe(13_333_400_000_000n);
    expect(priceToAttoUsd('0.0000166667')).toBe(16_666_700_000_000n);
    expect(priceToAttoUsd('0.000000625')).toBe(625_000_000_000n);
    expect(priceToAttoUsd('0.0000001415')).toBe(141_500_000_000n);
    expect(priceToAttoUsd('0.000003')).toBe(3_000_000_000_000n);
    expect(priceToAttoUsd('0.000000000000000001')).toBe(1n);
    expect(priceToAttoUsd('0.10')).toBe(priceToAttoUsd('0.1'));
  });

  it('rejects anything that is not a plain non-negative decimal', () => {
    for (const bad of ['1e-7', '-1', '', '0.1.2', '.5', '1.', '+1', ' 1', '1 ', '01', '0x10', 'NaN', '1,5', '0.0000000000000000001']) {
      expect(() => priceToAttoUsd(bad)).toThrow();
    }
  });
});

describe('PRICE_TABLE', () => {
  it('is versioned and dated', () => {
    expect(PRICE_TABLE.version).toMatch(/^\d{4}-\d{2}-\d{2}\.\d+$/);
    expect(PRICE_TABLE.sourceDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(PRICE_TABLE.version.startsWith(PRICE_TABLE.sourceDate)).toBe(true);
  });

  it('covers the required regions, each keyed by its own name', () => {
    for (const region of REQUIRED_REGIONS) expect(PRICE_TABLE.regions[region]?.region).toBe(region);
    for (const [key, prices] of Object.entries(PRICE_TABLE.regions)) expect(prices.region).toBe(key);
  });

  it('has every field of every region present and parseable', () => {
    for (const prices of Object.values(PRICE_TABLE.regions)) {
      for (const name of PRICE_FIELDS) expect(priceToAttoUsd(field(prices, name))).toBeGreaterThan(0n);
      expect(Number.isSafeInteger(prices.lambdaStreamingFreeBytes)).toBe(true);
      expect(prices.lambdaStreamingFreeBytes).toBeGreaterThan(0);
      expect(typeof prices.initBilled).toBe('boolean');
      expect(prices.sources.length).toBeGreaterThan(0);
      for (const source of prices.sources) expect(source.length).toBeGreaterThan(0);
    }
  });

  it('prices arm64 compute below x86_64 in every region', () => {
    for (const prices of Object.values(PRICE_TABLE.regions)) {
      expect(priceToAttoUsd(prices.lambdaGbSecond.arm64)).toBeLessThan(priceToAttoUsd(prices.lambdaGbSecond.x86_64));
    }
  });

  it('lists fallbacks that really are the us-east-1 figures, and says so in the sources', () => {
    const base = PRICE_TABLE.regions['us-east-1'];
    if (!base) throw new Error('no us-east-1');
    expect(Object.keys(REGION_FALLBACKS).sort()).toEqual(Object.keys(PRICE_TABLE.regions).sort());
    for (const [region, fields] of Object.entries(REGION_FALLBACKS)) {
      const prices = PRICE_TABLE.regions[region];
      if (!prices) throw new Error(`no ${region}`);
      for (const name of fields) expect(field(prices, name)).toBe(field(base, name));
      const flagged = prices.sources.some((source) => source.startsWith('fallback:'));
      expect(flagged).toBe(fields.length > 0);
    }
  });

  it('cannot be modified at run time', () => {
    const prices = PRICE_TABLE.regions['us-east-1'];
    expect(Object.isFrozen(PRICE_TABLE)).toBe(true);
    expect(Object.isFrozen(prices)).toBe(true);
    expect(Object.isFrozen(prices?.lambdaGbSecond)).toBe(true);
    expect(Object.isFrozen(prices?.sources)).toBe(true);
  });
});

describe('pricesFor', () => {
  it('returns a known region as is', () => {
    const { prices, fallback } = pricesFor('eu-central-1');
    expect(fallback).toBe(false);
    expect(prices.region).toBe('eu-central-1');
  });

  it('falls back to us-east-1 for local and unknown regions', () => {
    for (const region of ['local', 'mars-north-1', '', 'constructor', '__proto__', 'toString']) {
      const { prices, fallback } = pricesFor(region);
      expect(fallback).toBe(true);
      expect(prices.region).toBe('us-east-1');
    }
  });
});
