import { describe, expect, it } from '@jest/globals';
import { createRouter } from '../../lambdas/http/router.js';
import type { RouteDef } from '../../lambdas/http/route.js';

const route = (operationId: string, method: RouteDef['method'], path: string, extra: Partial<RouteDef> = {}): RouteDef =>
  ({ operationId, method, path, fn: 'management', auth: 'none', tag: 't', summary: 's', ...extra });

const match = createRouter([
  route('list', 'GET', '/keys'),
  route('create', 'POST', '/keys'),
  route('get', 'GET', '/keys/{hash}'),
  route('settings', 'GET', '/organization/settings'),
  route('health', 'GET', '/health', { unversioned: true }),
]);

describe('router', () => {
  it('finds routes under /api/v1 and extracts decoded path parameters', () => {
    expect(match('GET', '/api/v1/keys')).toMatchObject({ kind: 'found', route: { operationId: 'list' } });
    expect(match('GET', '/api/v1/keys/a%20b')).toMatchObject({ kind: 'found', route: { operationId: 'get' }, params: { hash: 'a b' } });
    expect(match('GET', '/health')).toMatchObject({ kind: 'found', route: { operationId: 'health' } });
  });

  it('tells a wrong method (with the allowed ones) from an unknown path', () => {
    expect(match('DELETE', '/api/v1/keys')).toEqual({ kind: 'method-not-allowed', allowed: ['GET', 'POST'] });
    expect(match('GET', '/api/v1/nope')).toEqual({ kind: 'not-found' });
    expect(match('GET', '/keys')).toEqual({ kind: 'not-found' });
    expect(match('GET', '/api/v1/keys/a/b')).toEqual({ kind: 'not-found' });
    expect(match('GET', '/api/v1/health')).toEqual({ kind: 'not-found' });
  });

  it('treats undecodable parameters as no match instead of throwing', () => {
    expect(match('GET', '/api/v1/keys/%E0%A4%A')).toEqual({ kind: 'not-found' });
  });
});
