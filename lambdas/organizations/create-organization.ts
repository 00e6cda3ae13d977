// Creates an organization (or personal account) together with its first workspace.
import { randomUUID } from 'node:crypto';
import type { AccountKind, Organization, Workspace } from './types.js';
import { newWorkspace, slugFor } from './new-workspace.js';
import type { OrganizationRepository } from './organization-repository.js';
import type { Nanos } from '../platform/money.js';
import { newMember, type Member, type NewMember } from './members.js';

export interface CreateOrganizationInput {
  name: string;
  kind: AccountKind;
  credits?: Nanos;
  internProgramme?: boolean;
  workspaceName?: string;
  /** The owner, an admin member of the organization and of its first workspace (a placeholder address when not given). */
  owner?: NewMember;
  now: Date;
}

export async function createOrganization(repo: OrganizationRepository, input: CreateOrganizationInput): Promise<{ org: Organization; workspace: Workspace; owner: Member }> {
  const now = input.now.toISOString();
  const org: Organization = {
    id: randomUUID(),
    name: input.name,
    kind: input.kind,
    settings: { is_filtered_model_catalog_enabled: false },
    total_credits: input.credits ?? 0n,
    total_usage: 0n,
    held: 0n,
    intern_programme: input.internProgramme ?? false,
    vault_writes_disabled: false,
    created_at: now,
    updated_at: now,
  };
  const workspaceName = input.workspaceName ?? 'Default';
  const workspace = newWorkspace(org.id, { name: workspaceName, slug: slugFor(workspaceName) }, null, input.now);
  const owner = newMember(org.id, { ...(input.owner ?? { email: `owner@${org.id}.invalid` }), role: 'org:admin' }, now);
  await repo.create(org, workspace, owner);
  return { org, workspace, owner };
}
