// Wire shapes of the organization settings routes (docs/API.md "Organization").
import * as z from 'zod';

export const organizationSettingsSchema = z.object({
  id: z.string(),
  is_filtered_model_catalog_enabled: z.boolean(),
});

export const organizationSettingsReply = z.object({ data: organizationSettingsSchema });

export const updateOrganizationSettingsBody = z.strictObject({
  is_filtered_model_catalog_enabled: z.boolean(),
});
