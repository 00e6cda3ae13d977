// First-start state of the local gateway: the default organization and workspace, its initial credits,
// and a management key (the operator's GATEWAY_ADMIN_KEY, or a generated one printed once).
import type { OrganizationRepository } from '../../lambdas/organizations/organization-repository.js';
import type { ApiKeyRepository } from '../../lambdas/keys/api-key-repository.js';
import { ensureDefaultOrganization } from '../../lambdas/organizations/default-organization.js';
import { newApiKey } from '../../lambdas/keys/new-key.js';
import { hashKey } from '../../lambdas/keys/key-format.js';
import type { Nanos } from '../../lambdas/platform/money.js';

export interface BootstrapInput {
  organizations: OrganizationRepository;
  keys: ApiKeyRepository;
  adminKeyText?: string | undefined;
  initialCredits: Nanos;
  /** Whether the default organization is in the intern programme (vault and intern routes). */
  internProgramme: boolean;
  now: Date;
}

export interface BootstrapResult {
  orgId: string;
  workspaceId: string;
  firstStart: boolean;
  /** Set only when a management key was generated now: its text, to print once. */
  generatedKeyText?: string;
  adminKeyCreated: boolean;
}

export async function bootstrapLocal(input: BootstrapInput): Promise<BootstrapResult> {
  // The default organization's owner: GATEWAY_OWNER_EMAIL, or owner@localhost.
  const defaults = await ensureDefaultOrganization(input.organizations, { credits: input.initialCredits, now: input.now, owner: { email: process.env.GATEWAY_OWNER_EMAIL?.trim() || 'owner@localhost' } });
  await input.organizations.setFlags(defaults.org_id, { intern_programme: input.internProgramme }, input.now.toISOString());
  const firstStart = defaults.created;
  const base = { orgId: defaults.org_id, orgKind: 'organization' as const, workspaceId: defaults.workspace_id, kind: 'management' as const, now: input.now };
  if (input.adminKeyText) {
    if (await input.keys.get(hashKey(input.adminKeyText))) {
      return { orgId: defaults.org_id, workspaceId: defaults.workspace_id, firstStart, adminKeyCreated: false };
    }
    await input.keys.create(newApiKey({ ...base, name: 'GATEWAY_ADMIN_KEY', text: input.adminKeyText }).key);
    return { orgId: defaults.org_id, workspaceId: defaults.workspace_id, firstStart, adminKeyCreated: true };
  }
  if (!firstStart) return { orgId: defaults.org_id, workspaceId: defaults.workspace_id, firstStart, adminKeyCreated: false };
  const { key, text } = newApiKey({ ...base, name: 'Generated at first start' });
  await input.keys.create(key);
  return { orgId: defaults.org_id, workspaceId: defaults.workspace_id, firstStart, generatedKeyText: text, adminKeyCreated: true };
}
