// Organization settings: read and update, for management keys of an organization (personal accounts get 404).
import type { ManagementOperations } from '../app/routes.js';
import { NotFoundError } from '../platform/http/errors.js';
import type { Organization } from './types.js';

type SettingsOperations = Pick<ManagementOperations, 'getOrganizationSettings' | 'updateOrganizationSettings'>;

function settingsView(org: Organization) {
  return { data: { id: org.id, is_filtered_model_catalog_enabled: org.settings.is_filtered_model_catalog_enabled } };
}

export const settingsOperations: SettingsOperations = {
  async getOrganizationSettings({ principal, deps }) {
    const org = await deps.organizations.get(principal!.key.org_id);
    if (!org) throw new NotFoundError('Organization not found');
    return { body: settingsView(org) };
  },

  async updateOrganizationSettings({ principal, body, deps }) {
    const org = await deps.organizations.updateSettings(principal!.key.org_id, body, deps.clock().toISOString());
    if (!org) throw new NotFoundError('Organization not found');
    return { body: settingsView(org) };
  },
};
