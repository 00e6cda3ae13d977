// SCIM over DynamoDB Local through the real handlers: an identity provider's pushes (SCIM 2.0 Users and
// Groups) make organization members, group mappings make workspace members with the highest role, changes
// follow at once, a sync job changes nothing the second time, members added by hand are never touched, and
// other organizations are kept out; replies in the shapes @openrouter/sdk parses.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  CreateScimGroupMappingResponse$inboundSchema, CreateScimSyncJobResponse$inboundSchema, GetScimSyncJobResponse$inboundSchema,
  ListScimGroupMappingsResponse$inboundSchema, ListScimGroupsResponse$inboundSchema, UpdateScimGroupMappingResponse$inboundSchema,
} from '@openrouter/sdk/models';
import { createTestStore, type TestStore } from '../support/store.js';
import { createTenant } from '../support/tenants.js';
import { manage, type Json } from '../support/handler-calls.js';
import { newMember } from '../../lambdas/organizations/index.js';

let store: TestStore;
let admin: string;
let otherAdmin: string;
let orgId: string;
let workspaceId: string;

beforeAll(async () => {
  store = await createTestStore();
  const tenant = await createTenant(store.deps);
  orgId = tenant.orgId;
  admin = (await tenant.addKey('management')).text;
  otherAdmin = (await (await createTenant(store.deps, 'organization', 'Other')).addKey('management')).text;
  const created = await manage(store.deps, admin, 'POST', '/workspaces', { name: 'Engineering', slug: 'engineering' });
  expect(created.status).toBe(201);
  workspaceId = created.json.data.id as string;
});

afterAll(async () => {
  await store?.drop();
});

const call = (method: string, path: string, body?: unknown, query?: Record<string, string>, key = admin) => manage(store.deps, key, method, path, body, query);
const pushUser = async (email: string, active = true) => {
  const reply = await call('POST', '/scim/v2/Users', {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: email, name: { givenName: email.split('@')[0], familyName: 'Doe' },
    emails: [{ value: email, primary: true, type: 'work' }], active, 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { department: 'R&D' },
  });
  expect(reply.status).toBe(201);
  return reply.json;
};
const workspaceMembers = async () => {
  const members = (await call('GET', '/organization/members')).json.data as Json[];
  const emailOf = new Map(members.map((member) => [member.id, member.email]));
  return Object.fromEntries(((await call('GET', `/workspaces/${workspaceId}/members`)).json.data as Json[]).map((entry) => [emailOf.get(entry.user_id) ?? entry.user_id, entry.role]));
};

describe('SCIM', () => {
  it('turns pushed users into members, and mapped groups into workspace memberships that follow every change', async () => {
    const alice = await pushUser('alice@acme.test');
    const bob = await pushUser('bob@acme.test');
    await pushUser('carol@acme.test', false);
    expect(alice).toMatchObject({ userName: 'alice@acme.test', active: true, emails: [{ value: 'alice@acme.test', primary: true }], meta: { resourceType: 'User' } });
    const emails = ((await call('GET', '/organization/members')).json.data as Json[]).map((member) => member.email);
    expect(emails).toEqual(expect.arrayContaining(['alice@acme.test', 'bob@acme.test']));
    expect(emails).not.toContain('carol@acme.test');
    expect((await call('GET', '/scim/v2/Users', undefined, { filter: 'userName eq "BOB@acme.test"' })).json).toMatchObject({ totalResults: 1, Resources: [{ id: bob.id }] });
    expect((await call('GET', '/scim/v2/Users', undefined, { filter: 'title co "x"' })).status).toBe(400);

    // A member added by hand: SCIM never touches it.
    const dave = newMember(orgId, { email: 'dave@acme.test' }, new Date().toISOString());
    await store.deps.members.add(dave);
    await call('POST', `/workspaces/${workspaceId}/members/add`, { user_ids: [dave.id] });

    const engineering = (await call('POST', '/scim/v2/Groups', { displayName: 'Engineering', members: [{ value: alice.id }, { value: bob.id }] })).json;
    const admins = (await call('POST', '/scim/v2/Groups', { displayName: 'Admins', externalId: 'okta-admins', members: [{ value: alice.id }] })).json;
    expect((await call('POST', '/scim/v2/Groups', { displayName: 'engineering' })).status).toBe(409);
    const groups = await call('GET', '/scim/groups');
    expect(ListScimGroupsResponse$inboundSchema.safeParse(groups.json).error).toBeUndefined();
    expect(groups.json.data.map((group: Json) => group.display_name)).toEqual(['Admins', 'Engineering']);

    const mapped = await call('POST', '/scim/group-mappings', { scim_group_id: engineering.id, workspace_id: workspaceId, role: 'member' });
    expect(mapped.status).toBe(201);
    expect(CreateScimGroupMappingResponse$inboundSchema.safeParse(mapped.json).error).toBeUndefined();
    const adminMapping = (await call('POST', '/scim/group-mappings', { scim_group_id: admins.id, workspace_id: workspaceId, role: 'admin' })).json.data;
    // The highest role wins; the hand-added member is as it was.
    expect(await workspaceMembers()).toEqual({ 'alice@acme.test': 'admin', 'bob@acme.test': 'member', 'dave@acme.test': 'member' });
    expect((await call('POST', '/scim/group-mappings', { scim_group_id: engineering.id, workspace_id: workspaceId, role: 'member' })).json.data.id).toBe(mapped.json.data.id);
    expect((await call('POST', '/scim/group-mappings', { scim_group_id: engineering.id, workspace_id: workspaceId, role: 'admin' })).status).toBe(409);
    expect(ListScimGroupMappingsResponse$inboundSchema.safeParse((await call('GET', '/scim/group-mappings')).json).error).toBeUndefined();

    // Bob leaves the group (an Okta-style PATCH): he leaves the workspace, at once.
    const patched = await call('PATCH', `/scim/v2/Groups/${engineering.id}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'Remove', path: `members[value eq "${bob.id}"]` }] });
    expect(patched.json.members).toEqual([{ value: alice.id }]);
    expect(await workspaceMembers()).toEqual({ 'alice@acme.test': 'admin', 'dave@acme.test': 'member' });

    // A sync job finds nothing left to do, and says so; the SDK parses it.
    const job = await call('POST', '/scim/sync-jobs');
    expect(job.status).toBe(202);
    expect(CreateScimSyncJobResponse$inboundSchema.safeParse(job.json).error).toBeUndefined();
    expect(job.json.data).toMatchObject({ status: 'succeeded', synced_groups: 2, deleted_groups: 0, memberships: { added: 0, updated: 0, removed: 0 } });
    expect(GetScimSyncJobResponse$inboundSchema.safeParse((await call('GET', `/scim/sync-jobs/${job.json.data.id}`)).json).error).toBeUndefined();

    // Lowering the admin mapping's role; then Alice deactivated (an Entra-style PATCH): she leaves the organization.
    const lowered = await call('PATCH', `/scim/group-mappings/${adminMapping.id}`, { role: 'member' });
    expect(UpdateScimGroupMappingResponse$inboundSchema.safeParse(lowered.json).error).toBeUndefined();
    expect((await workspaceMembers())['alice@acme.test']).toBe('member');
    await call('PATCH', `/scim/v2/Users/${alice.id}`, { Operations: [{ op: 'replace', value: { active: false } }] });
    expect(await workspaceMembers()).toEqual({ 'dave@acme.test': 'member' });
    expect(((await call('GET', '/organization/members')).json.data as Json[]).map((member) => member.email)).not.toContain('alice@acme.test');
    await call('PATCH', `/scim/v2/Users/${alice.id}`, { Operations: [{ op: 'replace', path: 'active', value: 'True' }] });
    expect((await workspaceMembers())['alice@acme.test']).toBe('member');
  });

  it('deletes mappings keeping or removing their members, and deleted groups grant nothing', async () => {
    const carol = await pushUser('carol2@acme.test');
    const erin = await pushUser('erin@acme.test');
    const team = (await call('POST', '/scim/v2/Groups', { displayName: 'Team', members: [{ value: carol.id }, { value: erin.id }] })).json;
    const keep = (await call('POST', '/scim/group-mappings', { scim_group_id: team.id, workspace_id: workspaceId, role: 'member' })).json.data;
    expect((await workspaceMembers())['carol2@acme.test']).toBe('member');
    expect((await call('DELETE', `/scim/group-mappings/${keep.id}`)).status).toBe(400);
    expect((await call('DELETE', `/scim/group-mappings/${keep.id}`, undefined, { keep_members: 'true' })).json).toEqual({ deleted: true });
    // Kept, now as added by hand: removing Erin from the group no longer removes her.
    await call('PATCH', `/scim/v2/Groups/${team.id}`, { Operations: [{ op: 'remove', path: 'members', value: [{ value: erin.id }] }] });
    expect(await workspaceMembers()).toMatchObject({ 'carol2@acme.test': 'member', 'erin@acme.test': 'member' });

    const dropped = (await call('POST', '/scim/group-mappings', { scim_group_id: team.id, workspace_id: workspaceId, role: 'admin' })).json.data;
    expect((await workspaceMembers())['carol2@acme.test']).toBe('member');
    await call('DELETE', `/scim/group-mappings/${dropped.id}`, undefined, { keep_members: 'false' });
    expect((await workspaceMembers())['carol2@acme.test']).toBe('member');

    const other = (await call('POST', '/scim/v2/Groups', { displayName: 'Contractors', members: [{ value: carol.id }] })).json;
    const removable = (await call('POST', '/scim/group-mappings', { scim_group_id: other.id, workspace_id: workspaceId, role: 'member' })).json.data;
    await call('POST', `/workspaces/${workspaceId}/members/remove`, { user_ids: [(await store.deps.members.byEmail(orgId, 'carol2@acme.test'))!.id] });
    await call('POST', '/scim/sync-jobs');
    expect((await workspaceMembers())['carol2@acme.test']).toBe('member');
    expect((await call('DELETE', `/scim/v2/Groups/${other.id}`)).status).toBe(204);
    expect((await workspaceMembers())['carol2@acme.test']).toBeUndefined();
    const job = await call('POST', '/scim/sync-jobs');
    expect(job.json.data.deleted_groups).toBe(1);
    expect((await call('GET', `/scim/v2/Groups/${other.id}`)).status).toBe(404);
    await call('DELETE', `/scim/group-mappings/${removable.id}`, undefined, { keep_members: 'false' });
  });

  it('refuses bad PATCH values with a 400, ignores attributes it does not keep, and lets go of a member it did not make', async () => {
    const grace = await pushUser('grace@acme.test');
    const group = (await call('POST', '/scim/v2/Groups', { displayName: 'Reviewers', members: [{ value: grace.id }] })).json;
    for (const [path, body] of [
      [`/scim/v2/Groups/${group.id}`, { Operations: [{ op: 'add', path: 'members', value: [null] }] }],
      [`/scim/v2/Groups/${group.id}`, { Operations: [{ op: 'add', value: { members: [{}] } }] }],
      [`/scim/v2/Users/${grace.id}`, { Operations: [{ op: 'replace', path: 'emails', value: [{ value: 123 }] }] }],
      [`/scim/v2/Users/${grace.id}`, { Operations: [{ op: 'replace', path: 'name', value: { givenName: { x: 1 } } }] }],
      [`/scim/v2/Users/${grace.id}`, { Operations: [{ op: 'replace', path: 'active' }] }],
      [`/scim/v2/Users/${grace.id}`, { Operations: [{ op: 'remove', path: 'userName' }] }],
    ] as const) {
      const reply = await call('PATCH', path, body);
      expect([path, JSON.stringify(body), reply.status]).toEqual([path, JSON.stringify(body), 400]);
    }
    expect((await call('GET', `/scim/v2/Users/${grace.id}`)).json).toMatchObject({ active: true, emails: [{ value: 'grace@acme.test' }] });
    // What Entra sends beside: accepted, not kept.
    expect((await call('PATCH', `/scim/v2/Users/${grace.id}`, { Operations: [{ op: 'replace', path: 'title', value: 'Engineer' }, { op: 'remove', path: 'phoneNumbers[type eq "work"]' }] })).status).toBe(200);
    expect((await call('POST', '/scim/v2/Users', { userName: 'grace2', emails: [{ value: 'grace@acme.test' }] })).status).toBe(409);

    // A member added by hand before the identity provider knew them: linked by email, and only let go.
    const hank = newMember(orgId, { email: 'hank@acme.test' }, new Date().toISOString());
    await store.deps.members.add(hank);
    const linked = await pushUser('hank@acme.test');
    const mapping = (await call('POST', '/scim/group-mappings', { scim_group_id: group.id, workspace_id: workspaceId, role: 'member' })).json.data;
    await call('PATCH', `/scim/v2/Groups/${group.id}`, { Operations: [{ op: 'add', path: 'members', value: [{ value: linked.id }] }] });
    expect((await workspaceMembers())['hank@acme.test']).toBe('member');
    expect((await call('DELETE', `/scim/v2/Users/${linked.id}`)).status).toBe(204);
    expect(await store.deps.members.get(orgId, hank.id)).toBeDefined();
    expect((await workspaceMembers())['hank@acme.test']).toBeUndefined();
    await call('DELETE', `/scim/group-mappings/${mapping.id}`, undefined, { keep_members: 'false' });
  });

  it('makes one user of the same user pushed twice at once (a retried POST), and frees a userName and email the user gave up', async () => {
    // A member that exists already: both pushes link to it, so only the claims can tell them apart.
    await store.deps.members.add(newMember(orgId, { email: 'ivy@acme.test' }, new Date().toISOString()));
    const body = { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'ivy@acme.test', emails: [{ value: 'ivy@acme.test', primary: true }] };
    const replies = await Promise.all([call('POST', '/scim/v2/Users', body), call('POST', '/scim/v2/Users', body), call('POST', '/scim/v2/Users', body)]);
    expect(replies.map((reply) => reply.status).sort()).toEqual([201, 409, 409]);
    const listed = (await call('GET', '/scim/v2/Users', undefined, { filter: 'userName eq "ivy@acme.test"' })).json;
    expect(listed.totalResults).toBe(1);
    // Renamed: the old userName is free for another user; deleted: its email is too.
    const ivy = replies.find((reply) => reply.status === 201)!.json;
    expect((await call('PUT', `/scim/v2/Users/${ivy.id as string}`, { ...body, userName: 'ivy.renamed@acme.test' })).status).toBe(200);
    const other = await call('POST', '/scim/v2/Users', { userName: 'ivy@acme.test', emails: [{ value: 'ivy2@acme.test' }] });
    expect(other.status).toBe(201);
    expect((await call('DELETE', `/scim/v2/Users/${ivy.id as string}`)).status).toBe(204);
    expect((await call('POST', '/scim/v2/Users', { userName: 'ivy3@acme.test', emails: [{ value: 'ivy@acme.test' }] })).status).toBe(201);
  });

  it('keeps a removed member\'s guardrail assignments (they govern the keys the member created, which stay), and takes the user out of its groups', async () => {
    const user = await pushUser('guarded@example.com');
    const member = ((await call('GET', '/organization/members')).json.data as Json[]).find((entry) => entry.email === 'guarded@example.com')!;
    const key = await call('POST', '/keys', { name: 'made by guarded', creator_user_id: member.id });
    expect(key.status).toBe(201);
    const guardrail = (await call('POST', '/guardrails', { name: 'Members' })).json.data.id as string;
    expect((await call('POST', `/guardrails/${guardrail}/assignments/members`, { member_user_ids: [member.id] })).json).toEqual({ assigned_count: 1 });
    const group = (await call('POST', '/scim/v2/Groups', { displayName: 'Guarded', members: [{ value: user.id }] })).json;
    expect((await call('DELETE', `/scim/v2/Users/${user.id}`)).status).toBe(204);
    expect(((await call('GET', '/organization/members')).json.data as Json[]).map((entry) => entry.email)).not.toContain('guarded@example.com');
    expect((await call('GET', `/keys/${key.json.data.hash}`)).status).toBe(200);
    expect(((await call('GET', `/guardrails/${guardrail}/assignments/members`)).json.data as Json[]).map((entry) => entry.user_id)).toEqual([member.id]);
    expect((await call('GET', `/scim/v2/Groups/${group.id}`)).json.members).toEqual([]);
    // Taken out in place: the other members, in their order, and the rest of the group stay as they are.
    const [a, b, c] = [await pushUser('inplace-a@example.com'), await pushUser('inplace-b@example.com'), await pushUser('inplace-c@example.com')];
    const trio = (await call('POST', '/scim/v2/Groups', { displayName: 'Trio', members: [{ value: a.id }, { value: b.id }, { value: c.id }] })).json;
    await store.deps.scim.removeGroupMember(orgId, trio.id, b.id, new Date().toISOString());
    await store.deps.scim.removeGroupMember(orgId, trio.id, 'not-a-member', new Date().toISOString());
    expect((await call('GET', `/scim/v2/Groups/${trio.id}`)).json).toMatchObject({ displayName: 'Trio', members: [{ value: a.id }, { value: c.id }] });
  });

  it('refuses a group member that is no user of the organization, on create, replace and patch', async () => {
    const user = await pushUser('member-check@example.com');
    for (const value of ['not-a-uuid', '00000000-0000-0000-0000-000000000000']) {
      const created = await call('POST', '/scim/v2/Groups', { displayName: `g-${value}`, members: [{ value }] });
      expect([value, created.status]).toEqual([value, 400]);
    }
    const group = (await call('POST', '/scim/v2/Groups', { displayName: 'Checked', members: [{ value: user.id }] })).json;
    expect((await call('PUT', `/scim/v2/Groups/${group.id}`, { displayName: 'Checked', members: [{ value: user.id }, { value: 'ghost' }] })).status).toBe(400);
    expect((await call('PATCH', `/scim/v2/Groups/${group.id}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'add', path: 'members', value: [{ value: 'ghost' }] }] })).status).toBe(400);
    expect((await call('GET', `/scim/v2/Groups/${group.id}`)).json.members).toEqual([{ value: user.id }]);
  });

  it('takes a userName as the email only when it is an email address', async () => {
    for (const userName of ['a b c@@', '@', 'x@y', 'x\u0000y@example.com']) {
      const reply = await call('POST', '/scim/v2/Users', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName });
      expect([userName, reply.status, reply.json.detail ?? reply.json.error?.message]).toEqual([userName, 400, expect.stringMatching(/a user needs an email/)]);
    }
    const named = await call('POST', '/scim/v2/Users', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'plain@example.com' });
    expect(named.status).toBe(201);
    expect(named.json.emails).toEqual([{ value: 'plain@example.com', primary: true }]);
  });

  it('keeps other organizations out of every id route', async () => {
    const user = await pushUser('frank@acme.test');
    const group = (await call('POST', '/scim/v2/Groups', { displayName: 'Private' })).json;
    const mapping = (await call('POST', '/scim/group-mappings', { scim_group_id: group.id, workspace_id: workspaceId, role: 'member' })).json.data;
    const job = (await call('POST', '/scim/sync-jobs')).json.data;
    for (const [method, path, body, query] of [
      ['GET', `/scim/group-mappings/${mapping.id}`], ['PATCH', `/scim/group-mappings/${mapping.id}`, { role: 'admin' }], ['DELETE', `/scim/group-mappings/${mapping.id}`, undefined, { keep_members: 'false' }],
      ['GET', `/scim/sync-jobs/${job.id}`], ['GET', `/scim/v2/Users/${user.id}`], ['PATCH', `/scim/v2/Users/${user.id}`, { Operations: [{ op: 'replace', path: 'active', value: false }] }],
      ['DELETE', `/scim/v2/Users/${user.id}`], ['GET', `/scim/v2/Groups/${group.id}`], ['DELETE', `/scim/v2/Groups/${group.id}`],
    ] as const) {
      expect([method, path, (await call(method, path, body, query as Record<string, string> | undefined, otherAdmin)).status]).toEqual([method, path, 404]);
    }
    expect((await call('POST', '/scim/group-mappings', { scim_group_id: group.id, workspace_id: workspaceId, role: 'member' }, undefined, otherAdmin)).status).toBe(400);
    expect((await call('GET', '/scim/groups', undefined, undefined, otherAdmin)).json).toEqual({ data: [], total_count: 0 });
  });
});
