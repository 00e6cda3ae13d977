// Wire shapes of the organization settings routes (docs/API.md "Organization").
import * as z from 'zod';
import { queryInt } from '../platform/http/query-int.js';

export const organizationSettingsSchema = z.object({
  id: z.string(),
  is_filtered_model_catalog_enabled: z.boolean(),
});

export const organizationSettingsReply = z.object({ data: organizationSettingsSchema });

export const updateOrganizationSettingsBody = z.strictObject({
  is_filtered_model_catalog_enabled: z.boolean(),
});

export const memberPageQuery = z.object({
  offset: queryInt(0, 1_000_000).optional(),
  limit: queryInt(1, 100).optional(),
});

export const memberListReply = z.object({
  data: z.array(z.object({ id: z.string(), email: z.string(), first_name: z.string().nullable(), last_name: z.string().nullable(), role: z.enum(['org:admin', 'org:member']) })),
  total_count: z.number().int(),
});
