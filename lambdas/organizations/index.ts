// The organizations feature as other folders see it: organizations and their workspaces (the aggregate and
// its repository), and the organization settings routes.
export { OrganizationRepository, type CreditGrant } from './organization-repository.js';
export type { AccountKind, BudgetInterval, Organization, Workspace } from './types.js';
export { BUDGET_INTERVALS } from './types.js';
export { newWorkspace, SLUG_PATTERN } from './new-workspace.js';
export { organizationRoutes, type OrganizationOperations } from './routes.js';
export { createOrganizationOperations, type OrganizationPorts } from './operations.js';
export { workspaceFromItem } from './organization-item.js';
