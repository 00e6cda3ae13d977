// The organization settings routes (management keys of an organization; personal accounts get 404).
import type { OperationsFor, RouteDef } from '../platform/http/route.js';
import { memberListReply, memberPageQuery, organizationSettingsReply, updateOrganizationSettingsBody } from './schemas.js';

export const organizationRoutes = [
  {
    operationId: 'getOrganizationSettings', method: 'GET', path: '/organization/settings', fn: 'management', auth: 'management', organizationOnly: true,
    tag: 'Organization', summary: 'Organization settings', response: organizationSettingsReply,
  },
  {
    operationId: 'updateOrganizationSettings', method: 'PATCH', path: '/organization/settings', fn: 'management', auth: 'management', organizationOnly: true,
    tag: 'Organization', summary: 'Update organization settings', body: updateOrganizationSettingsBody, response: organizationSettingsReply,
  },
  {
    operationId: 'listOrganizationMembers', method: 'GET', path: '/organization/members', fn: 'management', auth: 'management', organizationOnly: true,
    tag: 'Organization', summary: 'The people of the organization, with their roles (org:admin, org:member), oldest first', query: memberPageQuery, response: memberListReply,
  },
] as const satisfies readonly RouteDef[];

export type OrganizationOperations = OperationsFor<typeof organizationRoutes>;
