// Generates the OpenAPI 3.1 document from the route table and its zod schemas, so it grows with every route.
import * as z from 'zod';
import type { RouteDef } from './route.js';
import { fullPath } from './router.js';

type JsonSchema = Record<string, unknown>;

const errorEnvelope = z.object({
  type: z.literal('error').optional().describe('POST /messages only: Anthropic\'s envelope'),
  error: z.object({
    type: z.string().optional().describe('POST /messages only: Anthropic\'s error type (invalid_request_error, authentication_error, rate_limit_error …)'),
    code: z.number().int(),
    message: z.string(),
    metadata: z.record(z.string(), z.unknown()).optional(),
  }),
  user_id: z.string().nullable().optional(),
});

const ERROR_STATUSES: Record<string, string> = {
  '400': 'Malformed JSON, or a body, query or path parameter that breaks its schema or pattern',
  '401': 'Missing, malformed, unknown, disabled or expired key',
  '403': 'Key kind not allowed on this route',
  '404': 'No such route or resource',
  '405': 'Method not allowed on this path',
  '413': 'Request body over the route limit',
  '500': 'Unexpected error (logged with the request id)',
};

function toSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonSchema;
  delete json.$schema;
  return json;
}

const acceptsNull = (schema: JsonSchema): boolean => schema.type === 'null'
  || (Array.isArray(schema.type) && schema.type.includes('null'))
  || (Array.isArray(schema.anyOf) && (schema.anyOf as JsonSchema[]).some(acceptsNull));

/** A body's schema whose optional top-level fields take null too (a route with `nullFieldsAbsent`). */
function optionalsNullable(json: JsonSchema): JsonSchema {
  const properties = json.properties as Record<string, JsonSchema> | undefined;
  const required = new Set((json.required ?? []) as string[]);
  for (const [name, property] of Object.entries(properties ?? {})) {
    if (required.has(name) || acceptsNull(property)) continue;
    // A plain type takes null beside it, keeping its constraints (bounds, lengths and patterns apply to
    // values of their type only; an enum or a const does not, so those are wrapped below).
    if (typeof property.type === 'string' && !('enum' in property) && !('const' in property)) {
      property.type = [property.type, 'null'];
      continue;
    }
    const { description, ...rest } = property;
    properties![name] = { anyOf: [rest, { type: 'null' }], ...(description === undefined ? {} : { description }) };
  }
  return json;
}

function queryParameters(schema: z.ZodType | undefined): JsonSchema[] {
  if (!schema) return [];
  const json = toSchema(schema, 'input');
  const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((json.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => ({
    name, in: 'query', required: required.has(name), schema: property,
    ...(typeof property.description === 'string' ? { description: property.description } : {}),
  }));
}

function pathParameters(route: RouteDef): JsonSchema[] {
  return [...route.path.matchAll(/\{([^}]+)\}/g)].map((match) => {
    const rule = route.params?.[match[1]!];
    return {
      name: match[1], in: 'path', required: true,
      schema: { type: 'string', ...(rule ? { pattern: rule.pattern.source } : {}) },
      ...(rule ? { description: `Expected: ${rule.expected}` } : {}),
    };
  });
}

export function buildOpenApiDocument(routes: readonly RouteDef[], serverUrl = '/'): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const path = fullPath(route);
    const responses: Record<string, JsonSchema> = {
      [String(route.successStatus ?? 200)]: {
        description: route.summary,
        ...(route.response ? { content: { 'application/json': { schema: toSchema(route.response, 'output') } } } : {}),
      },
    };
    for (const [status, description] of Object.entries(ERROR_STATUSES)) {
      if (route.auth === 'none' && (status === '401' || status === '403')) continue;
      if (!route.body && status === '413') continue;
      responses[status] = { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } } };
    }
    (paths[path] ??= {})[route.method.toLowerCase()] = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
      security: route.auth === 'none' ? [] : route.auth === 'optional' ? [{}, { bearerAuth: [] }] : [{ bearerAuth: [] }],
      parameters: [...pathParameters(route), ...queryParameters(route.query)],
      ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: route.nullFieldsAbsent ? optionalsNullable(toSchema(route.body, 'input')) : toSchema(route.body, 'input') } } } } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Model Gateway API', version: '1.0.0' },
    servers: [{ url: serverUrl }],
    paths,
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key (sk-gw-v1-…)' } },
      schemas: { ErrorEnvelope: toSchema(errorEnvelope, 'output') },
    },
  };
}
