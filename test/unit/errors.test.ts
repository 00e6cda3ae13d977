import { describe, expect, it } from '@jest/globals';
import { BadRequestError, HttpError, MethodNotAllowedError, ServiceUnavailableError, toErrorReply } from '../../lambdas/platform/http/errors.js';

describe('error envelope', () => {
  it('exposes client errors with their status, message and metadata', () => {
    const reply = toErrorReply(new BadRequestError('Invalid body.name: required', { metadata: { issues: [] } }), 'r1', () => undefined);
    expect(reply).toEqual({ status: 400, headers: {}, body: { error: { code: 400, message: 'Invalid body.name: required', metadata: { issues: [] } } } });
  });

  it('carries headers such as Allow', () => {
    expect(toErrorReply(new MethodNotAllowedError('PUT', ['GET']), 'r', () => undefined).headers).toEqual({ allow: 'GET' });
  });

  it('hides internals of unexpected errors and logs them with the request id', () => {
    const logs: string[] = [];
    const reply = toErrorReply(new TypeError('cannot read x of undefined at /srv/secret.js'), 'req-42', (line) => logs.push(line));
    expect(reply.status).toBe(500);
    expect(reply.body.error).toEqual({ code: 500, message: 'Internal server error', metadata: { request_id: 'req-42' } });
    expect(logs).toHaveLength(1);
    expect(JSON.parse(logs[0]!)).toMatchObject({ level: 'error', request_id: 'req-42', error: { message: 'cannot read x of undefined at /srv/secret.js' } });
    expect(toErrorReply('a string', 'r', () => undefined).status).toBe(500);
  });

  it('keeps the chosen message of deliberate 5xx errors other than 500', () => {
    const reply = toErrorReply(new ServiceUnavailableError('Vault writes are disabled'), 'r', () => undefined);
    expect(reply.body.error).toMatchObject({ code: 503, message: 'Vault writes are disabled' });
    expect(toErrorReply(new HttpError(500, 'db password wrong'), 'r', () => undefined).body.error.message).toBe('Internal server error');
  });

  it('caps what any envelope repeats, whatever built it', () => {
    const reply = toErrorReply(new BadRequestError(`Invalid thing: ${'v'.repeat(10_000)}`, { metadata: { raw: 'w'.repeat(10_000), list: Array.from({ length: 1000 }, (_, i) => i) } }), 'r', () => undefined);
    expect(reply.body.error.message.length).toBeLessThanOrEqual(513);
    expect(reply.body.error.message.endsWith('…')).toBe(true);
    expect((reply.body.error.metadata!.raw as string).length).toBeLessThanOrEqual(1025);
    expect(reply.body.error.metadata!.list).toHaveLength(20);
    expect(JSON.stringify(reply.body).length).toBeLessThan(2048);
  });
});
