// SCIM: the people and groups an identity provider pushes (SCIM 2.0 Users and Groups), group mappings (a
// group → a workspace, with a role), and sync jobs that make workspace memberships follow the mappings.

export interface ScimUser {
  id: string;
  org_id: string;
  user_name: string;
  external_id: string | null;
  given_name: string | null;
  family_name: string | null;
  email: string;
  active: boolean;
  /** The organization member this user is while active; null while inactive. */
  member_id: string | null;
  /**
   * SCIM made that member (true), or found one with the user's email already (false): deprovisioning removes
   * only a member SCIM made; one found is only let go (its SCIM-granted workspace memberships go).
   */
  member_created: boolean;
  created_at: string;
  updated_at: string;
}

export interface ScimGroup {
  id: string;
  organization_id: string;
  external_id: string | null;
  display_name: string;
  /** SCIM user ids. */
  member_ids: string[];
  /** Deleted by the identity provider: grants nothing; the next sync job purges it (and counts it). */
  deleted_at: string | null;
  created_at: string;
  updated_at: string;
}

export type MappingRole = 'admin' | 'member';

export interface GroupMapping {
  id: string;
  organization_id: string;
  scim_group_id: string;
  workspace_id: string;
  role: MappingRole;
  created_at: string;
  updated_at: string;
}

export interface SyncJob {
  id: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  synced_groups: number | null;
  deleted_groups: number | null;
  error_message: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** What it changed (this gateway's addition). */
  memberships: { added: number; updated: number; removed: number } | null;
}
