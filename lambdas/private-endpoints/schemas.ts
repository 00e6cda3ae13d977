// Wire shapes of the private endpoint routes (public OpenRouter API: CreatePrivateEndpointRequest,
// UpdatePrivateEndpointRequest, PrivateEndpoint, PrivateEndpointSummary, ManagedPrivateEndpoint,
// PrivateEndpointValidation). Beside them, this gateway takes the upstream key itself (`api_key`) and the
// workspace the endpoint serves (`workspace_id`).
import * as z from 'zod';
import { usdToNanos } from '../platform/money.js';
import { keyText } from '../platform/http/header-text.js';

/** A price per token above this is a mistake (the dearest models cost cents per thousand tokens). */
const MAX_USD_PER_TOKEN_NANOS = 1_000n * 1_000_000_000n;

/** Plain decimal text, as the catalog's prices are written ("0.000002"): no sign, exponent or leading zeros. */
const PRICE_TEXT = /^(0|[1-9]\d*)(\.\d+)?$/;

const usdPerToken = z.string().max(32).superRefine((value, ctx) => {
  try {
    // Stored and shown as given: text other than a plain decimal ("-0", "+1", "1e-6", "007") is refused.
    if (!PRICE_TEXT.test(value)) {
      ctx.addIssue({ code: 'custom', message: 'must be a plain decimal USD amount per token, like "0.000002" (no sign, exponent, spaces or leading zeros)' });
      return;
    }
    const nanos = usdToNanos(value);
    if (nanos < 0n) ctx.addIssue({ code: 'custom', message: 'must not be negative' });
    else if (nanos > MAX_USD_PER_TOKEN_NANOS) ctx.addIssue({ code: 'custom', message: 'must be at most 1000 USD per token' });
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `must be a decimal USD amount per token, at most 9 decimal places (${(err as Error).message})` });
  }
});

const pricing = z.strictObject({ prompt: usdPerToken, completion: usdPerToken });

const httpsUrl = z.string().max(2048).refine((value) => {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === '' && !value.includes('?') && !value.includes('#');
  } catch {
    return false;
  }
}, 'must be an http(s) base URL without credentials, query or fragment');

const region = z.enum(['global', 'europe', 'us']).nullable();
const slug = z.string().min(1).max(256);

export const createPrivateEndpointBody = z.strictObject({
  model_permaslug: slug,
  provider_slug: slug,
  upstream_model_id: slug,
  base_url: httpsUrl,
  declared_region: region.optional(),
  declared_zdr: z.boolean().nullable().optional(),
  pricing: pricing.optional(),
  /** Validate, then activate, in the same call (the workspace must be the endpoint's). */
  activate: z.strictObject({ workspace_id: z.string().min(1).max(128) }).optional(),
  /** The upstream API key: sealed in the vault, released only to the base URL's host. */
  api_key: keyText(1, 4096),
  /** The workspace whose requests it serves (default: the key's). */
  workspace_id: z.string().min(1).max(128).optional(),
});

export const updatePrivateEndpointBody = z.strictObject({
  upstream_model_id: slug.optional(),
  base_url: httpsUrl.optional(),
  declared_zdr: z.boolean().nullable().optional(),
  declared_region: region.optional(),
  /** A new upstream key (needed when the base URL moves to another host). */
  api_key: keyText(1, 4096).optional(),
});

export const validateBody = z.strictObject({ workspace_id: z.string().min(1).max(128) });
export const pricingBody = z.strictObject({ pricing });
export const deleteQuery = z.object({ draft_only: z.enum(['true', 'false']).optional() });

const status = z.enum(['draft', 'active', 'disabled']);

export const summarySchema = z.object({
  id: z.string(), created_at: z.string(), model_name: z.string().nullable(), model_permaslug: z.string(), model_slug: z.string().nullable(), provider_name: z.string(), status,
});
export const managedSchema = summarySchema.extend({ declared_region: region, declared_zdr: z.boolean().nullable() });

const checkSchema = z.object({
  name: z.string(), passed: z.boolean(), reason: z.string().optional(), upstream_status: z.number().int().optional(), upstream_message: z.string().nullable().optional(), actual_model: z.string().nullable().optional(),
});
export const validationSchema = z.object({ passed: z.boolean(), checks: z.array(checkSchema) });

export const endpointSchema = z.object({
  id: z.string(),
  model_name: z.string().nullable(),
  model_permaslug: z.string(),
  model_slug: z.string().nullable(),
  provider_name: z.string(),
  provider_slug: z.string().nullable(),
  upstream_model_id: z.string(),
  base_url: z.string().nullable(),
  declared_region: region,
  declared_zdr: z.boolean().nullable(),
  pricing: pricing.nullable(),
  status,
  workspace_id: z.string(),
  validation: validationSchema.extend({ at: z.string(), stale: z.boolean() }).nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const listReply = z.object({ data: z.array(summarySchema) });
export const managedReply = z.object({ data: managedSchema });
export const endpointReply = z.object({ data: endpointSchema });
export const validationReply = z.object({ data: validationSchema });
export const deleteReply = z.object({ data: z.object({ id: z.string() }) });
