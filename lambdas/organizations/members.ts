// The people of an organization (members, with an organization role) and which workspaces they belong to
// (workspace members, with a workspace role). A new organization starts with its owner as an admin member
// of it and of its first workspace; the operator command adds and removes members (SCIM sync will too).
import { randomBytes } from 'node:crypto';
import { itemKeys } from '../platform/dynamo/item-keys.js';

export type MemberRole = 'org:admin' | 'org:member';
export type WorkspaceRole = 'admin' | 'member';

export interface Member {
  /** The member's user id (`user_…`). */
  id: string;
  org_id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  role: MemberRole;
  created_at: string;
}

export interface WorkspaceMember {
  id: string;
  workspace_id: string;
  user_id: string;
  role: WorkspaceRole;
  created_at: string;
  /** The SCIM group mappings that grant this membership; absent or empty: added by hand (SCIM never touches it). */
  scim_mappings?: string[];
}

export interface NewMember {
  email: string;
  firstName?: string | null;
  lastName?: string | null;
  role?: MemberRole;
}

export const newUserId = (): string => `user_${randomBytes(12).toString('base64url')}`;

export function newMember(orgId: string, input: NewMember, now: string): Member {
  return { id: newUserId(), org_id: orgId, email: input.email.trim().toLowerCase(), first_name: input.firstName ?? null, last_name: input.lastName ?? null, role: input.role ?? 'org:member', created_at: now };
}

export function memberItem(member: Member): Record<string, unknown> {
  return { ...itemKeys.member(member.org_id, member.id), type: 'member', ...member };
}

/** One item per email and organization: two members of one organization never share an email. */
export function memberEmailClaim(member: Pick<Member, 'org_id' | 'email' | 'id'>): Record<string, unknown> {
  return { ...itemKeys.memberEmail(member.org_id, member.email), type: 'member_email', user_id: member.id };
}

export function workspaceMemberItem(orgId: string, member: WorkspaceMember): Record<string, unknown> {
  return { ...itemKeys.workspaceMember(orgId, member.workspace_id, member.user_id), type: 'workspace_member', ...member };
}
