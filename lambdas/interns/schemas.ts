// Wire shapes of the intern routes (docs/API.md "Interns" is generated from them; names as in the public
// OpenRouter API: Intern*).
import * as z from 'zod';
import { queryInt } from '../platform/http/query-int.js';

export const INTERN_STATUSES = ['awaiting_slack_install', 'queued', 'provisioning', 'running', 'failed', 'stopped', 'destroying', 'destroy_failed'] as const;

export const internSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  instructions: z.string().nullable(),
  model: z.string().nullable(),
  status: z.enum(INTERN_STATUSES),
  progress: z.null(),
  hostname: z.string().nullable(),
  last_failure_message: z.string().nullable(),
  vault_id: z.string().nullable(),
  attached_vault_id: z.string().nullable(),
  workspace_id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});

const internName = z.string().trim().min(1, 'must not be empty').max(128);
const longText = z.string().max(16_384).nullable();

export const createInternBody = z.strictObject({
  name: internName,
  description: longText.optional(),
  instructions: longText.optional(),
  provision: z.boolean().optional(),
  workspace_id: z.string().min(1).max(128).optional(),
});

export const updateInternBody = z.strictObject({
  name: internName.optional(),
  description: longText.optional(),
  instructions: longText.optional(),
  model: z.string().regex(/^[a-z0-9][a-z0-9._-]*\/[a-zA-Z0-9][a-zA-Z0-9._-]*(:[a-z0-9-]+)?$/, 'must be author/slug (optionally :variant)').nullable().optional(),
});

export const listInternsQuery = z.object({
  limit: queryInt(1, 500).optional(),
  status: z.string().max(200).optional(),
  starting_after: z.string().max(256).optional(),
  workspace_id: z.string().min(1).max(128).optional(),
});

export const internReply = internSchema;
export const internListReply = z.object({ data: z.array(internSchema), has_more: z.boolean(), next_cursor: z.string().optional() });
export const internKeyBody = z.strictObject({ name: z.string().trim().min(1).max(256).optional() });
