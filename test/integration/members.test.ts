// Organization and workspace members over DynamoDB Local through the real management handler: a new
// organization starts with its owner, the member routes answer in @openrouter/sdk's shapes, and other
// organizations see none of it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { BulkAddWorkspaceMembersResponse$inboundSchema, ListWorkspaceMembersResponse$inboundSchema } from '@openrouter/sdk/models';
import { ListOrganizationMembersResponseBody$inboundSchema } from '@openrouter/sdk/models/operations';
import { createTestStore, type TestStore } from '../support/store.js';
import { manage, type Json } from '../support/handler-calls.js';
import { createOrganization } from '../../lambdas/organizations/create-organization.js';
import { newMember } from '../../lambdas/organizations/members.js';
import { newApiKey } from '../../lambdas/keys/new-key.js';

let store: TestStore;
let admin: string;
let orgId: string;
let workspaceId: string;
let ownerId: string;
let otherAdmin: string;
let otherWorkspaceId: string;

async function organization(name: string, email: string) {
  const { org, workspace, owner } = await createOrganization(store.deps.organizations, { name, kind: 'organization', owner: { email, firstName: 'Ada', lastName: 'Owner' }, now: new Date() });
  const { key, text } = newApiKey({ orgId: org.id, orgKind: 'organization', workspaceId: workspace.id, kind: 'management', name: 'admin', expiresAt: null, now: new Date() });
  await store.deps.keys.create(key);
  return { org, workspace, owner, text };
}

beforeAll(async () => {
  store = await createTestStore();
  const mine = await organization('Members Inc', 'Ada@Example.com');
  ({ text: admin } = mine);
  orgId = mine.org.id;
  workspaceId = mine.workspace.id;
  ownerId = mine.owner.id;
  const other = await organization('Other', 'someone@other.example');
  otherAdmin = other.text;
  otherWorkspaceId = other.workspace.id;
});
afterAll(async () => {
  await store.drop();
});

describe('members', () => {
  it('starts an organization with its owner, an admin of it and of its first workspace', async () => {
    const members = await manage(store.deps, admin, 'GET', '/organization/members');
    expect(members.status).toBe(200);
    expect(ListOrganizationMembersResponseBody$inboundSchema.safeParse(members.json).error).toBeUndefined();
    expect(members.json).toEqual({ data: [{ id: ownerId, email: 'ada@example.com', first_name: 'Ada', last_name: 'Owner', role: 'org:admin' }], total_count: 1 });
    const workspace = await manage(store.deps, admin, 'GET', `/workspaces/${workspaceId}/members`);
    expect(ListWorkspaceMembersResponse$inboundSchema.safeParse(workspace.json).error).toBeUndefined();
    expect(workspace.json.data).toEqual([expect.objectContaining({ user_id: ownerId, workspace_id: workspaceId, role: 'admin' })]);
  });

  it('adds organization members to a workspace and removes them; others are refused with a 400', async () => {
    const member = newMember(orgId, { email: 'bob@example.com' }, new Date().toISOString());
    expect(await store.deps.members.add(member)).toBe(true);
    expect(await store.deps.members.add(newMember(orgId, { email: 'BOB@example.com' }, new Date().toISOString()))).toBe(false);
    const added = await manage(store.deps, admin, 'POST', `/workspaces/${workspaceId}/members/add`, { user_ids: [member.id, ownerId] });
    expect(BulkAddWorkspaceMembersResponse$inboundSchema.safeParse(added.json).error).toBeUndefined();
    expect(added.json).toMatchObject({ added_count: 1, data: [{ user_id: member.id, role: 'member' }] });
    const stranger = await manage(store.deps, admin, 'POST', `/workspaces/${workspaceId}/members/add`, { user_ids: ['user_nobody'] });
    expect(stranger.status).toBe(400);
    expect(stranger.json.error.message).toMatch(/user_nobody is not a member of this organization/);
    expect((await manage(store.deps, admin, 'GET', `/workspaces/${workspaceId}/members`)).json.total_count).toBe(2);
    expect((await manage(store.deps, admin, 'POST', `/workspaces/${workspaceId}/members/remove`, { user_ids: [member.id, 'user_nobody'] })).json).toEqual({ removed_count: 1 });
    // Removing the member from the organization takes their memberships too.
    await manage(store.deps, admin, 'POST', `/workspaces/${workspaceId}/members/add`, { user_ids: [member.id] });
    await store.deps.members.remove(member);
    expect((await manage(store.deps, admin, 'GET', `/workspaces/${workspaceId}/members`)).json.data.map((entry: Json) => entry.user_id)).toEqual([ownerId]);
    expect((await manage(store.deps, admin, 'GET', '/organization/members')).json.total_count).toBe(1);
  });

  it('drops a deleted workspace\'s memberships', async () => {
    const created = await manage(store.deps, admin, 'POST', '/workspaces', { name: 'Short lived', slug: 'short-lived' });
    expect(created.status).toBe(201);
    const id = created.json.data.id as string;
    expect((await manage(store.deps, admin, 'POST', `/workspaces/${id}/members/add`, { user_ids: [ownerId] })).json.added_count).toBe(1);
    expect((await manage(store.deps, admin, 'DELETE', `/workspaces/${id}`)).status).toBe(200);
    expect(await store.deps.members.workspaceMembers(orgId, id)).toEqual([]);
    // A workspace that is gone takes no members.
    expect((await store.deps.members.addToWorkspace(orgId, id, [ownerId], new Date().toISOString()))).toEqual([]);
  });

  it('keeps each organization\'s members to itself', async () => {
    expect((await manage(store.deps, otherAdmin, 'GET', '/organization/members')).json.data.map((entry: Json) => entry.email)).toEqual(['someone@other.example']);
    expect((await manage(store.deps, otherAdmin, 'GET', `/workspaces/${workspaceId}/members`)).status).toBe(404);
    expect((await manage(store.deps, admin, 'POST', `/workspaces/${otherWorkspaceId}/members/add`, { user_ids: [ownerId] })).status).toBe(404);
  });
});
