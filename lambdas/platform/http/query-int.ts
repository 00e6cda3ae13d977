// A whole number in a query string (offset, limit …): decimal digits only. `z.coerce.number()` read what
// `Number()` reads, so `offset=0x10` was 16, `limit=1e2` was 100 and `offset=` was 0; each is now a 400
// naming the parameter. Documented as the integer it stands for (OpenAPI's query parameters are text).
import * as z from 'zod';

const DECIMAL_DIGITS = /^\d+$/;

export function queryInt(min: number, max?: number, documented: { description?: string } = {}) {
  const message = `must be a whole number ${max === undefined ? `of at least ${min}` : `from ${min} to ${max}`}, in decimal digits`;
  return z.string()
    .transform((text, ctx) => {
      if (DECIMAL_DIGITS.test(text)) return Number(text);
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    })
    .pipe(z.number().int().min(min).max(max ?? Number.MAX_SAFE_INTEGER))
    .meta({ type: 'integer', minimum: min, ...(max === undefined ? {} : { maximum: max }), ...documented });
}

/** A query integer that is `fallback` when absent. */
export function queryIntOr(min: number, max: number, fallback: number) {
  // Said in words: JSON Schema's `default` of a transformed string is left out of the documentation.
  return queryInt(min, max, { description: `default ${fallback}` }).default(fallback);
}
