// Governance against `npm start`, through @openrouter/sdk: guardrails.* (CRUD, key assignments, and a
// request the guardrail refuses next to one it lets through; a spend limit), organization.listMembers and
// the workspace member routes; the end-user routes (which the SDK has no methods for) over fetch, with an end
// user's limit honoured for requests the SDK sends with `user`.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OpenRouter } from '@openrouter/sdk';
import { ForbiddenResponseError, NotFoundResponseError } from '@openrouter/sdk/models/errors';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';
import { generateKeyText } from '../../lambdas/keys/key-format.js';
import { objectOf } from '../support/sdk-shapes.js';

const ADMIN_KEY = generateKeyText();
let gateway: GatewayProcess;
let admin: OpenRouter;

beforeAll(async () => {
  gateway = await startGatewayProcess({ GATEWAY_ADMIN_KEY: ADMIN_KEY, GATEWAY_INITIAL_CREDITS: '25' });
  admin = new OpenRouter({ apiKey: ADMIN_KEY, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
}, 150_000);

afterAll(async () => {
  await gateway?.stop();
});

describe('members through @openrouter/sdk', () => {
  it('lists the default organization\'s owner, and its workspace\'s members', async () => {
    const members = await admin.organization.listMembers();
    expect(members.result.data).toEqual([expect.objectContaining({ email: 'owner@localhost', role: 'org:admin' })]);
    const workspaces = await admin.workspaces.list();
    const workspaceId = workspaces.result.data[0]!.id;
    const inWorkspace = await admin.workspaces.listMembers({ id: workspaceId });
    expect(inWorkspace.result.data).toEqual([expect.objectContaining({ userId: members.result.data[0]!.id, role: 'admin' })]);
    expect(await admin.workspaces.bulkAddMembers({ id: workspaceId, bulkAddWorkspaceMembersRequest: { userIds: [members.result.data[0]!.id] } })).toEqual({ addedCount: 0, data: [] });
  });
});

describe('guardrails through @openrouter/sdk', () => {
  it('creates, lists, reads, updates and deletes a guardrail, assigns it to a key, and enforces it', async () => {
    const created = await admin.apiKeys.create({ requestBody: { name: 'guarded by the SDK' } });
    const user = new OpenRouter({ apiKey: created.key, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
    const guardrail = await admin.guardrails.create({ createGuardrailRequest: { name: 'Echo only', allowedModels: ['simulator/echo'] } });
    expect(guardrail.data).toMatchObject({ name: 'Echo only', allowedModels: ['simulator/echo'], includeByokInBudgets: false });
    const id = guardrail.data.id;

    const listed = await admin.guardrails.list();
    expect(listed.result.data.map((entry) => entry.id)).toContain(id);
    expect((await admin.guardrails.get({ id })).data.name).toBe('Echo only');
    expect((await admin.guardrails.update({ id, updateGuardrailRequest: { description: 'SDK test' } })).data.description).toBe('SDK test');

    expect(await admin.guardrails.bulkAssignKeys({ id, bulkAssignKeysRequest: { keyHashes: [created.data.hash] } })).toEqual({ assignedCount: 1 });
    const assignments = await admin.guardrails.listGuardrailKeyAssignments({ id });
    expect(assignments.result.data.map((entry) => entry.keyHash)).toEqual([created.data.hash]);
    expect((await admin.guardrails.listKeyAssignments()).result.totalCount).toBeGreaterThanOrEqual(1);

    await expect(user.chat.send({ chatRequest: { model: 'simulator/echo-anthropic', stream: false, messages: [{ role: 'user', content: 'refused' }] } }))
      .rejects.toBeInstanceOf(ForbiddenResponseError);
    const allowed = objectOf(await user.chat.send({ chatRequest: { model: 'simulator/echo', stream: false, messages: [{ role: 'user', content: 'allowed' }] } }));
    expect(allowed.choices[0]!.message.content).toBe('allowed');

    // Member assignments: the owner, whose keys (creator_user_id) the guardrail then governs.
    const owner = (await admin.organization.listMembers()).result.data[0]!.id;
    expect(await admin.guardrails.bulkAssignMembers({ id, bulkAssignMembersRequest: { memberUserIds: [owner] } })).toEqual({ assignedCount: 1 });
    expect((await admin.guardrails.listGuardrailMemberAssignments({ id })).result.data.map((entry) => entry.userId)).toEqual([owner]);
    expect((await admin.guardrails.listMemberAssignments()).result.data.map((entry) => entry.guardrailId)).toContain(id);
    expect(await admin.guardrails.bulkUnassignMembers({ id, bulkUnassignMembersRequest: { memberUserIds: [owner] } })).toEqual({ unassignedCount: 1 });

    expect(await admin.guardrails.bulkUnassignKeys({ id, bulkUnassignKeysRequest: { keyHashes: [created.data.hash] } })).toEqual({ unassignedCount: 1 });
    expect(await admin.guardrails.delete({ id })).toEqual({ deleted: true });
    await expect(admin.guardrails.get({ id })).rejects.toBeInstanceOf(NotFoundResponseError);
  });
});

describe('spend limits: an end user\'s and a guardrail\'s', () => {
  const manage = async (method: string, path: string, body?: unknown) => {
    const reply = await fetch(`${gateway.baseUrl}${path}`, {
      method, headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: reply.status, json: await reply.json() as Record<string, any> };
  };
  const ask = (client: OpenRouter, user?: string) => client.chat.send({ chatRequest: { model: 'simulator/echo', stream: false, maxTokens: 16, messages: [{ role: 'user', content: 'ping '.repeat(100) }], ...(user ? { user } : {}) } });

  it('registers an end user, refuses its requests past its limit with a 402, and shows its usage within a second', async () => {
    const created = await admin.apiKeys.create({ requestBody: { name: 'end-user traffic' } });
    const client = new OpenRouter({ apiKey: created.key, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
    const registered = await manage('POST', '/end-users', { user: 'e2e-user', limit: 0.0015, limit_reset: 'weekly' });
    expect({ status: registered.status, body: registered.json }).toMatchObject({ status: 201 });
    let served = 0;
    let refusal: unknown;
    for (; served < 40; served += 1) {
      try {
        await ask(client, 'e2e-user');
      } catch (err) {
        refusal = err;
        break;
      }
    }
    expect(served).toBeGreaterThan(0);
    expect(refusal).toMatchObject({ statusCode: 402 });
    // Others go on.
    expect(objectOf(await ask(client, 'someone-else')).choices.length).toBe(1);
    let view: Record<string, any> = {};
    for (const until = Date.now() + 5000; Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 100))) {
      view = (await manage('GET', '/end-users/e2e-user')).json.data;
      if (view.usage > 0 && view.usage === view.usage_weekly) break;
    }
    expect(view.usage).toBeGreaterThan(0);
    expect(view.usage).toBeLessThanOrEqual(0.0015);
    expect(view.limit_remaining).toBeCloseTo(0.0015 - view.usage, 12);
    expect((await manage('DELETE', '/end-users/e2e-user')).json).toEqual({ deleted: true });
  });

  it('limits a key through a guardrail\'s limitUsd, in the SDK\'s shapes', async () => {
    const created = await admin.apiKeys.create({ requestBody: { name: 'guardrail budget' } });
    const client = new OpenRouter({ apiKey: created.key, serverURL: gateway.baseUrl, retryConfig: { strategy: 'none' } });
    const guardrail = await admin.guardrails.create({ createGuardrailRequest: { name: 'Budget', limitUsd: 0.0015, resetInterval: 'monthly' } });
    expect(guardrail.data).toMatchObject({ limitUsd: 0.0015, resetInterval: 'monthly' });
    await admin.guardrails.bulkAssignKeys({ id: guardrail.data.id, bulkAssignKeysRequest: { keyHashes: [created.data.hash] } });
    let refusal: unknown;
    for (let sent = 0; sent < 40 && refusal === undefined; sent += 1) await ask(client).catch((err: unknown) => { refusal = err; });
    expect(refusal).toMatchObject({ statusCode: 402 });
    expect(String((refusal as Error).message)).toMatch(/Guardrail Budget's per-key monthly limit/);
  });
});
