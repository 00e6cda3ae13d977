import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { parseJsonBody, validate } from '../../lambdas/platform/http/validation.js';
import { BadRequestError, PayloadTooLargeError } from '../../lambdas/platform/http/errors.js';

const schema = z.strictObject({ name: z.string(), nested: z.object({ n: z.number().max(2) }).optional() });

describe('validation', () => {
  it('parses JSON bodies, refusing malformed ones and ones over the limit', () => {
    expect(parseJsonBody(Buffer.from('{"a":1}'), 100)).toEqual({ a: 1 });
    expect(parseJsonBody(undefined, 100)).toBeUndefined();
    expect(() => parseJsonBody(Buffer.from('{'), 100)).toThrow(BadRequestError);
    expect(() => parseJsonBody(Buffer.from('{"a":1}'), 3)).toThrow(PayloadTooLargeError);
  });

  it('ignores a UTF-8 byte order mark before the JSON text (RFC 8259 allows it), and only there', () => {
    expect(parseJsonBody(Buffer.from('\ufeff{"a":"é"}'), 100)).toEqual({ a: 'é' });
    expect(() => parseJsonBody(Buffer.from(' \ufeff{"a":1}'), 100)).toThrow(BadRequestError);
    expect(() => parseJsonBody(Buffer.from('\ufeff'), 100)).toThrow(BadRequestError);
  });

  it('refuses bodies that would not be kept as given: bytes that are not UTF-8, keys named __proto__, unpaired surrogates', () => {
    expect(() => parseJsonBody(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), 100)).toThrow('Request body is not valid UTF-8');
    expect(() => parseJsonBody(Buffer.from('{"metadata":{"__proto__":"x"}}'), 100)).toThrow('body.metadata has a key named "__proto__", which is not accepted');
    // The key spelled with escapes parses to the same key.
    expect(() => parseJsonBody(Buffer.from('{"metadata":{"\\u005f_proto__":"x"}}'), 100)).toThrow('body.metadata has a key named "__proto__", which is not accepted');
    expect(() => parseJsonBody(Buffer.from('{"metadata":{"__pr\\u006fto__":"x"}}'), 100)).toThrow('body.metadata has a key named "__proto__", which is not accepted');
    expect(() => parseJsonBody(Buffer.from('{"value":["ok","\\ud800x"]}'), 100)).toThrow('body.value.1 contains an unpaired UTF-16 surrogate');
    expect(() => parseJsonBody(Buffer.from('{"\\udc00":1}'), 100)).toThrow('body has a key with an unpaired UTF-16 surrogate');
    // Paired surrogates (an emoji escaped, as Python's json sends it), the text "__proto__" as a value, and
    // UTF-8 text are kept.
    expect(parseJsonBody(Buffer.from('{"a":"\\ud83d\\ude00","b":"__proto__","c":"caf\u00e9"}'), 100)).toEqual({ a: '😀', b: '__proto__', c: 'café' });
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

  it('says what a union field may be, and which item of a list of kinds went wrong where (Responses input)', async () => {
    const { responsesRequestSchema } = await import('../../lambdas/inference/formats/responses-schema.js');
    const message = (body: unknown) => {
      try {
        validate(responsesRequestSchema, body, 'body');
        return 'valid';
      } catch (err) {
        return (err as Error).message;
      }
    };
    expect(message({ model: 'm' })).toBe('Invalid body.input: required (string or array)');
    expect(message({ model: 'm', input: 5 })).toBe('Invalid body.input: expected string or array, received number');
    expect(message({ model: 'm', input: [5] })).toBe('Invalid body.input.0: expected object, received number');
    // A message item missing its role is a message with a problem, not a function call of the wrong type.
    expect(message({ model: 'm', input: [{ type: 'message' }] })).toMatch(/^Invalid body\.input\.0\.role: /);
    expect(message({ model: 'm', input: [{ role: 'user', content: 5 }] })).toBe('Invalid body.input.0.content: expected string or array, received number');
    // Deep in a part of a kind of its own: the part's field, not the type another kind of part would have.
    expect(message({ model: 'm', input: [{ role: 'assistant', content: [{ type: 'output_text', text: 5 }] }] })).toMatch(/^Invalid body\.input\.0\.content\.0\.text: /);
  });

  it('echoes at most a short piece of each field name, names at most five unknown fields and lists at most ten issues', () => {
    const long = 'k'.repeat(10_000);
    expect(() => validate(schema, { name: 'x', [long]: 1 }, 'body')).toThrow(`unknown field(s) "${'k'.repeat(64)}…"`);
    const many = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`extra_${i}`, i]));
    expect(() => validate(schema, { name: 'x', ...many }, 'body')).toThrow(/"extra_4" and 45 more$/);
    const records = z.record(z.string(), z.number());
    try {
      validate(records, Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`${'r'.repeat(500)}${i}`, 'not a number'])), 'body');
      throw new Error('expected a failure');
    } catch (err) {
      const metadata = (err as BadRequestError).metadata as { issues: Array<{ path: string }>; issue_count: number };
      expect(metadata.issues).toHaveLength(10);
      expect(metadata.issue_count).toBe(100);
      expect(metadata.issues[0]!.path).toBe(`body.${'r'.repeat(64)}…`);
      expect((err as Error).message.length).toBeLessThan(200);
    }
  });

  it('returns typed data', () => {
    expect(validate(schema, { name: 'ok' }, 'body')).toEqual({ name: 'ok' });
  });
});
