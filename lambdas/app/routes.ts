// The single source of truth for the HTTP surface: the local server dispatches from it, the CDK stack
// creates the API Gateway routes from it, and the OpenAPI document is generated from it. Each feature
// declares its routes (its routes.ts); this list is their concatenation, in the order of the API reference.
// Adding an endpoint = one entry in the feature's routes.ts + its operation in the feature's operations.ts.
import * as z from 'zod';
import type { LambdaFunction, OperationsFor, RouteDef } from '../platform/http/route.js';
import { keyRoutes } from '../keys/index.js';
import { organizationRoutes } from '../organizations/index.js';
import { catalogRoutes } from '../catalog/index.js';
import { workspaceRoutes } from '../workspaces/index.js';
import { creditRoutes } from '../credits/index.js';
import { generationRoutes } from '../generations/index.js';
import { analyticsRoutes } from '../analytics/index.js';
import { vaultRoutes } from '../vault/index.js';
import { internRoutes } from '../interns/index.js';
import { byokRoutes } from '../byok/index.js';
import { inferenceRoutes } from '../inference/routes.js';
import { batchRoutes } from '../batches/routes.js';
import { presetRoutes } from '../presets/index.js';
import { guardrailRoutes } from '../guardrails/index.js';
import { endUserRoutes } from '../end-users/index.js';
import { observabilityRoutes } from '../observability/index.js';
import { privateEndpointRoutes } from '../private-endpoints/index.js';
import { scimRoutes } from '../scim/index.js';

/** Routes about the gateway itself (system-operations.ts). */
export const systemRoutes = [
  {
    operationId: 'health', method: 'GET', path: '/health', unversioned: true, fn: 'management', auth: 'none',
    tag: 'System', summary: 'Liveness: 200 once the gateway can serve; locally also each part (store, KMS, simulator), 503 while a required one is down',
    response: z.object({
      status: z.enum(['ok', 'degraded']),
      parts: z.record(z.string(), z.object({ status: z.enum(['ok', 'down', 'restarting']), message: z.string().optional() })).optional(),
    }),
  },
  {
    operationId: 'getOpenApiDocument', method: 'GET', path: '/openapi.json', fn: 'management', auth: 'none',
    tag: 'System', summary: 'This API as an OpenAPI 3.1 document', response: z.object({ openapi: z.string() }).passthrough(),
  },
] as const satisfies readonly RouteDef[];

export const routes = [
  ...systemRoutes,
  ...keyRoutes,
  ...organizationRoutes,
  ...catalogRoutes,
  ...workspaceRoutes,
  ...creditRoutes,
  ...generationRoutes,
  ...analyticsRoutes,
  ...vaultRoutes,
  ...internRoutes,
  ...byokRoutes,
  ...guardrailRoutes,
  ...endUserRoutes,
  ...observabilityRoutes,
  ...privateEndpointRoutes,
  ...scimRoutes,
  ...inferenceRoutes,
  ...presetRoutes,
  ...batchRoutes,
] as const satisfies readonly RouteDef[];

export type Route = (typeof routes)[number];
type RoutesOf<F extends LambdaFunction> = Extract<Route, { fn: F }>;

/** Every operation of one Lambda function, typed by its route's body, query, parameters and authentication. */
export type Operations<F extends LambdaFunction> = OperationsFor<RoutesOf<F>[]>;
export type ManagementOperations = Operations<'management'>;
export type InferenceOperations = Operations<'inference'>;
export type SystemOperations = OperationsFor<typeof systemRoutes>;

export function routesOf(fn: LambdaFunction): RouteDef[] {
  return (routes as readonly RouteDef[]).filter((route) => route.fn === fn);
}
