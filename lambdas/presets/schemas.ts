// The preset routes' path parameters, queries and replies (the shapes @openrouter/sdk's presets.* parse).
import * as z from 'zod';
import { queryInt } from '../platform/http/query-int.js';
import type { PathParam } from '../platform/http/route.js';
import { PRESET_SLUG, PRESET_SLUG_RULE } from '../inference/formats/common-schema.js';

export const presetSlugParam: PathParam = { pattern: PRESET_SLUG, expected: `a preset slug: ${PRESET_SLUG_RULE}` };
export const presetVersionParam: PathParam = { pattern: /^[1-9][0-9]{0,8}$/, expected: 'a version number (1, 2, 3 …)' };

export const presetPageQuery = z.object({
  limit: queryInt(1, 100).optional(),
  offset: queryInt(0).optional(),
});

const presetVersion = z.object({
  id: z.string(),
  preset_id: z.string(),
  version: z.number().int(),
  config: z.record(z.string(), z.unknown()),
  system_prompt: z.string().nullable(),
  creator_id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});

const presetFields = {
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  description: z.string().nullable(),
  status: z.enum(['active', 'disabled', 'archived']),
  status_updated_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  creator_user_id: z.string().nullable(),
  workspace_id: z.string().nullable(),
  designated_version_id: z.string().nullable(),
};

export const presetReply = z.object({ data: z.object({ ...presetFields, designated_version: presetVersion.nullable() }) });
export const presetListReply = z.object({ data: z.array(z.object(presetFields)), total_count: z.number().int() });
export const presetVersionReply = z.object({ data: presetVersion });
export const presetVersionListReply = z.object({ data: z.array(presetVersion), total_count: z.number().int() });
