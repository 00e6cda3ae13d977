// A destination's config, per type (the public API's camelCase keys): what is checked, which fields are
// secrets (sealed in the vault, masked in replies), how an update merges into what is stored, and the one
// host the secrets may go to.
import { randomBytes } from 'node:crypto';
import * as z from 'zod';
import { hostOfUrl } from '../vault/index.js';
import { isPrivateAddress } from '../platform/public-address.js';
import { headerValue, keyText } from '../platform/http/header-text.js';
import type { DestinationType } from './types.js';

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;
/** Headers the gateway sets itself on a delivery. */
const RESERVED_HEADERS = new Set([
  'content-type', 'content-length', 'host', 'idempotency-key', 'x-gateway-signature', 'x-gateway-delivery', 'x-gateway-event',
  // Hop-by-hop headers: the HTTP client refuses to send them.
  'connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'expect', 'te', 'trailer', 'proxy-authorization', 'proxy-connection',
]);

const headers = z.record(z.string(), headerValue(4096))
  .superRefine((map, ctx) => {
    const names = Object.keys(map);
    if (names.length > 20) ctx.addIssue({ code: 'custom', message: 'at most 20 headers' });
    for (const name of names) {
      if (!HEADER_NAME.test(name)) ctx.addIssue({ code: 'custom', message: `"${name}" is not a header name` });
      else if (RESERVED_HEADERS.has(name.toLowerCase())) ctx.addIssue({ code: 'custom', message: `${name} is set by the gateway, or cannot be sent on a delivery` });
    }
  });

const httpUrl = z.string().max(2048).refine((value) => {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}, 'must be an http(s) URL without credentials in it');

const SCHEMAS = {
  webhook: z.strictObject({
    url: httpUrl,
    method: z.enum(['POST', 'PUT']).default('POST'),
    headers: headers.optional(),
    /** The HMAC-SHA-256 key of the X-Gateway-Signature header (made by the gateway when left out). */
    secret: z.string().min(16, 'must be at least 16 characters').max(256).optional(),
  }),
  'otel-collector': z.strictObject({
    endpoint: httpUrl,
    headers: headers.optional(),
  }),
  langfuse: z.strictObject({
    baseUrl: httpUrl.default('https://us.cloud.langfuse.com'),
    publicKey: z.string().min(1).max(256),
    secretKey: z.string().min(1).max(256),
    headers: headers.refine((map) => !Object.keys(map).some((name) => name.toLowerCase() === 'authorization'), 'Langfuse is authorized with publicKey and secretKey; leave out an Authorization header').optional(),
  }),
  s3: z.strictObject({
    bucketName: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be an S3 bucket name'),
    prefix: z.string().max(512).default('gateway-traces'),
    pathTemplate: z.string().min(1).max(512).default('{prefix}/{date}'),
    region: z.string().regex(/^[a-z0-9-]{2,32}$/, 'must be an AWS region').optional(),
    endpoint: httpUrl.optional(),
    accessKeyId: keyText(1, 256),
    secretAccessKey: keyText(1, 256),
    sessionToken: keyText(1, 4096).optional(),
  }),
} satisfies Record<DestinationType, z.ZodType>;

/** Fields sealed in the vault and masked in replies. */
const SECRET_FIELDS: Record<DestinationType, readonly string[]> = {
  webhook: ['secret', 'headers'],
  'otel-collector': ['headers'],
  langfuse: ['publicKey', 'secretKey', 'headers'],
  s3: ['secretAccessKey', 'sessionToken'],
};

export type FullConfig = Record<string, unknown>;

/** A secret as replies show it: enough to recognise, never enough to use. */
export function mask(value: string): string {
  return value.length >= 16 ? `${value.slice(0, 4)}...${value.slice(-4)}` : '...';
}

const maskValue = (value: unknown): unknown => (typeof value === 'string'
  ? mask(value)
  : value && typeof value === 'object' ? Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, mask(String(inner))])) : value);

export class ConfigError extends Error {}

function checked(type: DestinationType, config: unknown): FullConfig {
  const parsed = SCHEMAS[type].safeParse(config);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.length ? `.${issue.path.join('.')}` : '';
    throw new ConfigError(`Invalid body.config${path}: ${issue.message}`);
  }
  return parsed.data as FullConfig;
}

/** A new destination's config, with a signing secret made for a webhook that brought none. */
export function newConfig(type: DestinationType, config: unknown): FullConfig {
  const full = checked(type, config);
  if (type === 'webhook' && full.secret === undefined) full.secret = `whsec_${randomBytes(24).toString('base64url')}`;
  return full;
}

/**
 * An update merged into the stored config: fields left out keep their value, and so does a secret sent
 * back in its masked form (as replies show it). A header map replaces the stored one, but its masked
 * values keep theirs. `kept` names every secret value carried over from before (`secret`,
 * `headers.<name>` …): a destination moving to another host may take none of them along.
 */
export function mergedConfig(type: DestinationType, current: FullConfig, update: Record<string, unknown>, shown: Record<string, unknown>): { config: FullConfig; kept: string[] } {
  const secret = new Set(SECRET_FIELDS[type]);
  const next: Record<string, unknown> = { ...current };
  for (const [field, value] of Object.entries(update)) {
    if (secret.has(field) && field !== 'headers' && typeof value === 'string' && value === shown[field]) continue;
    if (field === 'headers' && value && typeof value === 'object') {
      const before = (current.headers ?? {}) as Record<string, string>;
      const masked = (shown.headers ?? {}) as Record<string, string>;
      next.headers = Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([name, inner]) => [name, inner === masked[name] && before[name] !== undefined ? before[name] : inner]));
      continue;
    }
    next[field] = value;
  }
  const config = checked(type, next);
  const kept: string[] = [];
  for (const field of SECRET_FIELDS[type]) {
    if (config[field] === undefined) continue;
    if (field === 'headers') {
      const before = (current.headers ?? {}) as Record<string, string>;
      for (const [name, value] of Object.entries(config.headers as Record<string, string>)) if (before[name] === value) kept.push(`headers.${name}`);
    } else if (config[field] === current[field]) {
      kept.push(field);
    }
  }
  return { config, kept };
}

/** The config split for storage: what replies show (secrets masked), and the secrets to seal. */
export function splitConfig(type: DestinationType, config: FullConfig): { shown: Record<string, unknown>; secrets: Record<string, unknown>; fields: string[] } {
  const shown: Record<string, unknown> = {};
  const secrets: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(config)) {
    if (value === undefined) continue;
    if (SECRET_FIELDS[type].includes(field)) {
      secrets[field] = value;
      shown[field] = maskValue(value);
    } else {
      shown[field] = value;
    }
  }
  return { shown, secrets, fields: Object.keys(secrets) };
}

/** The config a delivery uses: what is shown, with the secrets opened from the vault put back. */
export function joinedConfig(shown: Record<string, unknown>, secrets: Record<string, unknown>): FullConfig {
  return { ...shown, ...secrets };
}

/** The URL of the destination's service (its host is the one the secrets are bound to). */
export function serviceUrl(type: DestinationType, config: FullConfig): string {
  switch (type) {
    case 'webhook': return config.url as string;
    case 'otel-collector': return config.endpoint as string;
    case 'langfuse': return config.baseUrl as string;
    case 's3': return (config.endpoint as string | undefined) ?? `https://s3.${(config.region as string | undefined) ?? 'us-east-1'}.amazonaws.com`;
  }
}

/**
 * The host the destination's secrets are bound to. Unless private hosts are allowed (npm start), a
 * destination on a private, loopback or link-local address is refused: deliveries leave from inside the
 * deployment's network.
 */
export function destinationHost(type: DestinationType, config: FullConfig, allowPrivateHosts: boolean): string {
  const url = new URL(serviceUrl(type, config));
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivateHosts && isPrivateAddress(hostname)) {
    throw new ConfigError(`Invalid body.config: ${hostname} is a private or loopback address; deliveries go to public hosts only`);
  }
  // As the vault's release reads a URL's host.
  return hostOfUrl(url.href)!;
}
