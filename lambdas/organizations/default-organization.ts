// The default organization of a table: created by the first local start or the first operator key.
import type { DefaultOrganization, OrganizationRepository } from './organization-repository.js';
import { createOrganization } from './create-organization.js';
import type { Nanos } from '../platform/money.js';
import type { NewMember } from './members.js';

export async function ensureDefaultOrganization(
  organizations: OrganizationRepository,
  options: { credits: Nanos; now: Date; owner?: NewMember },
): Promise<DefaultOrganization & { created: boolean }> {
  const existing = await organizations.getDefaultOrganization();
  if (existing) return { ...existing, created: false };
  const { org, workspace } = await createOrganization(organizations, {
    name: 'Default organization', kind: 'organization', credits: options.credits, now: options.now, ...(options.owner ? { owner: options.owner } : {}),
  });
  const created = await organizations.putDefaultOrganization({ org_id: org.id, workspace_id: workspace.id });
  // Another process may have recorded its own first; the recorded one wins.
  const recorded = (await organizations.getDefaultOrganization())!;
  return { ...recorded, created };
}
