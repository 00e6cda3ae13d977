// The SCIM routes: what the identity provider pushes (users become organization members while active; groups
// hold users), the mappings from groups to workspaces, and sync jobs; workspace memberships follow the
// mappings after every change (reconcile.ts), and a sync job does the same on demand.
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { newMember, type MemberRepository, type WorkspaceRepository } from '../organizations/index.js';
import { ConflictError, InvalidInputError, NotFoundError } from '../platform/errors.js';
import type { Principal } from '../platform/http/auth.js';
import { listPage } from '../platform/http/list-page.js';
import { echo } from '../platform/echo.js';
import type { TextResult } from '../platform/http/route.js';
import { reconcile, releaseMapping } from './reconcile.js';
import type { ScimRepository } from './scim-repository.js';
import type { ScimOperations } from './routes.js';
import { scimEmailAddress, scimGroupBody, scimUserBody, type groupSchema, type scimPatchBody } from './schemas.js';
import type { GroupMapping, ScimGroup, ScimUser, SyncJob } from './types.js';

export interface ScimPorts {
  scim: ScimRepository;
  members: Pick<MemberRepository, 'add' | 'get' | 'byEmail' | 'remove' | 'memberships' | 'putMembership' | 'deleteMembership'>;
  workspaces: Pick<WorkspaceRepository, 'getWorkspace'>;
  clock: () => Date;
}

const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
const NO_CONTENT: TextResult = { kind: 'text', status: 204, headers: {}, body: '' };

function userResource(user: ScimUser): Record<string, unknown> {
  return {
    schemas: [USER_SCHEMA], id: user.id, ...(user.external_id ? { externalId: user.external_id } : {}), userName: user.user_name,
    name: { ...(user.given_name ? { givenName: user.given_name } : {}), ...(user.family_name ? { familyName: user.family_name } : {}) },
    emails: [{ value: user.email, primary: true }], active: user.active,
    meta: { resourceType: 'User', created: user.created_at, lastModified: user.updated_at },
  };
}

function groupResource(group: ScimGroup): Record<string, unknown> {
  return {
    schemas: [GROUP_SCHEMA], id: group.id, ...(group.external_id ? { externalId: group.external_id } : {}), displayName: group.display_name,
    members: group.member_ids.map((value) => ({ value })), meta: { resourceType: 'Group', created: group.created_at, lastModified: group.updated_at },
  };
}

const groupView = (group: ScimGroup): z.infer<typeof groupSchema> => ({
  id: group.id, organization_id: group.organization_id, external_id: group.external_id, display_name: group.display_name, created_at: group.created_at, updated_at: group.updated_at,
});

/** `attribute eq "value"`, the one filter identity providers send; the attribute's value is read by `get`. */
function filterOf<T>(filter: string | undefined, attributes: Record<string, (resource: T) => string | undefined | string[]>): (resource: T) => boolean {
  if (filter === undefined) return () => true;
  const match = /^\s*([A-Za-z.]+)\s+eq\s+"((?:[^"\\]|\\.)*)"\s*$/i.exec(filter);
  const read = match ? Object.entries(attributes).find(([name]) => name.toLowerCase() === match[1]!.toLowerCase())?.[1] : undefined;
  if (!match || !read) throw new InvalidInputError(`Invalid query.filter: only ${Object.keys(attributes).map((name) => `${name} eq "…"`).join(', ')} are supported`);
  const wanted = match[2]!.replace(/\\(.)/g, '$1').toLowerCase();
  return (resource) => {
    const value = read(resource);
    return Array.isArray(value) ? value.some((entry) => entry.toLowerCase() === wanted) : value?.toLowerCase() === wanted;
  };
}

function listResponse<T>(all: T[], query: { startIndex?: number | undefined; count?: number | undefined }, view: (item: T) => Record<string, unknown>) {
  const start = query.startIndex ?? 1;
  const page = all.slice(start - 1, start - 1 + (query.count ?? 100));
  return { schemas: [LIST_SCHEMA], totalResults: all.length, startIndex: start, itemsPerPage: page.length, Resources: page.map(view) };
}

type UserBody = z.infer<typeof scimUserBody>;
type GroupBody = z.infer<typeof scimGroupBody>;
type PatchBody = z.infer<typeof scimPatchBody>;

// A userName stands for the email only when it is one (checked as emails[].value is).
const isEmail = (value: string) => scimEmailAddress.safeParse(value).success;
const primaryEmail = (body: Pick<UserBody, 'emails' | 'userName'>) => (body.emails?.find((email) => email.primary) ?? body.emails?.[0])?.value ?? (isEmail(body.userName) ? body.userName : undefined);

export function createScimOperations(deps: ScimPorts): ScimOperations {
  const orgOf = (principal: Principal) => principal.key.org_id;
  const now = () => deps.clock().toISOString();
  const sync = (orgId: string) => reconcile(orgId, deps.scim, deps.members, now());

  async function userFound(orgId: string, id: string): Promise<ScimUser> {
    const user = await deps.scim.get(orgId, 'USER', id);
    if (!user) throw new NotFoundError(`SCIM user not found: ${id}`);
    return user;
  }
  async function groupFound(orgId: string, id: string): Promise<ScimGroup> {
    const group = await deps.scim.get(orgId, 'GROUP', id);
    if (!group || group.deleted_at) throw new NotFoundError(`SCIM group not found: ${id}`);
    return group;
  }
  async function mappingFound(orgId: string, id: string): Promise<GroupMapping> {
    const mapping = await deps.scim.get(orgId, 'MAP', id);
    if (!mapping) throw new NotFoundError(`SCIM group mapping not found: ${id}`);
    return mapping;
  }

  /**
   * The user's organization membership as its `active` says: a member while active (the one SCIM made, or
   * the one with the user's email), none while not. A member SCIM made is removed when the user goes; one it
   * found is only let go (the mappings' workspace memberships then go with the next reconcile).
   */
  async function applyMembership(user: ScimUser): Promise<ScimUser> {
    if (user.active) {
      // Still there? (an operator may have removed the member meanwhile: link again, or make one again)
      if (user.member_id && (await deps.members.get(user.org_id, user.member_id))) return user;
      const existing = await deps.members.byEmail(user.org_id, user.email);
      if (existing) return { ...user, member_id: existing.id, member_created: false };
      const member = newMember(user.org_id, { email: user.email, firstName: user.given_name, lastName: user.family_name, role: 'org:member' }, now());
      if (!(await deps.members.add(member))) throw new ConflictError(`A member with email ${user.email} was added meanwhile; send the user again`);
      return { ...user, member_id: member.id, member_created: true };
    }
    if (user.member_id && user.member_created) {
      const member = await deps.members.get(user.org_id, user.member_id);
      // The member's guardrail assignments stay: they govern the keys the member created (creator_user_id),
      // which outlive the membership.
      if (member) await deps.members.remove(member);
    }
    return { ...user, member_id: null, member_created: false };
  }

  async function saveUser(orgId: string, current: ScimUser | undefined, body: UserBody): Promise<ScimUser> {
    const email = primaryEmail(body);
    if (!email) throw new InvalidInputError('Invalid body.emails: a user needs an email (emails, or an email as userName)');
    const others = (await deps.scim.list(orgId, 'USER')).filter((user) => user.id !== current?.id);
    if (others.some((user) => user.user_name.toLowerCase() === body.userName.toLowerCase())) throw new ConflictError(`A SCIM user with userName ${body.userName} exists (uniqueness)`);
    if (others.some((user) => user.email === email.toLowerCase())) throw new ConflictError(`A SCIM user with email ${email} exists (uniqueness)`);
    const at = now();
    let user: ScimUser = {
      id: current?.id ?? randomUUID(), org_id: orgId, user_name: body.userName, external_id: body.externalId ?? null,
      given_name: body.name?.givenName ?? null, family_name: body.name?.familyName ?? null, email: email.toLowerCase(), active: body.active ?? true,
      member_id: current?.member_id ?? null, member_created: current?.member_created ?? false, created_at: current?.created_at ?? at, updated_at: at,
    };
    // A changed email is a different member: the old membership goes first.
    if (current?.member_id && current.email !== user.email) user = await applyMembership({ ...user, active: false }).then((cleared) => ({ ...cleared, active: user.active }));
    user = await applyMembership(user);
    const stored = await deps.scim.putUser(user, current);
    if (stored !== 'stored') throw new ConflictError(`A SCIM user with ${stored.taken} ${stored.taken === 'userName' ? body.userName : email} exists (uniqueness)`);
    await sync(orgId);
    return user;
  }

  async function saveGroup(orgId: string, current: ScimGroup | undefined, body: GroupBody): Promise<ScimGroup> {
    const at = now();
    const memberIds = [...new Set((body.members ?? []).map((member) => member.value))];
    // A member the group did not have yet must be a user of the organization (RFC 7644: invalidValue).
    const added = memberIds.filter((id) => !current?.member_ids.includes(id));
    if (added.length > 0) {
      const users = new Set((await deps.scim.list(orgId, 'USER')).map((user) => user.id));
      const unknown = added.find((id) => !users.has(id));
      if (unknown !== undefined) throw new InvalidInputError(`Invalid body.members: no user ${echo(unknown, 64)} in this organization`, { metadata: { param: 'members' } });
    }
    const group: ScimGroup = {
      id: current?.id ?? randomUUID(), organization_id: orgId, external_id: body.externalId ?? null, display_name: body.displayName,
      member_ids: memberIds, deleted_at: null, created_at: current?.created_at ?? at, updated_at: at,
    };
    await deps.scim.put(orgId, 'GROUP', group);
    await sync(orgId);
    return group;
  }

  /** A user's PATCH operations as the body a PUT would send. */
  function patchedUser(user: ScimUser, body: PatchBody): UserBody {
    const next: UserBody = {
      userName: user.user_name, ...(user.external_id ? { externalId: user.external_id } : {}), active: user.active,
      name: { ...(user.given_name ? { givenName: user.given_name } : {}), ...(user.family_name ? { familyName: user.family_name } : {}) }, emails: [{ value: user.email, primary: true }],
    };
    const set = (path: string, value: unknown) => {
      const field = path.toLowerCase();
      if (field === 'active') {
        if (typeof value === 'boolean') next.active = value;
        else if (typeof value === 'string' && /^(true|false)$/i.test(value)) next.active = value.toLowerCase() === 'true';
        else throw new InvalidInputError('Invalid body.Operations: active takes true or false');
      } else if (field === 'username') next.userName = value as string;
      else if (field === 'externalid') next.externalId = value as string;
      else if (field === 'name.givenname') next.name = { ...next.name, givenName: value as string };
      else if (field === 'name.familyname') next.name = { ...next.name, familyName: value as string };
      else if (field === 'emails' || field.startsWith('emails[')) {
        const email = typeof value === 'string' ? value : Array.isArray(value) ? (value[0] as { value?: unknown } | undefined)?.value : (value as { value?: unknown } | null)?.value;
        next.emails = [{ value: email as string, primary: true }];
      } else if (field === 'name' && value && typeof value === 'object') next.name = { ...next.name, ...(value as object) };
      // Any other attribute (displayName, title, phone numbers, extensions …) is accepted and not kept, as the
      // schema says of unknown attributes.
    };
    for (const operation of body.Operations) {
      if (operation.op === 'remove') {
        const field = operation.path?.toLowerCase();
        if (field === 'active' || field === 'username' || field === 'emails') throw new InvalidInputError(`Invalid body.Operations: ${operation.path} cannot be removed from a user (use active: false to deprovision)`);
        continue;
      }
      if (operation.path) set(operation.path, operation.value);
      else if (operation.value && typeof operation.value === 'object') for (const [path, value] of Object.entries(operation.value)) set(path, value);
      else throw new InvalidInputError('Invalid body.Operations: an operation needs a path or an object value');
    }
    // The result is checked as a PUT body is: a 400 naming what is wrong, never a bad value stored.
    const checked = scimUserBody.safeParse(next);
    if (!checked.success) {
      const issue = checked.error.issues[0]!;
      throw new InvalidInputError(`Invalid body.Operations: the user's ${issue.path.join('.') || 'value'} ${issue.message}`);
    }
    return checked.data;
  }

  function patchedGroup(group: ScimGroup, body: PatchBody): GroupBody {
    let name = group.display_name;
    let externalId = group.external_id;
    const members = new Set(group.member_ids);
    const values = (value: unknown) => (Array.isArray(value) ? value : value === undefined ? [] : [value]).map((entry) => {
      const id = typeof entry === 'string' ? entry : entry && typeof entry === 'object' ? (entry as { value?: unknown }).value : undefined;
      if (typeof id !== 'string' || id.length === 0 || id.length > 128) throw new InvalidInputError('Invalid body.Operations: a member is a user id (1 to 128 characters), or an object with one as its value');
      return id;
    });
    for (const operation of body.Operations) {
      const path = operation.path?.trim();
      const filtered = path ? /^members\[\s*value\s+eq\s+"([^"]+)"\s*\]$/i.exec(path) : null;
      if (filtered && operation.op === 'remove') members.delete(filtered[1]!);
      else if (path?.toLowerCase() === 'members') {
        if (operation.op === 'replace') members.clear();
        for (const value of values(operation.value)) {
          if (!value) throw new InvalidInputError('Invalid body.Operations: a member needs a value (the user id)');
          if (operation.op === 'remove') members.delete(value);
          else members.add(value);
        }
        if (operation.op === 'remove' && operation.value === undefined) members.clear();
      } else if (path?.toLowerCase() === 'displayname' && operation.op !== 'remove' && typeof operation.value === 'string') name = operation.value;
      else if (path?.toLowerCase() === 'externalid' && operation.op !== 'remove' && typeof operation.value === 'string') externalId = operation.value;
      else if (!path && operation.op !== 'remove' && operation.value && typeof operation.value === 'object') {
        const value = operation.value as { displayName?: unknown; externalId?: unknown; members?: unknown };
        if (typeof value.displayName === 'string') name = value.displayName;
        if (typeof value.externalId === 'string') externalId = value.externalId;
        if (value.members !== undefined) {
          if (operation.op === 'replace') members.clear();
          for (const member of values(value.members)) members.add(member);
        }
      } else {
        throw new InvalidInputError(`Invalid body.Operations: ${operation.op} ${path ?? '(no path)'} is not supported on a group`);
      }
    }
    const checked = scimGroupBody.safeParse({ displayName: name, ...(externalId ? { externalId } : {}), members: [...members].map((value) => ({ value })) });
    if (!checked.success) {
      const issue = checked.error.issues[0]!;
      throw new InvalidInputError(`Invalid body.Operations: the group's ${issue.path.join('.') || 'value'} ${issue.message}`);
    }
    return checked.data;
  }

  async function runJob(orgId: string): Promise<SyncJob> {
    const created = now();
    const job: SyncJob = { id: randomUUID(), status: 'running', synced_groups: null, deleted_groups: null, error_message: null, created_at: created, started_at: created, finished_at: null, memberships: null };
    await deps.scim.put(orgId, 'JOB', job);
    let done: SyncJob;
    try {
      const deleted = (await deps.scim.list(orgId, 'GROUP')).filter((group) => group.deleted_at !== null);
      const result = await sync(orgId);
      const purged = new Set(deleted.map((group) => group.id));
      for (const mapping of await deps.scim.list(orgId, 'MAP')) if (purged.has(mapping.scim_group_id)) await deps.scim.delete(orgId, 'MAP', mapping.id);
      for (const group of deleted) await deps.scim.delete(orgId, 'GROUP', group.id);
      done = { ...job, status: 'succeeded', synced_groups: result.groups, deleted_groups: deleted.length, finished_at: now(), memberships: { added: result.added, updated: result.updated, removed: result.removed } };
    } catch (err) {
      done = { ...job, status: 'failed', error_message: `sync failed: ${(err as Error).name}`, finished_at: now() };
    }
    await deps.scim.put(orgId, 'JOB', done);
    return done;
  }

  return {
    async listScimGroupMappings({ principal, query }) {
      const all = (await deps.scim.list(orgOf(principal), 'MAP')).sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
      return { body: listPage(all, query) };
    },
    async createScimGroupMapping({ principal, body }) {
      const orgId = orgOf(principal);
      const group = await deps.scim.get(orgId, 'GROUP', body.scim_group_id);
      if (!group || group.deleted_at) throw new InvalidInputError(`Invalid body.scim_group_id: no SCIM group ${body.scim_group_id} in this organization`);
      if (!(await deps.workspaces.getWorkspace(orgId, body.workspace_id))) throw new InvalidInputError(`Invalid body.workspace_id: no workspace ${body.workspace_id} in this organization`);
      const same = (await deps.scim.list(orgId, 'MAP')).find((mapping) => mapping.scim_group_id === body.scim_group_id && mapping.workspace_id === body.workspace_id);
      if (same && same.role !== body.role) throw new ConflictError(`Group ${body.scim_group_id} is mapped to workspace ${body.workspace_id} as ${same.role} already: change its role with PATCH`);
      const at = now();
      const mapping: GroupMapping = same ?? { id: randomUUID(), organization_id: orgId, scim_group_id: body.scim_group_id, workspace_id: body.workspace_id, role: body.role, created_at: at, updated_at: at };
      if (!same) await deps.scim.put(orgId, 'MAP', mapping);
      await sync(orgId);
      return { status: 201, body: { data: mapping } };
    },
    async getScimGroupMapping({ principal, params }) {
      return { body: { data: await mappingFound(orgOf(principal), params.id) } };
    },
    async updateScimGroupMapping({ principal, params, body }) {
      const orgId = orgOf(principal);
      const mapping = { ...(await mappingFound(orgId, params.id)), role: body.role, updated_at: now() };
      await deps.scim.put(orgId, 'MAP', mapping);
      await sync(orgId);
      return { body: { data: mapping } };
    },
    async deleteScimGroupMapping({ principal, params, query }) {
      const orgId = orgOf(principal);
      const mapping = await mappingFound(orgId, params.id);
      if (query.keep_members === 'true') await releaseMapping(orgId, mapping.id, deps.members);
      await deps.scim.delete(orgId, 'MAP', mapping.id);
      await sync(orgId);
      return { body: { deleted: true } };
    },
    async listScimGroups({ principal, query }) {
      const all = (await deps.scim.list(orgOf(principal), 'GROUP')).filter((group) => group.deleted_at === null).sort((a, b) => a.display_name.localeCompare(b.display_name) || a.id.localeCompare(b.id));
      return { body: listPage(all, query, groupView) };
    },
    async createScimSyncJob({ principal }) {
      return { status: 202, body: { data: await runJob(orgOf(principal)) } };
    },
    async getScimSyncJob({ principal, params }) {
      const job = await deps.scim.get(orgOf(principal), 'JOB', params.id);
      if (!job) throw new NotFoundError(`SCIM sync job not found: ${params.id}`);
      return { body: { data: job } };
    },

    async scimListUsers({ principal, query }) {
      const matches = filterOf<ScimUser>(query.filter, { userName: (user) => user.user_name, externalId: (user) => user.external_id ?? undefined, emails: (user) => [user.email], 'emails.value': (user) => [user.email] });
      const all = (await deps.scim.list(orgOf(principal), 'USER')).filter(matches).sort((a, b) => a.created_at.localeCompare(b.created_at));
      return { body: listResponse(all, query, userResource) };
    },
    async scimCreateUser({ principal, body }) {
      return { status: 201, body: userResource(await saveUser(orgOf(principal), undefined, body)) };
    },
    async scimGetUser({ principal, params }) {
      return { body: userResource(await userFound(orgOf(principal), params.id)) };
    },
    async scimReplaceUser({ principal, params, body }) {
      const orgId = orgOf(principal);
      return { body: userResource(await saveUser(orgId, await userFound(orgId, params.id), body)) };
    },
    async scimPatchUser({ principal, params, body }) {
      const orgId = orgOf(principal);
      const user = await userFound(orgId, params.id);
      return { body: userResource(await saveUser(orgId, user, patchedUser(user, body))) };
    },
    async scimDeleteUser({ principal, params }) {
      const orgId = orgOf(principal);
      const user = await applyMembership({ ...(await userFound(orgId, params.id)), active: false });
      await deps.scim.deleteUser(user);
      // Groups no longer list it (each taken out in place: a group changed meanwhile keeps its change).
      for (const group of await deps.scim.list(orgId, 'GROUP')) {
        if (group.member_ids.includes(user.id)) await deps.scim.removeGroupMember(orgId, group.id, user.id, now());
      }
      await sync(orgId);
      return NO_CONTENT;
    },
    async scimListGroups({ principal, query }) {
      const matches = filterOf<ScimGroup>(query.filter, { displayName: (group) => group.display_name, externalId: (group) => group.external_id ?? undefined });
      const all = (await deps.scim.list(orgOf(principal), 'GROUP')).filter((group) => group.deleted_at === null && matches(group)).sort((a, b) => a.created_at.localeCompare(b.created_at));
      return { body: listResponse(all, query, groupResource) };
    },
    async scimCreateGroup({ principal, body }) {
      const orgId = orgOf(principal);
      if ((await deps.scim.list(orgId, 'GROUP')).some((group) => group.deleted_at === null && group.display_name.toLowerCase() === body.displayName.toLowerCase())) {
        throw new ConflictError(`A SCIM group named ${body.displayName} exists (uniqueness)`);
      }
      return { status: 201, body: groupResource(await saveGroup(orgId, undefined, body)) };
    },
    async scimGetGroup({ principal, params }) {
      return { body: groupResource(await groupFound(orgOf(principal), params.id)) };
    },
    async scimReplaceGroup({ principal, params, body }) {
      const orgId = orgOf(principal);
      return { body: groupResource(await saveGroup(orgId, await groupFound(orgId, params.id), body)) };
    },
    async scimPatchGroup({ principal, params, body }) {
      const orgId = orgOf(principal);
      const group = await groupFound(orgId, params.id);
      return { body: groupResource(await saveGroup(orgId, group, patchedGroup(group, body))) };
    },
    async scimDeleteGroup({ principal, params }) {
      const orgId = orgOf(principal);
      const group = await groupFound(orgId, params.id);
      await deps.scim.put(orgId, 'GROUP', { ...group, deleted_at: now(), updated_at: now() });
      await sync(orgId);
      return NO_CONTENT;
    },
  };
}
