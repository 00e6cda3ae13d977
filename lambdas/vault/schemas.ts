// Wire shapes of the vault routes (docs/API.md "Vault" is generated from them; names as in the public
// OpenRouter API: VaultSecret*).
import * as z from 'zod';
import { queryInt } from '../platform/http/query-int.js';
import { MAX_HOSTS, MAX_HOST_LENGTH } from './hosts.js';

export const SECRET_NAME = /^(?!.*__)[a-z]([a-z0-9_]*[a-z0-9])?$/;
export const secretNameSchema = z.string().min(1).max(255).regex(SECRET_NAME, 'must be lowercase letters, digits and single underscores, start with a letter and not end with an underscore');

export const putSecretBody = z.strictObject({
  hosts: z.array(z.string().max(MAX_HOST_LENGTH, `each host must be at most ${MAX_HOST_LENGTH} characters`)).min(1, 'must list at least one host').max(MAX_HOSTS, `at most ${MAX_HOSTS} hosts`),
  value: z.string().min(1, 'must not be empty').max(65_536, 'at most 65536 characters'),
});

export const pageQuery = z.object({
  limit: queryInt(1, 100).optional(),
  offset: queryInt(0, 10_000).optional(),
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
