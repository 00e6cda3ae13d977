// The seams left by splitting the repositories per aggregate: the slug claim item both the organization and
// the workspace repository write, and the vault's port to the interns' store (the scope rules it enforces).
import { describe, expect, it } from '@jest/globals';
import { workspaceSlugClaimItem } from '../../lambdas/organizations/organization-item.js';
import { internOf, type Caller, type InternLookup } from '../../lambdas/vault/index.js';
import type { Intern } from '../../lambdas/interns/index.js';
import { NotFoundError } from '../../lambdas/platform/errors.js';

describe('workspaceSlugClaimItem', () => {
  it('claims the slug under the organization and points at the workspace', () => {
    expect(workspaceSlugClaimItem({ org_id: 'o1', id: 'w1', slug: 'team-a' }))
      .toEqual({ pk: 'ORG#o1', sk: 'WSSLUG#team-a', type: 'workspace_slug', workspace_id: 'w1' });
  });
});

describe('internOf over the interns port', () => {
  const intern: Intern = {
    id: 'i1', org_id: 'o1', workspace_id: 'w1', name: 'Ada', description: null, instructions: null, model: null,
    status: 'running', created_by: 'h', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z',
  };
  const asked: string[] = [];
  const interns: InternLookup<Intern> = {
    getIntern: async (orgId, internId) => {
      asked.push(`${orgId}/${internId}`);
      return orgId === intern.org_id && internId === intern.id ? intern : undefined;
    },
  };
  const caller = (key: { workspace_id: string; intern_id?: string | null }): Caller =>
    ({ key: { org_id: 'o1', intern_id: null, ...key }, org: {} } as unknown as Caller);

  it('returns the stored intern of the key\'s workspace, looked up in the key\'s organization', async () => {
    await expect(internOf(caller({ workspace_id: 'w1' }), interns, 'i1')).resolves.toBe(intern);
    expect(asked.at(-1)).toBe('o1/i1');
  });

  it('answers 404 for an intern of another workspace, a missing intern and another intern\'s key', async () => {
    await expect(internOf(caller({ workspace_id: 'w2' }), interns, 'i1')).rejects.toBeInstanceOf(NotFoundError);
    await expect(internOf(caller({ workspace_id: 'w1' }), interns, 'i2')).rejects.toBeInstanceOf(NotFoundError);
    const before = asked.length;
    await expect(internOf(caller({ workspace_id: 'w1', intern_id: 'i9' }), interns, 'i1')).rejects.toBeInstanceOf(NotFoundError);
    expect(asked.length).toBe(before);
  });
});
