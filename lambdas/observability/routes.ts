// The observability routes (management keys): SPEC's Observability group, and a connectivity test.
import * as z from 'zod';
import type { OperationsFor, RouteDef } from '../platform/http/route.js';
import { uuidParam } from '../platform/http/path-params.js';
import { connectivityReply, createDestinationBody, destinationListQuery, destinationListReply, destinationReply, updateDestinationBody } from './schemas.js';

const id = uuidParam('a destination id');

export const observabilityRoutes = [
  {
    operationId: 'listObservabilityDestinations', method: 'GET', path: '/observability/destinations', fn: 'management', auth: 'management',
    tag: 'Observability', summary: 'Observability destinations of the organization, newest first', query: destinationListQuery, response: destinationListReply,
  },
  {
    operationId: 'createObservabilityDestination', method: 'POST', path: '/observability/destinations', fn: 'management', auth: 'management',
    tag: 'Observability', summary: 'Create a destination (webhook, otel-collector, langfuse or s3): every generation of its workspace is delivered to it after the reply; its secrets are sealed in the vault, bound to its host', body: createDestinationBody, response: destinationReply, successStatus: 201,
  },
  {
    operationId: 'getObservabilityDestination', method: 'GET', path: '/observability/destinations/{id}', params: { id }, fn: 'management', auth: 'management',
    tag: 'Observability', summary: 'One destination (secrets masked)', response: destinationReply,
  },
  {
    operationId: 'updateObservabilityDestination', method: 'PATCH', path: '/observability/destinations/{id}', params: { id }, fn: 'management', auth: 'management',
    tag: 'Observability', summary: 'Update a destination: config fields left out, or sent back masked, keep their value', body: updateDestinationBody, response: destinationReply,
  },
  {
    operationId: 'deleteObservabilityDestination', method: 'DELETE', path: '/observability/destinations/{id}', params: { id }, fn: 'management', auth: 'management',
    tag: 'Observability', summary: 'Delete a destination and its sealed secrets; deliveries still queued for it are dropped', response: z.object({ deleted: z.literal(true) }),
  },
  {
    operationId: 'testObservabilityDestination', method: 'POST', path: '/observability/destinations/{id}/test', params: { id }, fn: 'management', auth: 'management',
    tag: 'Observability', summary: 'Connectivity test: one synthetic generation (event "test") sent to the destination now, and how it answered', response: connectivityReply,
  },
] as const satisfies readonly RouteDef[];

export type ObservabilityOperations = OperationsFor<typeof observabilityRoutes>;
