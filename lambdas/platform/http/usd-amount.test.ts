import { describe, expect, it } from '@jest/globals';
import * as z from 'zod';
import { usdAmount } from './usd-amount.js';
import { validate } from './validation.js';

const body = z.strictObject({
  limit: usdAmount().nullable().optional(),
  amount: usdAmount({ positive: true }).optional(),
  price: usdAmount({ text: true }).optional(),
});

const parse = (input: unknown) => validate(body, input, 'body');

describe('usdAmount', () => {
  it('parses to nano-dollars, rounded to the nearest', () => {
    expect(parse({ limit: JSON.parse('0.000036750000000000004') as number })).toEqual({ limit: 36_750n });
    expect(parse({ limit: 0.0000000015, amount: 0.0000000005, price: '0.0000000025' })).toEqual({ limit: 2n, amount: 1n, price: 3n });
    expect(parse({ limit: -0 })).toEqual({ limit: 0n });
    expect(parse({ limit: 1e9, price: '1000000000' })).toEqual({ limit: 10n ** 18n, price: 10n ** 18n });
    expect(parse({ limit: null })).toEqual({ limit: null });
  });

  it('refuses with a 400 that names the field and the problem', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ limit: -1 }, 'Invalid body.limit: must not be negative'],
      [{ limit: -1e-10 }, 'Invalid body.limit: must not be negative'],
      [{ limit: Number.POSITIVE_INFINITY }, 'Invalid body.limit: must be a finite number'],
      [{ limit: Number.NaN }, 'Invalid body.limit: must be a finite number'],
      [{ limit: 1_000_000_000.5 }, 'Invalid body.limit: must be at most 1000000000 (USD)'],
      [{ limit: 1e300 }, 'Invalid body.limit: must be at most 1000000000 (USD)'],
      [{ limit: '5' }, 'Invalid body.limit: must be a number (USD)'],
      [{ limit: true }, 'Invalid body.limit: must be a number (USD)'],
      [{ amount: 0 }, 'Invalid body.amount: must be greater than 0'],
      [{ amount: 1e-10 }, 'Invalid body.amount: must be greater than 0 (it rounds to 0 at the nearest nano-dollar)'],
      // A positive limit or price that would round to 0 (allow nothing) is refused too; 0 itself is a limit.
      [{ limit: 4e-10 }, 'Invalid body.limit: must be 0 or at least 0.000000001 (it rounds to 0 at the nearest nano-dollar)'],
      [{ price: '0.0000000001' }, 'Invalid body.price: must be 0 or at least 0.000000001 (it rounds to 0 at the nearest nano-dollar)'],
      [{ amount: null }, 'Invalid body.amount: must be a number (USD)'],
      [{ price: 'cheap' }, 'Invalid body.price: must be a number, or decimal text like "0.5"'],
      [{ price: '-1' }, 'Invalid body.price: must be a number, or decimal text like "0.5"'],
      [{ price: Number.NEGATIVE_INFINITY }, 'Invalid body.price: must be a finite number'],
      [{ price: '1000000000.0000000005' }, 'Invalid body.price: must be at most 1000000000 (USD)'],
      [{ price: `1${'0'.repeat(40)}` }, 'Invalid body.price: must be at most 1000000000 (USD)'],
    ];
    for (const [input, message] of cases) expect(() => parse(input)).toThrow(message);
  });

  it('documents the bounds in the OpenAPI schema', () => {
    expect(z.toJSONSchema(usdAmount(), { io: 'input', unrepresentable: 'any' })).toMatchObject({ type: 'number', minimum: 0, maximum: 1_000_000_000 });
  });
});
