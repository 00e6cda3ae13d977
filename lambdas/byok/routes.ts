// The BYOK routes (management keys): the organization's own provider credentials.
import * as z from 'zod';
import type { OperationsFor, RouteDef } from '../platform/http/route.js';
import { uuidParam } from '../platform/http/path-params.js';
import { byokListReply, byokReply, createByokBody, listByokQuery, updateByokBody } from './schemas.js';

const byokId = uuidParam('a credential id');

export const byokRoutes = [
  {
    operationId: 'listByok', method: 'GET', path: '/byok', fn: 'management', auth: 'management',
    tag: 'BYOK', summary: 'Provider credentials of the organization (metadata; keys are never returned)', query: listByokQuery, response: byokListReply,
  },
  {
    operationId: 'createByok', method: 'POST', path: '/byok', fn: 'management', auth: 'management',
    tag: 'BYOK', summary: 'Add a provider credential, stored under KMS envelope encryption', body: createByokBody, response: byokReply, successStatus: 201,
  },
  {
    operationId: 'getByok', method: 'GET', path: '/byok/{id}', params: { id: byokId }, fn: 'management', auth: 'management',
    tag: 'BYOK', summary: 'One provider credential', response: byokReply,
  },
  {
    operationId: 'updateByok', method: 'PATCH', path: '/byok/{id}', params: { id: byokId }, fn: 'management', auth: 'management',
    tag: 'BYOK', summary: 'Update a provider credential (a new key rotates it in place)', body: updateByokBody, response: byokReply,
  },
  {
    operationId: 'deleteByok', method: 'DELETE', path: '/byok/{id}', params: { id: byokId }, fn: 'management', auth: 'management',
    tag: 'BYOK', summary: 'Delete a provider credential and its key material', response: z.object({ deleted: z.literal(true) }),
  },
] as const satisfies readonly RouteDef[];

export type ByokOperations = OperationsFor<typeof byokRoutes>;
