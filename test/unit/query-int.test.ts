// Whole numbers in query strings: decimal digits only, within their range, each refusal naming the parameter.
import { describe, expect, it } from '@jest/globals';
import * as z from 'zod';
import { queryInt, queryIntOr } from '../../lambdas/platform/http/query-int.js';
import { validate } from '../../lambdas/platform/http/validation.js';
import { HttpError } from '../../lambdas/platform/http/errors.js';

const query = z.strictObject({ offset: queryInt(0, 1000).optional(), limit: queryIntOr(1, 100, 20) });

function refusal(input: Record<string, string>): { status: number; message: string } {
  try {
    validate(query, input, 'query');
  } catch (err) {
    if (!(err instanceof HttpError)) throw err;
    return { status: err.status, message: err.message };
  }
  throw new Error(`${JSON.stringify(input)} was taken`);
}

describe('query integers', () => {
  it('reads decimal digits, and applies the default when absent', () => {
    expect(validate(query, {}, 'query')).toEqual({ limit: 20 });
    expect(validate(query, { offset: '0', limit: '100' }, 'query')).toEqual({ offset: 0, limit: 100 });
    expect(validate(query, { offset: '007' }, 'query')).toEqual({ offset: 7, limit: 20 });
  });

  it.each(['0x10', '1e2', '', ' 5', '5 ', '-1', '+3', '2.0', '1_000', 'Infinity'])('refuses offset=%j with a 400 naming it', (text) => {
    const { status, message } = refusal({ offset: text });
    expect(status).toBe(400);
    expect(message).toMatch(/offset/);
    expect(message).toMatch(/must be a whole number from 0 to 1000, in decimal digits/);
  });

  it('refuses numbers out of range', () => {
    expect(refusal({ offset: '1001' })).toMatchObject({ status: 400, message: expect.stringMatching(/offset/) });
    expect(refusal({ limit: '0' })).toMatchObject({ status: 400, message: expect.stringMatching(/limit/) });
    expect(refusal({ offset: '99999999999999999999' })).toMatchObject({ status: 400 });
  });

  it('is documented as the integer it stands for', () => {
    const json = z.toJSONSchema(query, { io: 'input', unrepresentable: 'any' }) as { properties: Record<string, unknown> };
    expect(json.properties.offset).toEqual({ type: 'integer', minimum: 0, maximum: 1000 });
    expect(json.properties.limit).toEqual({ type: 'integer', minimum: 1, maximum: 100, description: 'default 20' });
  });
});
