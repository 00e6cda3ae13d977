// Renders docs/API.md, the project's API reference, from the OpenAPI document the gateway serves (itself
// generated from the route table and its zod schemas) plus the coverage of the API contract's route groups.
// `npm run docs` writes it; a test fails when the committed file is not what this renders.
import { buildOpenApiDocument } from '../../lambdas/platform/http/openapi.js';
import { routes } from '../../lambdas/app/routes.js';
import { API_PREFIX, createRouter } from '../../lambdas/platform/http/router.js';
import type { RouteDef } from '../../lambdas/platform/http/route.js';
import { contractGroups } from './contract-routes.js';

type Schema = Record<string, unknown>;
interface Operation {
  operationId: string;
  summary: string;
  tags: string[];
  security: unknown[];
  parameters: Array<{ name: string; in: string; required: boolean; schema: Schema; description?: string }>;
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: Schema }> }>;
}

/** How deep nested fields are listed; deeper structure is named by its type only. */
const MAX_DEPTH = 3;

const AUTH_TEXT: Record<RouteDef['auth'], string> = {
  none: 'none',
  optional: 'optional (a key is checked if one is sent)',
  any: 'any key',
  management: 'management key',
  inference: 'regular key (management keys get 403)',
  regular: 'regular key',
};

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

function variants(schema: Schema): Schema[] | undefined {
  const list = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  return Array.isArray(list) ? list : undefined;
}

function typeName(schema: Schema | undefined): string {
  if (!schema || Object.keys(schema).length === 0) return 'any';
  if ('const' in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return (schema.enum as unknown[]).map((value) => JSON.stringify(value)).join(' | ');
  const union = variants(schema);
  if (union) return [...new Set(union.map(typeName))].join(' or ');
  if (typeof schema.$ref === 'string') return schema.$ref.split('/').pop() ?? 'object';
  const type = schema.type;
  if (Array.isArray(type)) return type.join(' or ');
  if (type === 'array') return `array of ${typeName(schema.items as Schema | undefined)}`;
  if (type === 'integer' || type === 'number' || type === 'string' || type === 'boolean' || type === 'null' || type === 'object') return type;
  return 'any';
}

function constraints(schema: Schema): string {
  const parts: string[] = [];
  const bound = (key: string, text: string) => {
    // zod's integers carry the safe-integer range: not worth a word.
    if (typeof schema[key] === 'number' && Math.abs(schema[key] as number) < Number.MAX_SAFE_INTEGER) parts.push(`${text} ${String(schema[key])}`);
  };
  bound('minimum', '≥'); bound('exclusiveMinimum', '>'); bound('maximum', '≤'); bound('exclusiveMaximum', '<');
  bound('minLength', 'length ≥'); bound('maxLength', 'length ≤'); bound('minItems', 'items ≥'); bound('maxItems', 'items ≤');
  if (typeof schema.pattern === 'string') parts.push(`pattern \`${schema.pattern}\``);
  if (typeof schema.format === 'string') parts.push(schema.format);
  if ('default' in schema) parts.push(`default ${JSON.stringify(schema.default)}`);
  if (typeof schema.description === 'string') parts.push(schema.description);
  return parts.join('; ');
}

interface FieldRow { name: string; type: string; required: boolean; notes: string }

/** The object shapes a field holds (itself, its array items, or the object variants of a union). */
function objectShapes(schema: Schema): Array<{ label: string; shape: Schema }> {
  if (schema.type === 'object' && schema.properties) return [{ label: '', shape: schema }];
  if (schema.type === 'array' && schema.items) return objectShapes(schema.items as Schema).map(({ label, shape }) => ({ label: `[]${label}`, shape }));
  const union = variants(schema);
  if (!union) return [];
  const objects = union.filter((variant) => variant.type === 'object' && variant.properties || variant.type === 'array');
  if (objects.length === 1) return objectShapes(objects[0]!);
  return objects.flatMap((variant) => {
    const properties = (variant.properties ?? {}) as Record<string, Schema>;
    const tag = Object.entries(properties).find(([, property]) => 'const' in property);
    const label = tag ? ` (${tag[0]} = ${JSON.stringify(tag[1].const)})` : '';
    return objectShapes(variant).map((shape) => ({ label: label + shape.label, shape: shape.shape }));
  });
}

/**
 * A field that also takes null (`X or null`: zod's nullable, or a type list with "null") as X and that it
 * does, so that X's constraints and fields are listed as for X itself.
 */
function withoutNull(schema: Schema): { inner: Schema; nullable: boolean } {
  if (Array.isArray(schema.type) && schema.type.includes('null')) {
    const rest = (schema.type as string[]).filter((type) => type !== 'null');
    if (rest.length === 1) return { inner: { ...schema, type: rest[0] }, nullable: true };
  }
  const union = variants(schema);
  const others = union?.filter((variant) => variant.type !== 'null');
  if (union && others!.length === 1 && union.length === 2) {
    const { anyOf: _anyOf, oneOf: _oneOf, ...outer } = schema;
    return { inner: { ...others![0]!, ...outer }, nullable: true };
  }
  return { inner: schema, nullable: false };
}

function fieldRows(schema: Schema, prefix = '', depth = 0): FieldRow[] {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((schema.required ?? []) as string[]);
  const rows: FieldRow[] = [];
  for (const [name, property] of Object.entries(properties)) {
    const path = `${prefix}${name}`;
    const { inner, nullable } = withoutNull(property);
    rows.push({ name: path, type: `${typeName(inner)}${nullable ? ' or null' : ''}`, required: required.has(name), notes: constraints(inner) });
    if (depth + 1 >= MAX_DEPTH) continue;
    for (const { label, shape } of objectShapes(inner)) rows.push(...fieldRows(shape, `${path}${label}.`, depth + 1));
  }
  return rows;
}

function fieldTable(schema: Schema): string[] {
  const rows = fieldRows(schema);
  if (rows.length === 0) return [`A ${typeName(schema)}.`, ''];
  return [
    '| Field | Type | Required | Notes |',
    '|---|---|---|---|',
    ...rows.map((row) => `| \`${cell(row.name)}\` | ${cell(row.type)} | ${row.required ? 'yes' : ''} | ${cell(row.notes)} |`),
    '',
  ];
}

function coverageTable(): string[] {
  const match = createRouter(routes as readonly RouteDef[]);
  const lines = ['| Group | Served today | Routes that answer 404 |', '|---|---|---|'];
  for (const { group, routes: list } of contractGroups) {
    const missing = list.filter(([method, path]) => match(method, `${API_PREFIX}${path.replace(/\{[^}]+\}/g, 'sample')}`).kind !== 'found');
    const status = missing.length === 0 ? 'yes' : missing.length === list.length ? 'no' : `partly (${list.length - missing.length} of ${list.length})`;
    lines.push(`| ${group} | ${status} | ${missing.map(([method, path]) => `\`${method} ${path}\``).join(', ')} |`);
  }
  return [...lines, ''];
}

export function renderApiReference(): string {
  const doc = buildOpenApiDocument(routes, '/api/v1') as { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };
  const byOperation = new Map((routes as readonly RouteDef[]).map((route) => [route.operationId, route]));
  const tags: string[] = [];
  const sections = new Map<string, string[]>();
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const route = byOperation.get(operation.operationId)!;
      const tag = operation.tags[0] ?? 'Other';
      if (!sections.has(tag)) {
        tags.push(tag);
        sections.set(tag, []);
      }
      const out = sections.get(tag)!;
      out.push(`### \`${method.toUpperCase()} ${path}\``, '', `${operation.summary}. Key: ${AUTH_TEXT[route.auth]}${route.organizationOnly ? ', of an organization (personal accounts get 404)' : ''}.`, '');
      const params = operation.parameters;
      if (params.length) {
        out.push('| Parameter | In | Type | Required | Notes |', '|---|---|---|---|---|');
        for (const param of params) {
          out.push(`| \`${param.name}\` | ${param.in} | ${cell(typeName(param.schema))} | ${param.required ? 'yes' : ''} | ${cell([constraints(param.schema), param.description && param.description !== param.schema.description ? param.description : ''].filter(Boolean).join('; '))} |`);
        }
        out.push('');
      }
      const body = operation.requestBody?.content['application/json']?.schema;
      if (body) out.push('Request body:', '', ...fieldTable(body));
      const statuses = Object.keys(operation.responses);
      const success = statuses.find((status) => status.startsWith('2'))!;
      const reply = operation.responses[success]!;
      const replySchema = reply.content?.['application/json']?.schema;
      out.push(`Reply ${success}${route.operationId === 'chatCompletions' || route.operationId === 'createResponse' ? ' (JSON, or `text/event-stream` with `stream: true`)' : ''}:`, '');
      out.push(...(replySchema ? fieldTable(replySchema) : ['No body.', '']));
      out.push(`Errors: ${statuses.filter((status) => status !== success).join(', ')} (error envelope).`, '');
    }
  }
  return [
    '# Model Gateway API reference',
    '',
    '<!-- Generated by `npm run docs` from the OpenAPI document (GET /api/v1/openapi.json); do not edit by hand. -->',
    '',
    'All routes are under `/api/v1` (`/health` is outside it). Send the key as `Authorization: Bearer sk-gw-v1-…`',
    'and bodies as JSON. The same document is served as OpenAPI 3.1 at `GET /api/v1/openapi.json`.',
    '',
    'Every failure is the error envelope:',
    '',
    ...fieldTable(doc.components.schemas.ErrorEnvelope!),
    '## Coverage of the API contract',
    '',
    'The gateway implements the public OpenRouter API with a few names changed (`service_metadata`,',
    '`X-Service-Metadata`). Route groups of that contract, and which of their routes this version serves:',
    '',
    ...coverageTable(),
    '## Routes',
    '',
    ...tags.map((tag) => `- [${tag}](#${tag.toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-')})`),
    '',
    ...tags.flatMap((tag) => [`## ${tag}`, '', ...sections.get(tag)!]),
  ].join('\n');
}
