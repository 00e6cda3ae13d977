// Seeds organizations, personal accounts and keys straight into the store.
import type { GatewayDeps } from '../../lambdas/app/deps.js';
import { createOrganization } from '../../lambdas/organizations/create-organization.js';
import { newApiKey } from '../../lambdas/keys/new-key.js';
import type { AccountKind } from '../../lambdas/organizations/types.js';
import type { Nanos } from '../../lambdas/platform/money.js';

const NANOS_PER_USD = 1_000_000_000n;
import type { ApiKey, KeyKind } from '../../lambdas/keys/types.js';

export interface Tenant {
  orgId: string;
  workspaceId: string;
  kind: AccountKind;
  addKey(kind: KeyKind, options?: { name?: string; expiresAt?: string; now?: Date }): Promise<{ key: ApiKey; text: string }>;
}

/** Organizations start with $1,000 of credits unless told otherwise. */
export async function createTenant(deps: GatewayDeps, kind: AccountKind = 'organization', name = 'Acme', credits: Nanos = 1000n * NANOS_PER_USD): Promise<Tenant> {
  const { org, workspace } = await createOrganization(deps.organizations, { name, kind, credits, now: new Date() });
  return {
    orgId: org.id,
    workspaceId: workspace.id,
    kind,
    async addKey(keyKind, options = {}) {
      const created = newApiKey({
        orgId: org.id, orgKind: kind, workspaceId: workspace.id, kind: keyKind,
        name: options.name ?? `${keyKind} key`, expiresAt: options.expiresAt ?? null, now: options.now ?? new Date(),
      });
      await deps.keys.create(created.key);
      return created;
    },
  };
}
