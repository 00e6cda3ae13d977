// The SCIM routes (management keys): SPEC's SCIM group (group mappings, groups, sync jobs), and the SCIM 2.0
// Users and Groups endpoints an identity provider pushes to (authorized with a management key of the
// organization).
import * as z from 'zod';
import type { OperationsFor, RouteDef } from '../platform/http/route.js';
import { uuidParam } from '../platform/http/path-params.js';
import {
  createMappingBody, deleteMappingQuery, groupListQuery, groupListReply, jobReply, mappingListQuery, mappingListReply, mappingReply,
  scimGroupBody, scimListQuery, scimListReply, scimPatchBody, scimResource, scimUserBody, updateMappingBody,
} from './schemas.js';

const id = uuidParam('an id');
const tag = 'SCIM';

export const scimRoutes = [
  {
    operationId: 'listScimGroupMappings', method: 'GET', path: '/scim/group-mappings', fn: 'management', auth: 'management',
    tag, summary: 'Group mappings: which SCIM group grants which workspace, with which role', query: mappingListQuery, response: mappingListReply,
  },
  {
    operationId: 'createScimGroupMapping', method: 'POST', path: '/scim/group-mappings', fn: 'management', auth: 'management',
    tag, summary: 'Map a SCIM group to a workspace with a role (the same mapping again re-applies it; another role is a 409); applied at once', body: createMappingBody, response: mappingReply, successStatus: 201,
  },
  {
    operationId: 'getScimGroupMapping', method: 'GET', path: '/scim/group-mappings/{id}', params: { id }, fn: 'management', auth: 'management',
    tag, summary: 'One group mapping', response: mappingReply,
  },
  {
    operationId: 'updateScimGroupMapping', method: 'PATCH', path: '/scim/group-mappings/{id}', params: { id }, fn: 'management', auth: 'management',
    tag, summary: 'Change a mapping\'s role; its members get their new highest role at once', body: updateMappingBody, response: mappingReply,
  },
  {
    operationId: 'deleteScimGroupMapping', method: 'DELETE', path: '/scim/group-mappings/{id}', params: { id }, fn: 'management', auth: 'management',
    tag, summary: 'Delete a mapping: keep_members=false removes the memberships only it granted, true keeps them as added by hand', query: deleteMappingQuery, response: z.object({ deleted: z.literal(true) }),
  },
  {
    operationId: 'listScimGroups', method: 'GET', path: '/scim/groups', fn: 'management', auth: 'management',
    tag, summary: 'The SCIM groups the identity provider pushed', query: groupListQuery, response: groupListReply,
  },
  {
    operationId: 'createScimSyncJob', method: 'POST', path: '/scim/sync-jobs', fn: 'management', auth: 'management',
    tag, summary: 'Make every workspace membership follow the mappings now (idempotent), and purge deleted groups; runs within the request', response: jobReply, successStatus: 202,
  },
  {
    operationId: 'getScimSyncJob', method: 'GET', path: '/scim/sync-jobs/{id}', params: { id }, fn: 'management', auth: 'management',
    tag, summary: 'A sync job and what it did', response: jobReply,
  },
  // SCIM 2.0, for the identity provider.
  {
    operationId: 'scimListUsers', method: 'GET', path: '/scim/v2/Users', fn: 'management', auth: 'management',
    tag, summary: 'SCIM 2.0: users (filter: userName, externalId or emails eq "…")', query: scimListQuery, response: scimListReply,
  },
  {
    operationId: 'scimCreateUser', method: 'POST', path: '/scim/v2/Users', fn: 'management', auth: 'management',
    tag, summary: 'SCIM 2.0: provision a user (an active one becomes an organization member)', body: scimUserBody, response: scimResource, successStatus: 201,
  },
  {
    operationId: 'scimGetUser', method: 'GET', path: '/scim/v2/Users/{id}', params: { id }, fn: 'management', auth: 'management',
    tag, summary: 'SCIM 2.0: one user', response: scimResource,
  },
  {
    operationId: 'scimReplaceUser', method: 'PUT', path: '/scim/v2/Users/{id}', params: { id }, fn: 'management', auth: 'management',
    tag, summary: 'SCIM 2.0: replace a user (active false: no longer a member of the organization or its workspaces)', body: scimUserBody, response: scimResource,
  },
  {
    operationId: 'scimPatchUser', method: 'PATCH', path: '/scim/v2/Users/{id}', params: { id }, fn: 'management', auth: 'management',
    tag, summary: 'SCIM 2.0: change a user (active, userName, name, emails, externalId)', body: scimPatchBody, response: scimResource,
  },
  {
    operationId: 'scimDeleteUser', method: 'DELETE', path: '/scim/v2/Users/{id}', params: { id }, fn: 'management', auth: 'management',
    tag, summary: 'SCIM 2.0: deprovision a user', successStatus: 204,
  },
  {
    operationId: 'scimListGroups', method: 'GET', path: '/scim/v2/Groups', fn: 'management', auth: 'management',
    tag, summary: 'SCIM 2.0: groups (filter: displayName or externalId eq "…")', query: scimListQuery, response: scimListReply,
  },
  {
    operationId: 'scimCreateGroup', method: 'POST', path: '/scim/v2/Groups', fn: 'management', auth: 'management',
    tag, summary: 'SCIM 2.0: push a group with its members', body: scimGroupBody, response: scimResource, successStatus: 201,
  },
  {
    operationId: 'scimGetGroup', method: 'GET', path: '/scim/v2/Groups/{id}', params: { id }, fn: 'management', auth: 'management',
    tag, summary: 'SCIM 2.0: one group', response: scimResource,
  },
  {
    operationId: 'scimReplaceGroup', method: 'PUT', path: '/scim/v2/Groups/{id}', params: { id }, fn: 'management', auth: 'management',
    tag, summary: 'SCIM 2.0: replace a group and its members', body: scimGroupBody, response: scimResource,
  },
  {
    operationId: 'scimPatchGroup', method: 'PATCH', path: '/scim/v2/Groups/{id}', params: { id }, fn: 'management', auth: 'management',
    tag, summary: 'SCIM 2.0: add or remove members, rename', body: scimPatchBody, response: scimResource,
  },
  {
    operationId: 'scimDeleteGroup', method: 'DELETE', path: '/scim/v2/Groups/{id}', params: { id }, fn: 'management', auth: 'management',
    tag, summary: 'SCIM 2.0: delete a group: it grants nothing from now on', successStatus: 204,
  },
] as const satisfies readonly RouteDef[];

export type ScimOperations = OperationsFor<typeof scimRoutes>;
