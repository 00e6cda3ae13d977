// The end-user routes (management keys): SPEC's End users group.
import * as z from 'zod';
import type { OperationsFor, RouteDef } from '../platform/http/route.js';
import { createEndUserBody, endUserListQuery, endUserListReply, endUserReply, updateEndUserBody } from './schemas.js';

/** The id as the requests send it, URL-encoded in the path (at most 256 characters). */
const user = { pattern: /^[^/]{1,256}$/, expected: 'an end-user id (the `user` of its requests, URL-encoded), or its user_hash for an id holding a `/`' };

export const endUserRoutes = [
  {
    operationId: 'listEndUsers', method: 'GET', path: '/end-users', fn: 'management', auth: 'management',
    tag: 'End users', summary: 'End users of the organization, with their limits and usage', query: endUserListQuery, response: endUserListReply,
  },
  {
    operationId: 'createEndUser', method: 'POST', path: '/end-users', fn: 'management', auth: 'management',
    tag: 'End users', summary: "Register an end user (the `user` of requests), optionally with a spend limit checked before each of its requests", body: createEndUserBody, response: endUserReply, successStatus: 201,
  },
  {
    operationId: 'getEndUser', method: 'GET', path: '/end-users/{user}', params: { user }, fn: 'management', auth: 'management',
    tag: 'End users', summary: 'One end user, with its usage per window', response: endUserReply,
  },
  {
    operationId: 'updateEndUser', method: 'PATCH', path: '/end-users/{user}', params: { user }, fn: 'management', auth: 'management',
    tag: 'End users', summary: "Change an end user's limit or state; applies to its next request", body: updateEndUserBody, response: endUserReply,
  },
  {
    operationId: 'deleteEndUser', method: 'DELETE', path: '/end-users/{user}', params: { user }, fn: 'management', auth: 'management',
    tag: 'End users', summary: 'Forget an end user: its limit and usage go with it', response: z.object({ deleted: z.literal(true) }),
  },
] as const satisfies readonly RouteDef[];

export type EndUserOperations = OperationsFor<typeof endUserRoutes>;
