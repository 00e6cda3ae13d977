// Wire shapes of the SCIM routes: the management group (public OpenRouter API: ScimGroupMapping, ScimGroup,
// ScimSyncJob) and the SCIM 2.0 Users and Groups an identity provider pushes (RFC 7643/7644, the parts
// Okta and Entra ID use; unknown attributes and extensions are accepted and ignored, as SCIM servers do).
import * as z from 'zod';
import { queryInt } from '../platform/http/query-int.js';

const role = z.enum(['admin', 'member']);
const pageQuery = z.object({
  offset: queryInt(0, 1_000_000).optional(),
  limit: queryInt(1, 100).optional(),
});

export const createMappingBody = z.strictObject({ scim_group_id: z.string().min(1).max(128), workspace_id: z.string().min(1).max(128), role });
export const updateMappingBody = z.strictObject({ role });
export const deleteMappingQuery = z.object({
  keep_members: z.enum(['true', 'false'], { error: 'is required: true keeps the members this mapping granted (as added by hand), false removes them' }),
});
export const mappingListQuery = pageQuery;
export const groupListQuery = pageQuery;

export const mappingSchema = z.object({
  id: z.string(), organization_id: z.string(), scim_group_id: z.string(), workspace_id: z.string(), role, created_at: z.string(), updated_at: z.string(),
});
export const groupSchema = z.object({
  id: z.string(), organization_id: z.string(), external_id: z.string().nullable(), display_name: z.string(), created_at: z.string(), updated_at: z.string(),
});
export const jobSchema = z.object({
  id: z.string(), status: z.enum(['queued', 'running', 'succeeded', 'failed']), synced_groups: z.number().int().nullable(), deleted_groups: z.number().int().nullable(),
  error_message: z.string().nullable(), created_at: z.string(), started_at: z.string().nullable(), finished_at: z.string().nullable(),
  memberships: z.object({ added: z.number().int(), updated: z.number().int(), removed: z.number().int() }).nullable(),
});

export const mappingReply = z.object({ data: mappingSchema });
export const mappingListReply = z.object({ data: z.array(mappingSchema), total_count: z.number().int() });
export const groupListReply = z.object({ data: z.array(groupSchema), total_count: z.number().int() });
export const jobReply = z.object({ data: jobSchema });

// SCIM 2.0 (the identity provider's side).
export const scimEmailAddress = z.string().email().max(320);
const scimEmail = z.looseObject({ value: scimEmailAddress, primary: z.boolean().optional(), type: z.string().optional() });
export const scimUserBody = z.looseObject({
  userName: z.string().min(1).max(320),
  externalId: z.string().max(256).optional(),
  name: z.looseObject({ givenName: z.string().max(256).optional(), familyName: z.string().max(256).optional() }).optional(),
  emails: z.array(scimEmail).max(20).optional(),
  active: z.boolean().optional(),
});
const memberRef = z.looseObject({ value: z.string().min(1).max(128) });
export const scimGroupBody = z.looseObject({
  displayName: z.string().min(1).max(256),
  externalId: z.string().max(256).optional(),
  members: z.array(memberRef).max(10_000).optional(),
});
export const scimPatchBody = z.looseObject({
  Operations: z.array(z.looseObject({
    op: z.string().transform((op) => op.toLowerCase()).pipe(z.enum(['add', 'remove', 'replace'])),
    path: z.string().max(512).optional(),
    value: z.unknown().optional(),
  })).min(1).max(1000),
});
export const scimListQuery = z.object({
  filter: z.string().max(512).optional(),
  startIndex: queryInt(1, 1_000_000).optional(),
  count: queryInt(0, 1000).optional(),
});
export const scimResource = z.record(z.string(), z.unknown());
export const scimListReply = z.object({ schemas: z.array(z.string()), totalResults: z.number().int(), startIndex: z.number().int(), itemsPerPage: z.number().int(), Resources: z.array(scimResource) });
