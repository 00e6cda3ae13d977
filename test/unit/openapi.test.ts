import { describe, expect, it } from '@jest/globals';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { buildOpenApiDocument } from '../../lambdas/platform/http/openapi.js';
import { routes } from '../../lambdas/app/routes.js';
import { fullPath } from '../../lambdas/platform/http/router.js';
import type { AuthRequirement } from '../../lambdas/platform/http/route.js';

type Operation = { operationId: string; security: unknown[]; parameters: Array<{ name: string; in: string }>; requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> }; responses: Record<string, unknown> };

describe('OpenAPI document', () => {
  const doc = buildOpenApiDocument(routes) as { openapi: string; paths: Record<string, Record<string, Operation>> };

  it('is OpenAPI 3.1 with one operation per route of the table', () => {
    expect(doc.openapi).toBe('3.1.0');
    for (const route of routes) {
      const operation = doc.paths[fullPath(route)]?.[route.method.toLowerCase()];
      expect(operation?.operationId).toBe(route.operationId);
    }
    const count = Object.values(doc.paths).reduce((sum, methods) => sum + Object.keys(methods).length, 0);
    expect(count).toBe(routes.length);
  });

  // What each kind of authentication looks like in the document: no key; a key or none ({} is "no
  // requirement"); a bearer key for every kind that needs one (which kind of key is the route's business).
  const SECURITY: Record<AuthRequirement, unknown[]> = {
    none: [],
    optional: [{}, { bearerAuth: [] }],
    any: [{ bearerAuth: [] }],
    management: [{ bearerAuth: [] }],
    inference: [{ bearerAuth: [] }],
    regular: [{ bearerAuth: [] }],
  };

  it.each([
    ['GET', '/health', 'none'],
    ['GET', '/api/v1/openapi.json', 'none'],
    ['GET', '/api/v1/models', 'optional'],
    ['GET', '/api/v1/models/user', 'any'],
    ['GET', '/api/v1/key', 'any'],
    ['POST', '/api/v1/keys', 'management'],
    ['POST', '/api/v1/chat/completions', 'inference'],
    ['POST', '/api/v1/responses', 'inference'],
    ['GET', '/api/v1/vault/secrets', 'regular'],
  ] as const)('declares %s %s as %s', (method, path, kind) => {
    expect(routes.find((route) => route.method === method && fullPath(route) === path)?.auth).toBe(kind);
    expect(doc.paths[path]?.[method.toLowerCase()]?.security).toEqual(SECURITY[kind]);
  });

  it('gives every route the security of its kind of authentication', () => {
    for (const route of routes) expect([route.operationId, doc.paths[fullPath(route)]![route.method.toLowerCase()]!.security]).toEqual([route.operationId, SECURITY[route.auth]]);
  });

  it('describes bodies, path and query parameters, and replies from the zod schemas', () => {
    const create = doc.paths['/api/v1/keys']!.post!;
    expect(Object.keys(create.requestBody!.content['application/json']!.schema.properties!)).toEqual(
      expect.arrayContaining(['name', 'limit', 'limit_reset', 'include_byok_in_limit', 'expires_at']),
    );
    expect(create.responses['201']).toBeDefined();
    expect(doc.paths['/api/v1/keys/{hash}']!.get!.parameters).toEqual([
      { name: 'hash', in: 'path', required: true, schema: { type: 'string', pattern: '^[0-9a-f]{64}$' }, description: expect.stringContaining('64 lowercase hexadecimal') },
    ]);
    expect(doc.paths['/api/v1/keys']!.get!.parameters.map((p) => p.name)).toEqual(['offset', 'include_disabled', 'workspace_id']);
    expect(doc.paths['/api/v1/keys']!.get!.responses['403']).toEqual({
      description: expect.any(String), content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
    });
  });

  it('lets every optional top-level field of the routes that take null as absent be null, and only there', () => {
    // The document's own schemas, checked by a JSON Schema validator (draft 2020-12, as the document declares).
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    const bodyOf = (path: string) => doc.paths[path]!.post!.requestBody!.content['application/json']!.schema as { properties: Record<string, object>; required?: string[] };
    const takesNull = (schema: object) => ajv.compile(schema)(null);
    const nullable = ['/api/v1/chat/completions', '/api/v1/responses', '/api/v1/messages', '/api/v1/embeddings', '/api/v1/audio/speech', '/api/v1/presets/{slug}/chat/completions', '/api/v1/presets/{slug}/messages', '/api/v1/presets/{slug}/responses'];
    for (const path of nullable) {
      const body = bodyOf(path);
      const optional = Object.keys(body.properties).filter((name) => !(body.required ?? []).includes(name));
      expect(optional.length).toBeGreaterThan(3);
      expect({ path, refused: optional.filter((name) => !takesNull(body.properties[name]!)) }).toEqual({ path, refused: [] });
      for (const name of body.required ?? []) expect({ path, name, takesNull: takesNull(body.properties[name]!) }).toEqual({ path, name, takesNull: false });
    }
    // A plain type keeps its constraints beside null; an enum takes null too.
    const chat = bodyOf('/api/v1/chat/completions').properties as Record<string, Record<string, unknown>>;
    expect(chat.model).toMatchObject({ type: ['string', 'null'], maxLength: 256 });
    expect(ajv.compile(chat.model!)('x'.repeat(257))).toBe(false);
    expect(takesNull(bodyOf('/api/v1/embeddings').properties.encoding_format!)).toBe(true);
    expect(ajv.compile(bodyOf('/api/v1/embeddings').properties.encoding_format!)('hex')).toBe(false);
    // A management body keeps its schema as written: there null may mean something (a limit removed).
    expect(takesNull(bodyOf('/api/v1/keys').properties.include_byok_in_limit!)).toBe(false);
  });
});
