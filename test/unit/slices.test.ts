// The feature slices' shared seams: the route's error flavour honoured by dispatch, path parameters checked
// before the operation, the one credit-grant constructor, the catalog-derived ports, and the route list as
// the concatenation of the features' routes.
import { describe, expect, it } from '@jest/globals';
import { dispatch, type DispatchDeps } from '../../lambdas/platform/http/dispatch.js';
import { createRouter } from '../../lambdas/platform/http/router.js';
import type { RouteDef } from '../../lambdas/platform/http/route.js';
import type { GatewayRequest } from '../../lambdas/platform/http/request.js';
import { uuidParam } from '../../lambdas/platform/http/path-params.js';
import { ConflictError } from '../../lambdas/platform/errors.js';
import { CORS_ALLOWED_HEADERS } from '../../lambdas/platform/http/cors.js';
import { newCreditGrant } from '../../lambdas/credits/index.js';
import { byokProviders, providerNames, type Catalog } from '../../lambdas/catalog/index.js';
import { routes } from '../../lambdas/app/routes.js';
import { keyRoutes } from '../../lambdas/keys/index.js';
import { internRoutes } from '../../lambdas/interns/index.js';
import { vaultRoutes } from '../../lambdas/vault/index.js';
import { Logger } from '../../lambdas/platform/logger.js';

// Every route here needs no key: the authenticator answers as it does for auth 'none'.
const deps: DispatchDeps = {
  authenticate: async () => null,
  log: new Logger(() => undefined),
};

const request = (method: string, path: string): GatewayRequest => ({
  method, path, headers: {}, query: {}, body: undefined, requestId: 'r-1', sourceIp: '', host: 'localhost',
});

const route = (operationId: string, path: string, extra: Partial<RouteDef> = {}): RouteDef =>
  ({ operationId, method: 'POST', path, fn: 'management', auth: 'none', tag: 'T', summary: 's', ...extra });

describe('dispatch and the route declaration', () => {
  const list = [
    route('lifecycle', '/a', { errorMetadata: 'lifecycle' }),
    route('plain', '/b'),
    route('withId', '/c/{id}', { params: { id: uuidParam('a thing id') } }),
  ];
  const match = createRouter(list);
  const conflict = async () => { throw new ConflictError('busy', { metadata: { detail: 'x' } }); };
  let called = 0;
  const operations = { lifecycle: conflict, plain: conflict, withId: async () => { called += 1; return { body: {} }; } };

  it('adds the lifecycle metadata only on routes that declare it', async () => {
    const lifecycle = await dispatch(request('POST', '/api/v1/a'), match, operations, deps);
    expect(lifecycle.status).toBe(409);
    expect((lifecycle.body as { error: { metadata: unknown } }).error.metadata).toEqual({ detail: 'x', reason: 'conflict', retryable: false });
    const plain = await dispatch(request('POST', '/api/v1/b'), match, operations, deps);
    expect(plain.status).toBe(409);
    expect((plain.body as { error: { metadata: unknown } }).error.metadata).toEqual({ detail: 'x' });
  });

  it('refuses a path parameter that breaks its pattern before the operation runs', async () => {
    const refused = await dispatch(request('POST', '/api/v1/c/not-a-uuid'), match, operations, deps);
    expect(refused.status).toBe(400);
    expect((refused.body as { error: { message: string } }).error.message).toBe('Invalid path parameter id: expected a thing id (UUID)');
    expect(called).toBe(0);
    const accepted = await dispatch(request('POST', '/api/v1/c/123e4567-e89b-12d3-a456-426614174000'), match, operations, deps);
    expect(accepted.status).toBeUndefined();
    expect(called).toBe(1);
  });
});

describe('the route list', () => {
  it('is the features\' routes, each once, the intern routes (and only they) with lifecycle errors', () => {
    const ids = routes.map((entry) => entry.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.slice(2, 2 + keyRoutes.length)).toEqual(keyRoutes.map((entry) => entry.operationId));
    const lifecycle = (routes as readonly RouteDef[]).filter((entry) => entry.errorMetadata === 'lifecycle').map((entry) => entry.operationId);
    expect(lifecycle).toEqual(internRoutes.map((entry) => entry.operationId));
    expect((vaultRoutes as readonly RouteDef[]).some((entry) => entry.errorMetadata !== undefined)).toBe(false);
  });
});

describe('newCreditGrant', () => {
  it('records the amount, note, grantor and time under a fresh id', () => {
    const now = new Date('2026-11-24T10:00:00Z');
    const a = newCreditGrant({ amount: 5_000_000_000n, note: 'invoice 7', by: 'operator', now });
    const b = newCreditGrant({ amount: 1n, note: null, by: 'abc', now });
    expect(a).toEqual({ id: expect.any(String), amount: 5_000_000_000n, note: 'invoice 7', by: 'operator', created_at: '2026-11-24T10:00:00.000Z' });
    expect(b.note).toBeNull();
    expect(a.id).not.toBe(b.id);
  });
});

describe('catalog-derived ports', () => {
  const endpoint = (provider: string, provider_name: string, adapter: string) => ({ provider, provider_name, adapter });
  const catalog = {
    models: [
      { endpoints: [endpoint('openai', 'OpenAI', 'openai-chat'), endpoint('bedrock', 'Amazon Bedrock', 'bedrock')] },
      { endpoints: [endpoint('anthropic', 'Anthropic', 'anthropic')] },
    ],
  } as unknown as Catalog;

  it('offers BYOK for every provider except those served through Bedrock', () => {
    expect([...byokProviders(catalog)].sort()).toEqual(['anthropic', 'openai']);
  });

  it('names every provider by its slug', () => {
    expect(Object.fromEntries(providerNames(catalog))).toEqual({ openai: 'OpenAI', bedrock: 'Amazon Bedrock', anthropic: 'Anthropic' });
  });
});

describe('CORS', () => {
  it('lets browsers send the key and the gateway\'s own request headers', () => {
    expect(CORS_ALLOWED_HEADERS).toEqual(expect.arrayContaining(['authorization', 'x-api-key', 'anthropic-version', 'anthropic-beta', 'content-type', 'x-service-metadata', 'x-service-experimental-metadata', 'x-session-id']));
    // The client SDKs' own headers: test/unit/cors.test.ts.
  });
});

describe('the composition root', () => {
  it('composes one operation per management route, once per deps', async () => {
    const { managementOperationsOf } = await import('../../lambdas/app/management-operations.js');
    const { routesOf } = await import('../../lambdas/app/routes.js');
    const { createDeps } = await import('../../lambdas/app/deps.js');
    const { readConfig } = await import('../../lambdas/app/config.js');
    const gateway = createDeps(readConfig({ TABLE_NAME: 'unused', AWS_REGION: 'local', DYNAMODB_ENDPOINT: 'http://127.0.0.1:9' }));
    const operations = managementOperationsOf(gateway);
    expect(managementOperationsOf(gateway)).toBe(operations);
    expect(Object.keys(operations).sort()).toEqual(routesOf('management').map((entry) => entry.operationId).sort());
  });
});
