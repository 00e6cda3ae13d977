import { describe, expect, it } from '@jest/globals';
import { BadRequestError, HttpError, httpErrorOf, MethodNotAllowedError, ServiceUnavailableError, toErrorReply } from '../../lambdas/platform/http/errors.js';
import { ConflictError, InsufficientFundsError, UnavailableError, UpstreamError } from '../../lambdas/platform/errors.js';
import { Logger } from '../../lambdas/platform/logger.js';
import { InternalServerError, ProvisionedThroughputExceededException, TransactionInProgressException } from '@aws-sdk/client-dynamodb';

const quiet = new Logger(() => undefined);

describe('error envelope', () => {
  it('exposes client errors with their status, message and metadata', () => {
    const reply = toErrorReply(new BadRequestError('Invalid body.name: required', { metadata: { issues: [] } }), 'r1', quiet);
    expect(reply).toEqual({ status: 400, headers: {}, body: { error: { code: 400, message: 'Invalid body.name: required', metadata: { issues: [] } } } });
  });

  it('carries headers such as Allow', () => {
    expect(toErrorReply(new MethodNotAllowedError('PUT', ['GET']), 'r', quiet).headers).toEqual({ allow: 'GET' });
  });

  it('hides internals of unexpected errors and logs them with the request id', () => {
    const logs: string[] = [];
    const reply = toErrorReply(new TypeError('cannot read x of undefined at /srv/secret.js'), 'req-42', new Logger((line) => { logs.push(line); }));
    expect(reply.status).toBe(500);
    expect(reply.body.error).toEqual({ code: 500, message: 'Internal server error', metadata: { request_id: 'req-42' } });
    expect(logs).toHaveLength(1);
    expect(JSON.parse(logs[0]!)).toMatchObject({ level: 'error', request_id: 'req-42', error: { message: 'cannot read x of undefined at /srv/secret.js' } });
    expect(toErrorReply('a string', 'r', quiet).status).toBe(500);
  });

  it('answers a store that was busy or failing for a moment (after the SDK\'s retries) with a 503 and Retry-After, and logs what it said', () => {
    const $metadata = { httpStatusCode: 500 };
    const busy = [
      new InternalServerError({ message: 'The server encountered an internal error', $metadata }),
      new TransactionInProgressException({ message: 'Transaction is ongoing for the item', $metadata }),
      new ProvisionedThroughputExceededException({ message: 'Throughput exceeds the table\'s', $metadata }),
    ];
    for (const err of busy) {
      const logs: string[] = [];
      const reply = toErrorReply(err, 'req-7', new Logger((line) => { logs.push(line); }));
      expect(reply.status).toBe(503);
      expect(reply.headers).toEqual({ 'retry-after': '1' });
      expect(reply.body.error).toMatchObject({ code: 503, message: 'The gateway\'s database or key service is busy; try again shortly', metadata: { request_id: 'req-7' } });
      expect(JSON.parse(logs[0]!)).toMatchObject({ level: 'error', status: 503, cause: { name: err.name, message: err.message } });
    }
    // Not the SDK's (no $metadata): an error of ours with such a name is a bug, answered as one.
    const ours = Object.assign(new Error('throttled?'), { name: 'ThrottlingException' });
    expect(toErrorReply(ours, 'r', quiet).status).toBe(500);
  });

  it('keeps the chosen message of deliberate 5xx errors other than 500', () => {
    const reply = toErrorReply(new ServiceUnavailableError('Vault writes are disabled'), 'r', quiet);
    expect(reply.body.error).toMatchObject({ code: 503, message: 'Vault writes are disabled' });
    expect(toErrorReply(new HttpError(500, 'db password wrong'), 'r', quiet).body.error.message).toBe('Internal server error');
  });

  it('answers domain errors through the error map: status, Retry-After, metadata and envelope fields', () => {
    expect(toErrorReply(new ConflictError('busy', { metadata: { slug: 'a' } }), 'r', quiet))
      .toEqual({ status: 409, headers: {}, body: { error: { code: 409, message: 'busy', metadata: { slug: 'a' } } } });
    const refused = toErrorReply(new InsufficientFundsError('Insufficient credits', { reply: { service_metadata: { x: 1 } } }), 'r', quiet);
    expect(refused).toEqual({ status: 402, headers: {}, body: { error: { code: 402, message: 'Insufficient credits' }, service_metadata: { x: 1 } } });
    expect(toErrorReply(new UpstreamError('Provider p returned 429: slow down', { reason: 'status', upstreamStatus: 429, retryAfterSeconds: 3 }), 'r', quiet))
      .toMatchObject({ status: 429, headers: { 'retry-after': '3' } });
    expect(toErrorReply(new UpstreamError('Provider p returned 500', { reason: 'status', upstreamStatus: 500 }), 'r', quiet).status).toBe(502);
  });

  it('logs a 5xx domain error under its own name and throw site, with its cause', () => {
    const logs: string[] = [];
    const reply = toErrorReply(new UnavailableError('The vault is not configured', { cause: new Error('no KMS key id') }), 'r9', new Logger((line) => { logs.push(line); }));
    expect(reply.status).toBe(503);
    expect(reply.body.error.message).toBe('The vault is not configured');
    const logged = JSON.parse(logs[0]!);
    expect(logged.error.name).toBe('UnavailableError');
    expect(logged.error.stack).toContain('errors.test.ts');
    expect(logged.cause).toEqual({ name: 'Error', message: 'no KMS key id' });
  });

  it('gives the HTTP error of a 5xx the domain error\'s stack (its log reads it), and a 4xx none of its own', () => {
    const domain = new UnavailableError('down');
    const mapped = httpErrorOf(domain);
    expect(mapped.stack).toBe(domain.stack);
    expect(mapped.stack).toContain('errors.test.ts');
    mapped.stack = 'replaced';
    expect(mapped.stack).toBe('replaced');
    const refused = httpErrorOf(new ConflictError('busy'));
    expect(refused.status).toBe(409);
    expect(refused.stack).not.toContain('errors.test.ts');
  });

  it('caps what any envelope repeats, whatever built it', () => {
    const reply = toErrorReply(new BadRequestError(`Invalid thing: ${'v'.repeat(10_000)}`, { metadata: { raw: 'w'.repeat(10_000), list: Array.from({ length: 1000 }, (_, i) => i) } }), 'r', quiet);
    expect(reply.body.error.message.length).toBeLessThanOrEqual(513);
    expect(reply.body.error.message.endsWith('…')).toBe(true);
    expect((reply.body.error.metadata!.raw as string).length).toBeLessThanOrEqual(1025);
    expect(reply.body.error.metadata!.list).toHaveLength(20);
    expect(JSON.stringify(reply.body).length).toBeLessThan(2048);
  });
});
