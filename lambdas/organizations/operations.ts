// Organization settings: read and update, for management keys of an organization (personal accounts get 404).
import { NotFoundError } from '../platform/errors.js';
import { listPage } from '../platform/http/list-page.js';
import type { OrganizationRepository } from './organization-repository.js';
import type { MemberRepository } from './member-repository.js';
import type { OrganizationOperations } from './routes.js';
import type { Organization } from './types.js';

export interface OrganizationPorts {
  organizations: Pick<OrganizationRepository, 'get' | 'updateSettings'>;
  members: Pick<MemberRepository, 'list'>;
  clock: () => Date;
}

function settingsView(org: Organization) {
  return { data: { id: org.id, is_filtered_model_catalog_enabled: org.settings.is_filtered_model_catalog_enabled } };
}

export function createOrganizationOperations({ organizations, members, clock }: OrganizationPorts): OrganizationOperations {
  return {
    async listOrganizationMembers({ principal, query }) {
      const all = await members.list(principal.key.org_id);
      return { body: listPage(all, query, (member) => ({ id: member.id, email: member.email, first_name: member.first_name, last_name: member.last_name, role: member.role })) };
    },

    async getOrganizationSettings({ principal }) {
      const org = await organizations.get(principal.key.org_id);
      if (!org) throw new NotFoundError('Organization not found');
      return { body: settingsView(org) };
    },

    async updateOrganizationSettings({ principal, body }) {
      const org = await organizations.updateSettings(principal.key.org_id, body, clock().toISOString());
      if (!org) throw new NotFoundError('Organization not found');
      return { body: settingsView(org) };
    },
  };
}
