// Wire shapes of the vault and intern routes (docs/API.md "Vault" and "Interns" are generated from them;
// names as in the public OpenRouter API: VaultSecret*, Intern*).
import * as z from 'zod';
import { MAX_HOSTS, MAX_HOST_LENGTH } from './hosts.js';

export const SECRET_NAME = /^(?!.*__)[a-z]([a-z0-9_]*[a-z0-9])?$/;
export const secretNameSchema = z.string().min(1).max(255).regex(SECRET_NAME, 'must be lowercase letters, digits and single underscores, start with a letter and not end with an underscore');

export const putSecretBody = z.strictObject({
  hosts: z.array(z.string().max(MAX_HOST_LENGTH, `each host must be at most ${MAX_HOST_LENGTH} characters`)).min(1, 'must list at least one host').max(MAX_HOSTS, `at most ${MAX_HOSTS} hosts`),
  value: z.string().min(1, 'must not be empty').max(65_536, 'at most 65536 characters'),
});

export const pageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).optional(),
  offset: z.coerce.number().int().min(0).max(10_000).optional(),
});

export const secretSchema = z.object({
  name: z.string(),
  hosts: z.array(z.string()).nullable(),
  fingerprint: z.string().nullable(),
  created_at: z.string(),
});

export const secretReply = z.object({ data: secretSchema });
export const secretListReply = z.object({ data: z.array(secretSchema), has_more: z.boolean() });
export const effectiveSecretListReply = z.object({
  data: z.array(secretSchema.extend({ scope: z.enum(['intern', 'attached', 'workspace']) })),
  has_more: z.boolean(),
});
export const copySecretsBody = z.strictObject({
  names: z.array(secretNameSchema).min(1).max(100).refine((names) => new Set(names).size === names.length, 'names must be unique'),
});
export const copySecretsReply = z.object({ data: z.array(secretSchema) });

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
  limit: z.coerce.number().int().min(1).max(500).optional(),
  status: z.string().max(200).optional(),
  starting_after: z.string().max(256).optional(),
  workspace_id: z.string().min(1).max(128).optional(),
});

export const internReply = internSchema;
export const internListReply = z.object({ data: z.array(internSchema), has_more: z.boolean(), next_cursor: z.string().optional() });
export const internKeyBody = z.strictObject({ name: z.string().trim().min(1).max(256).optional() });
