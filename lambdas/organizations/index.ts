// The organizations feature as other folders see it: organizations and their workspaces (the types, the
// item codecs and one repository each), and the organization settings routes.
export { OrganizationRepository, type DefaultOrganization } from './organization-repository.js';
export { WorkspaceRepository } from './workspace-repository.js';
export type { AccountKind, BudgetInterval, Organization, Workspace } from './types.js';
export { BUDGET_INTERVALS } from './types.js';
export { DEFAULT_GUARDRAIL_PREFIX, defaultGuardrailId, newWorkspace, SLUG_PATTERN } from './new-workspace.js';
export { organizationRoutes, type OrganizationOperations } from './routes.js';
export { createOrganizationOperations, type OrganizationPorts } from './operations.js';
export { orgFromItem, workspaceFromItem } from './organization-item.js';
export { MemberRepository } from './member-repository.js';
export { newMember, type Member, type MemberRole, type NewMember, type WorkspaceMember } from './members.js';
export { createOrganization } from './create-organization.js';
