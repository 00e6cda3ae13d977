// Workspace memberships made to follow the group mappings: every active user of a mapped group is a member
// of the mapped workspace with the highest role any of its mappings gives; a membership the mappings granted
// and no longer grant is removed; a membership added by hand is never touched. Running it twice changes
// nothing the second time.
import type { MemberRepository, WorkspaceMember } from '../organizations/index.js';
import type { ScimRepository } from './scim-repository.js';
import type { MappingRole } from './types.js';

export interface ReconcileResult {
  added: number;
  updated: number;
  removed: number;
  /** Groups that grant (not deleted). */
  groups: number;
}

const RANK: Record<MappingRole, number> = { member: 0, admin: 1 };
const keyOf = (workspaceId: string, userId: string) => `${workspaceId} ${userId}`;
const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((entry) => b.includes(entry));

export async function reconcile(orgId: string, scim: Pick<ScimRepository, 'list'>, members: Pick<MemberRepository, 'memberships' | 'putMembership' | 'deleteMembership'>, now: string): Promise<ReconcileResult> {
  const [groups, mappings, users, memberships] = await Promise.all([scim.list(orgId, 'GROUP'), scim.list(orgId, 'MAP'), scim.list(orgId, 'USER'), members.memberships(orgId)]);
  const live = new Map(groups.filter((group) => group.deleted_at === null).map((group) => [group.id, group]));
  const memberOf = new Map(users.filter((user) => user.active && user.member_id).map((user) => [user.id, user.member_id!]));

  const desired = new Map<string, { workspaceId: string; userId: string; role: MappingRole; mappings: string[] }>();
  for (const mapping of mappings) {
    const group = live.get(mapping.scim_group_id);
    if (!group) continue;
    for (const scimUserId of group.member_ids) {
      const userId = memberOf.get(scimUserId);
      if (!userId) continue;
      const key = keyOf(mapping.workspace_id, userId);
      const entry = desired.get(key) ?? { workspaceId: mapping.workspace_id, userId, role: mapping.role, mappings: [] };
      if (RANK[mapping.role] > RANK[entry.role]) entry.role = mapping.role;
      if (!entry.mappings.includes(mapping.id)) entry.mappings.push(mapping.id);
      desired.set(key, entry);
    }
  }

  const existing = new Map(memberships.map((entry) => [keyOf(entry.workspace_id, entry.user_id), entry]));
  const managed = (entry: WorkspaceMember) => (entry.scim_mappings?.length ?? 0) > 0;
  const result: ReconcileResult = { added: 0, updated: 0, removed: 0, groups: live.size };
  for (const [key, want] of desired) {
    const have = existing.get(key);
    const mappingIds = want.mappings.sort();
    if (!have) {
      const entry: WorkspaceMember = { id: `${want.workspaceId}:${want.userId}`, workspace_id: want.workspaceId, user_id: want.userId, role: want.role, created_at: now, scim_mappings: mappingIds };
      if (await members.putMembership(orgId, entry)) result.added += 1;
    } else if (managed(have) && (have.role !== want.role || !sameSet(have.scim_mappings!, mappingIds))) {
      if (await members.putMembership(orgId, { ...have, role: want.role, scim_mappings: mappingIds })) result.updated += 1;
    }
  }
  for (const [key, have] of existing) {
    if (!managed(have) || desired.has(key)) continue;
    await members.deleteMembership(orgId, have.workspace_id, have.user_id);
    result.removed += 1;
  }
  return result;
}

/**
 * A mapping deleted with keep_members: the memberships it alone granted stay, as added by hand; those other
 * mappings grant too just stop naming it.
 */
export async function releaseMapping(orgId: string, mappingId: string, members: Pick<MemberRepository, 'memberships' | 'putMembership'>): Promise<number> {
  let kept = 0;
  for (const entry of await members.memberships(orgId)) {
    if (!entry.scim_mappings?.includes(mappingId)) continue;
    await members.putMembership(orgId, { ...entry, scim_mappings: entry.scim_mappings.filter((id) => id !== mappingId) });
    kept += 1;
  }
  return kept;
}
