// The intern routes (regular keys): interns of the key's workspace, their lifecycle and their keys. Their
// errors carry the lifecycle metadata @openrouter/sdk's InternLifecycleError expects.
import type { OperationsFor, RouteDef } from '../platform/http/route.js';
import { internIdParam as internId } from '../vault/index.js';
import { createInternBody, internKeyBody, internListReply, internReply, listInternsQuery, updateInternBody } from './schemas.js';

export const internRoutes = [
  {
    operationId: 'listInterns', method: 'GET', path: '/interns', fn: 'management', auth: 'regular', errorMetadata: 'lifecycle',
    tag: 'Interns', summary: 'Interns of the key\'s workspace, newest first', query: listInternsQuery, response: internListReply,
  },
  {
    operationId: 'createIntern', method: 'POST', path: '/interns', fn: 'management', auth: 'regular', errorMetadata: 'lifecycle',
    tag: 'Interns', summary: 'Create an intern (with its private vault)', body: createInternBody, response: internReply, successStatus: 201,
  },
  {
    operationId: 'getIntern', method: 'GET', path: '/interns/{internId}', params: { internId }, fn: 'management', auth: 'regular', errorMetadata: 'lifecycle',
    tag: 'Interns', summary: 'Get an intern', response: internReply,
  },
  {
    operationId: 'updateIntern', method: 'PATCH', path: '/interns/{internId}', params: { internId }, fn: 'management', auth: 'regular', errorMetadata: 'lifecycle',
    tag: 'Interns', summary: 'Update an intern', body: updateInternBody, response: internReply,
  },
  {
    operationId: 'deleteIntern', method: 'DELETE', path: '/interns/{internId}', params: { internId }, fn: 'management', auth: 'regular', errorMetadata: 'lifecycle',
    tag: 'Interns', summary: 'Delete an intern, its keys and its private vault (202)',
  },
  {
    operationId: 'provisionIntern', method: 'POST', path: '/interns/{internId}/provision', params: { internId }, fn: 'management', auth: 'regular', errorMetadata: 'lifecycle',
    tag: 'Interns', summary: 'Start or resume an intern (202)',
  },
  {
    operationId: 'suspendIntern', method: 'POST', path: '/interns/{internId}/suspend', params: { internId }, fn: 'management', auth: 'regular', errorMetadata: 'lifecycle',
    tag: 'Interns', summary: 'Suspend an intern',
  },
  {
    operationId: 'createInternKey', method: 'POST', path: '/interns/{internId}/keys', params: { internId }, fn: 'management', auth: 'regular', errorMetadata: 'lifecycle',
    tag: 'Interns', summary: 'Provision an API key confined to the intern; the reply carries the key text once', body: internKeyBody, successStatus: 201,
  },
] as const satisfies readonly RouteDef[];

export type InternOperations = OperationsFor<typeof internRoutes>;
