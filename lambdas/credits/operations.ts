// Credits: the organization's balance, and grants, which only management keys of the operator's (default)
// organization may make.
import { ForbiddenError, NotFoundError } from '../platform/errors.js';
import { nanosToUsd } from '../platform/money.js';
import type { OrganizationRepository } from '../organizations/index.js';
import type { CreditRepository } from './credit-repository.js';
import { newCreditGrant } from './credit-grant.js';
import type { CreditOperations } from './routes.js';

export interface CreditPorts {
  organizations: Pick<OrganizationRepository, 'get' | 'getDefaultOrganization'>;
  credits: Pick<CreditRepository, 'addCredits'>;
  clock: () => Date;
}

export function createCreditOperations({ organizations, credits, clock }: CreditPorts): CreditOperations {
  return {
    async getCredits({ principal }) {
      const org = await organizations.get(principal.key.org_id);
      if (!org) throw new NotFoundError('Organization not found');
      return { body: { data: { total_credits: nanosToUsd(org.total_credits), total_usage: nanosToUsd(org.total_usage) } } };
    },

    async addCredits({ principal, body }) {
      const caller = principal.key;
      const operator = await organizations.getDefaultOrganization();
      if (!operator || operator.org_id !== caller.org_id) {
        throw new ForbiddenError('Only management keys of the gateway operator\'s organization can add credits');
      }
      const orgId = body.organization_id ?? caller.org_id;
      const grant = newCreditGrant({ amount: body.amount, note: body.note ?? null, by: caller.hash, now: clock() });
      const org = await credits.addCredits(orgId, grant);
      if (!org) throw new NotFoundError(`Organization not found: ${orgId}`);
      return {
        body: {
          data: {
            organization_id: org.id,
            total_credits: nanosToUsd(org.total_credits),
            total_usage: nanosToUsd(org.total_usage),
            grant: { id: grant.id, amount: nanosToUsd(grant.amount), note: grant.note, created_at: grant.created_at },
          },
        },
      };
    },
  };
}
