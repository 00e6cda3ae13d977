import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { parseJsonBody, validate } from '../../lambdas/http/validation.js';
import { BadRequestError, PayloadTooLargeError } from '../../lambdas/http/errors.js';

const schema = z.strictObject({ name: z.string(), nested: z.object({ n: z.number().max(2) }).optional() });

describe('validation', () => {
  it('parses JSON bodies, refusing malformed ones and ones over the limit', () => {
    expect(parseJsonBody(Buffer.from('{"a":1}'), 100)).toEqual({ a: 1 });
    expect(parseJsonBody(undefined, 100)).toBeUndefined();
    expect(() => parseJsonBody(Buffer.from('{'), 100)).toThrow(BadRequestError);
    expect(() => parseJsonBody(Buffer.from('{"a":1}'), 3)).toThrow(PayloadTooLargeError);
  });

  it('names the failing field with its path', () => {
    expect(() => validate(schema, { name: 'x', nested: { n: 3 } }, 'body')).toThrow(/^Invalid body\.nested\.n: /);
    expect(() => validate(schema, { name: 1 }, 'body')).toThrow(/^Invalid body\.name: /);
    expect(() => validate(schema, { name: 'x', extra: true }, 'body')).toThrow('unknown field(s) "extra"');
    expect(() => validate(schema, undefined, 'body')).toThrow('Request body is required');
  });

  it('lists every issue in metadata', () => {
    try {
      validate(schema, { nested: { n: 'x' } }, 'body');
      throw new Error('expected a failure');
    } catch (err) {
      expect(err).toBeInstanceOf(BadRequestError);
      const issues = (err as BadRequestError).metadata?.issues as Array<{ path: string }>;
      expect(issues.map((issue) => issue.path).sort()).toEqual(['body.name', 'body.nested.n']);
      expect((err as Error).message).toContain('(and 1 more)');
    }
  });

  it('reports the reason inside record keys and unions, not a generic "Invalid input"', () => {
    const nested = z.object({
      metadata: z.record(z.string().max(3, 'keys are at most 3 characters'), z.string()),
      stop: z.union([z.string(), z.array(z.string()).max(2, 'at most 2 stop sequences')]),
    });
    expect(() => validate(nested, { metadata: { long: 'x' }, stop: 'a' }, 'body')).toThrow('Invalid body.metadata.long: invalid key: keys are at most 3 characters');
    expect(() => validate(nested, { metadata: {}, stop: ['a', 'b', 'c'] }, 'body')).toThrow('Invalid body.stop: at most 2 stop sequences');
  });

  it('returns typed data', () => {
    expect(validate(schema, { name: 'ok' }, 'body')).toEqual({ name: 'ok' });
  });
});
