// The workspace routes (management keys): workspaces of the organization and their budgets.
import type { OperationsFor, PathParam, RouteDef } from '../platform/http/route.js';
import { anyOf, UUID } from '../platform/http/path-params.js';
import { BUDGET_INTERVALS, SLUG_PATTERN } from '../organizations/index.js';
import {
  budgetListReply, budgetReply, createWorkspaceBody, deletedReply, listWorkspacesQuery, updateWorkspaceBody, upsertBudgetBody, workspaceListReply, workspaceReply,
  userIdsBody, workspaceMemberListReply, workspaceMembersAddedReply, workspaceMembersRemovedReply,
} from './schemas.js';

const workspaceRef: PathParam = { pattern: anyOf(UUID, new RegExp(`^(?=.{1,64}$)${SLUG_PATTERN.source.slice(1)}`)), expected: 'a workspace id (UUID) or slug (lowercase letters and digits in hyphen-separated segments, at most 64 characters)' };
const interval: PathParam = { pattern: new RegExp(`^(?:${BUDGET_INTERVALS.join('|')})$`), expected: `one of ${BUDGET_INTERVALS.join(', ')}` };

export const workspaceRoutes = [
  {
    operationId: 'listWorkspaces', method: 'GET', path: '/workspaces', fn: 'management', auth: 'management',
    tag: 'Workspaces', summary: 'List workspaces of the organization, oldest first', query: listWorkspacesQuery, response: workspaceListReply,
  },
  {
    operationId: 'createWorkspace', method: 'POST', path: '/workspaces', fn: 'management', auth: 'management',
    tag: 'Workspaces', summary: 'Create a workspace (slug unique in the organization)', body: createWorkspaceBody, response: workspaceReply, successStatus: 201,
  },
  {
    operationId: 'getWorkspace', method: 'GET', path: '/workspaces/{id}', params: { id: workspaceRef }, fn: 'management', auth: 'management',
    tag: 'Workspaces', summary: 'Get a workspace by id or slug', response: workspaceReply,
  },
  {
    operationId: 'updateWorkspace', method: 'PATCH', path: '/workspaces/{id}', params: { id: workspaceRef }, fn: 'management', auth: 'management',
    tag: 'Workspaces', summary: 'Update a workspace', body: updateWorkspaceBody, response: workspaceReply,
  },
  {
    operationId: 'deleteWorkspace', method: 'DELETE', path: '/workspaces/{id}', params: { id: workspaceRef }, fn: 'management', auth: 'management',
    tag: 'Workspaces', summary: 'Delete a workspace that has no API keys (409 otherwise)', response: deletedReply,
  },
  {
    operationId: 'listWorkspaceBudgets', method: 'GET', path: '/workspaces/{workspace_ref}/budgets', params: { workspace_ref: workspaceRef }, fn: 'management', auth: 'management',
    tag: 'Workspaces', summary: 'Budgets of a workspace (id or slug), with their current usage', response: budgetListReply,
  },
  {
    operationId: 'getWorkspaceBudget', method: 'GET', path: '/workspaces/{workspace_ref}/budgets/{interval}', params: { workspace_ref: workspaceRef, interval }, fn: 'management', auth: 'management',
    tag: 'Workspaces', summary: 'One budget: daily, weekly, monthly or lifetime', response: budgetReply,
  },
  {
    operationId: 'putWorkspaceBudget', method: 'PUT', path: '/workspaces/{workspace_ref}/budgets/{interval}', params: { workspace_ref: workspaceRef, interval }, fn: 'management', auth: 'management',
    tag: 'Workspaces', summary: 'Create or replace a budget; enforced from the next request', body: upsertBudgetBody, response: budgetReply,
  },
  {
    operationId: 'deleteWorkspaceBudget', method: 'DELETE', path: '/workspaces/{workspace_ref}/budgets/{interval}', params: { workspace_ref: workspaceRef, interval }, fn: 'management', auth: 'management',
    tag: 'Workspaces', summary: 'Delete a budget (succeeds if there was none)', response: deletedReply,
  },
  {
    operationId: 'listWorkspaceMembers', method: 'GET', path: '/workspaces/{id}/members', params: { id: workspaceRef }, fn: 'management', auth: 'management',
    tag: 'Workspaces', summary: 'Members of the workspace, oldest first', query: listWorkspacesQuery, response: workspaceMemberListReply,
  },
  {
    operationId: 'addWorkspaceMembers', method: 'POST', path: '/workspaces/{id}/members/add', params: { id: workspaceRef }, fn: 'management', auth: 'management',
    tag: 'Workspaces', summary: 'Add members of the organization to the workspace (those already in it stay)', body: userIdsBody, response: workspaceMembersAddedReply,
  },
  {
    operationId: 'removeWorkspaceMembers', method: 'POST', path: '/workspaces/{id}/members/remove', params: { id: workspaceRef }, fn: 'management', auth: 'management',
    tag: 'Workspaces', summary: 'Remove members from the workspace', body: userIdsBody, response: workspaceMembersRemovedReply,
  },
] as const satisfies readonly RouteDef[];

export type WorkspaceOperations = OperationsFor<typeof workspaceRoutes>;
