import { describe, expect, it } from '@jest/globals';
import { createRouter } from '../../lambdas/platform/http/router.js';
import type { RouteDef } from '../../lambdas/platform/http/route.js';
import { routes, routesOf } from '../../lambdas/app/routes.js';
import { inferenceRoutes } from '../../lambdas/inference/routes.js';

const route = (operationId: string, method: RouteDef['method'], path: string, extra: Partial<RouteDef> = {}): RouteDef =>
  ({ operationId, method, path, fn: 'management', auth: 'none', tag: 't', summary: 's', ...extra });

const match = createRouter([
  route('list', 'GET', '/keys'),
  route('create', 'POST', '/keys'),
  route('get', 'GET', '/keys/{hash}'),
  route('settings', 'GET', '/organization/settings'),
  route('health', 'GET', '/health', { unversioned: true }),
  route('count', 'GET', '/models/count'),
  route('model', 'GET', '/models/{author}/{slug}'),
  route('endpoints', 'GET', '/models/{author}/{slug}/endpoints'),
]);

describe('router', () => {
  it('finds routes under /api/v1 and extracts decoded path parameters', () => {
    expect(match('GET', '/api/v1/keys')).toMatchObject({ kind: 'found', route: { operationId: 'list' } });
    expect(match('GET', '/api/v1/keys/a%20b')).toMatchObject({ kind: 'found', route: { operationId: 'get' }, params: { hash: 'a b' } });
    expect(match('GET', '/health')).toMatchObject({ kind: 'found', route: { operationId: 'health' } });
  });

  it('tells a wrong method (with the allowed ones) from an unknown path', () => {
    expect(match('DELETE', '/api/v1/keys')).toEqual({ kind: 'method-not-allowed', allowed: ['GET', 'HEAD', 'POST'] });
    expect(match('PUT', '/api/v1/organization/settings')).toEqual({ kind: 'method-not-allowed', allowed: ['GET', 'HEAD'] });
    expect(match('GET', '/api/v1/nope')).toEqual({ kind: 'not-found' });
    expect(match('GET', '/keys')).toEqual({ kind: 'not-found' });
    expect(match('GET', '/api/v1/keys/a/b')).toEqual({ kind: 'not-found' });
    expect(match('GET', '/api/v1/health')).toEqual({ kind: 'not-found' });
  });

  it('routes HEAD as GET, and nowhere GET does not go', () => {
    expect(match('HEAD', '/api/v1/keys/abc')).toEqual({ kind: 'found', route: expect.objectContaining({ operationId: 'get' }), params: { hash: 'abc' } });
    expect(match('HEAD', '/health')).toMatchObject({ kind: 'found', route: { operationId: 'health' } });
    expect(match('HEAD', '/api/v1/nope')).toEqual({ kind: 'not-found' });
    const postOnly = createRouter([route('make', 'POST', '/things')]);
    expect(postOnly('HEAD', '/api/v1/things')).toEqual({ kind: 'method-not-allowed', allowed: ['POST'] });
  });

  it('matches a parameter that is not valid percent-encoded UTF-8 to its route, naming it, instead of throwing', () => {
    expect(match('GET', '/api/v1/keys/%E0%A4%A')).toMatchObject({ kind: 'found', undecodable: 'hash', params: { hash: '%E0%A4%A' } });
    expect(match('GET', '/api/v1/keys/%ff')).toMatchObject({ kind: 'found', undecodable: 'hash' });
    expect(match('GET', '/api/v1/keys/abc')).not.toHaveProperty('undecodable');
  });

  it('reads an encoded slash as a separator, so that a model id in one segment reaches /models/{author}/{slug}', () => {
    expect(match('GET', '/api/v1/models/simulator%2Fecho')).toMatchObject({ kind: 'found', route: { operationId: 'model' }, params: { author: 'simulator', slug: 'echo' } });
    expect(match('GET', '/api/v1/models/simulator%2fecho/endpoints')).toMatchObject({ kind: 'found', route: { operationId: 'endpoints' }, params: { author: 'simulator', slug: 'echo' } });
    expect(match('GET', '/api/v1/models/simulator/echo')).toMatchObject({ kind: 'found', route: { operationId: 'model' }, params: { author: 'simulator', slug: 'echo' } });
    // Static routes keep winning; no other parameter ever holds a slash.
    expect(match('GET', '/api/v1/models/count')).toMatchObject({ kind: 'found', route: { operationId: 'count' } });
    expect(match('GET', '/api/v1/keys/a%2Fb')).toEqual({ kind: 'not-found' });
  });

  it('answers a path without parameters as the whole table would, in table order, with params of its own each time', () => {
    // A route with parameters listed before a static path of the same shape wins, as it always did.
    const ordered = createRouter([
      route('byName', 'GET', '/things/{name}'),
      route('special', 'GET', '/things/special'),
      route('make', 'POST', '/things/special'),
    ]);
    const first = ordered('GET', '/api/v1/things/special');
    expect(first).toEqual({ kind: 'found', route: expect.objectContaining({ operationId: 'byName' }), params: { name: 'special' } });
    expect(ordered('POST', '/api/v1/things/special')).toMatchObject({ kind: 'found', route: { operationId: 'make' }, params: {} });
    expect(ordered('DELETE', '/api/v1/things/special')).toEqual({ kind: 'method-not-allowed', allowed: ['GET', 'HEAD', 'POST'] });
    // A caller that changes its params changes nobody else's.
    (first as { params: Record<string, string> }).params.name = 'changed';
    expect(ordered('GET', '/api/v1/things/special')).toMatchObject({ params: { name: 'special' } });
    // The same path spelled with an empty segment or an encoded slash is matched the same.
    expect(ordered('POST', '/api/v1/things//special')).toMatchObject({ kind: 'found', route: { operationId: 'make' } });
    expect(ordered('POST', '/api/v1/things%2Fspecial')).toMatchObject({ kind: 'found', route: { operationId: 'make' } });
  });
});

describe('route table', () => {
  it('gives the inference function exactly the routes of inference/routes.ts, which its handler imports alone', () => {
    expect(routesOf('inference')).toEqual(inferenceRoutes.filter((route) => route.fn === 'inference'));
    expect(inferenceRoutes.every((route) => route.fn === 'inference')).toBe(true);
  });

  it('declares a pattern for every path parameter and none for parameters it does not have', () => {
    for (const entry of routes as readonly RouteDef[]) {
      const names = [...entry.path.matchAll(/\{([^}]+)\}/g)].map((found) => found[1]).sort();
      expect([entry.operationId, Object.keys(entry.params ?? {}).sort()]).toEqual([entry.operationId, names]);
      for (const rule of Object.values(entry.params ?? {})) {
        expect([entry.operationId, rule.pattern.source.startsWith('^'), rule.pattern.source.endsWith('$')]).toEqual([entry.operationId, true, true]);
      }
    }
  });
});
