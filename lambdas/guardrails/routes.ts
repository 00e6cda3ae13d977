// The guardrail routes (management keys): SPEC's Guardrails group, key assignments first.
import * as z from 'zod';
import type { OperationsFor, RouteDef } from '../platform/http/route.js';
import { anyOf, UUID } from '../platform/http/path-params.js';
import { DEFAULT_GUARDRAIL_PREFIX } from '../organizations/index.js';
import { createGuardrailBody, guardrailListQuery, guardrailListReply, guardrailReply, keyAssignmentListReply, keyHashesBody, memberAssignmentListReply, memberIdsBody, pageQuery, updateGuardrailBody } from './schemas.js';

// A guardrail's UUID, or a workspace's default_guardrail_id (answered with a 404 that points at its budgets).
const id = { pattern: anyOf(UUID, new RegExp(`^${DEFAULT_GUARDRAIL_PREFIX}${UUID.source.slice(1)}`)), expected: 'a guardrail id (UUID)' };

export const guardrailRoutes = [
  {
    operationId: 'listGuardrails', method: 'GET', path: '/guardrails', fn: 'management', auth: 'management',
    tag: 'Guardrails', summary: 'Guardrails of the organization, newest first', query: guardrailListQuery, response: guardrailListReply,
  },
  {
    operationId: 'createGuardrail', method: 'POST', path: '/guardrails', fn: 'management', auth: 'management',
    tag: 'Guardrails', summary: 'Create a guardrail: allowed and ignored models (ids or wildcards like openai/*) and providers', body: createGuardrailBody, response: guardrailReply, successStatus: 201,
  },
  {
    operationId: 'listKeyAssignments', method: 'GET', path: '/guardrails/assignments/keys', fn: 'management', auth: 'management',
    tag: 'Guardrails', summary: 'Key assignments of every guardrail of the organization', query: pageQuery, response: keyAssignmentListReply,
  },
  {
    operationId: 'listMemberAssignments', method: 'GET', path: '/guardrails/assignments/members', fn: 'management', auth: 'management',
    tag: 'Guardrails', summary: 'Member assignments of every guardrail of the organization', query: pageQuery, response: memberAssignmentListReply,
  },
  {
    operationId: 'getGuardrail', method: 'GET', path: '/guardrails/{id}', params: { id }, fn: 'management', auth: 'management',
    tag: 'Guardrails', summary: 'One guardrail', response: guardrailReply,
  },
  {
    operationId: 'updateGuardrail', method: 'PATCH', path: '/guardrails/{id}', params: { id }, fn: 'management', auth: 'management',
    tag: 'Guardrails', summary: 'Update a guardrail; applies to the next request', body: updateGuardrailBody, response: guardrailReply,
  },
  {
    operationId: 'deleteGuardrail', method: 'DELETE', path: '/guardrails/{id}', params: { id }, fn: 'management', auth: 'management',
    tag: 'Guardrails', summary: 'Delete a guardrail and its assignments', response: z.object({ deleted: z.literal(true) }),
  },
  {
    operationId: 'listGuardrailKeyAssignments', method: 'GET', path: '/guardrails/{id}/assignments/keys', params: { id }, fn: 'management', auth: 'management',
    tag: 'Guardrails', summary: 'Keys the guardrail is assigned to', query: pageQuery, response: keyAssignmentListReply,
  },
  {
    operationId: 'assignGuardrailKeys', method: 'POST', path: '/guardrails/{id}/assignments/keys', params: { id }, fn: 'management', auth: 'management',
    tag: 'Guardrails', summary: 'Assign the guardrail to keys of the organization', body: keyHashesBody, response: z.object({ assigned_count: z.number().int() }),
  },
  {
    operationId: 'unassignGuardrailKeys', method: 'POST', path: '/guardrails/{id}/assignments/keys/remove', params: { id }, fn: 'management', auth: 'management',
    tag: 'Guardrails', summary: 'Remove the guardrail from keys', body: keyHashesBody, response: z.object({ unassigned_count: z.number().int() }),
  },
  {
    operationId: 'listGuardrailMemberAssignments', method: 'GET', path: '/guardrails/{id}/assignments/members', params: { id }, fn: 'management', auth: 'management',
    tag: 'Guardrails', summary: 'Members the guardrail is assigned to', query: pageQuery, response: memberAssignmentListReply,
  },
  {
    operationId: 'assignGuardrailMembers', method: 'POST', path: '/guardrails/{id}/assignments/members', params: { id }, fn: 'management', auth: 'management',
    tag: 'Guardrails', summary: 'Assign the guardrail to members of the organization: it applies to every key they created (creator_user_id)', body: memberIdsBody, response: z.object({ assigned_count: z.number().int() }),
  },
  {
    operationId: 'unassignGuardrailMembers', method: 'POST', path: '/guardrails/{id}/assignments/members/remove', params: { id }, fn: 'management', auth: 'management',
    tag: 'Guardrails', summary: 'Remove the guardrail from members', body: memberIdsBody, response: z.object({ unassigned_count: z.number().int() }),
  },
] as const satisfies readonly RouteDef[];

export type GuardrailOperations = OperationsFor<typeof guardrailRoutes>;
