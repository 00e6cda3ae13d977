// Bearer-key authentication: format check before any lookup, hash lookup through a short cache,
// constant-time comparison, then the key's state and kind against what the route requires.
// The HTTP platform asks through its Authenticator port (platform/http/auth.ts); this module answers.
import { ForbiddenError, NotFoundError, UnauthenticatedError } from '../platform/errors.js';
import type { AuthRequirement, AuthRule, Authenticator, Principal } from '../platform/http/auth.js';
import type { ApiKey } from './types.js';
import { hasKeyChecksum, hasKeyShape, hashKey, hashesEqual } from './key-format.js';
import type { KeyCache } from './key-cache.js';
import type { ApiKeyRepository } from './api-key-repository.js';

declare module '../platform/http/auth.js' {
  /** A request's caller: the API key it authenticated with. */
  interface Principal {
    key: ApiKey;
    isManagement: boolean;
    /** DynamoDB read capacity this request's key lookup consumed (0 when the key came from the cache). */
    readUnits: number;
  }
}

export interface AuthDeps {
  keys: ApiKeyRepository;
  keyCache: KeyCache;
  clock: () => Date;
  /** An operator-chosen key text (GATEWAY_ADMIN_KEY) that is accepted without the checksum format. */
  operatorKeyText?: string | undefined;
}

export const MANAGEMENT_ONLY_MESSAGE = 'Only management keys can perform this operation';
export const NO_INFERENCE_FOR_MANAGEMENT_MESSAGE = 'Management keys cannot call inference endpoints; use a regular API key';
export const MULTIPLE_CREDENTIALS_MESSAGE = 'More than one credential: send exactly one Authorization header with one "Bearer <API key>" (or one x-api-key header)';
export const REGULAR_KEYS_ONLY_MESSAGE = 'Management keys cannot use this route; use a regular API key';
export const MALFORMED_MESSAGE = 'Malformed API key';

export async function authenticate(
  headers: Record<string, string>,
  route: AuthRule,
  deps: AuthDeps,
): Promise<Principal | null> {
  const requirement: AuthRequirement = route.auth;
  if (requirement === 'none') return null;
  const header = headers.authorization;
  // Anthropic's SDKs send the key as x-api-key (with `apiKey`; `authToken` sends a Bearer header): taken
  // when there is no Authorization header, and refused as a second credential when it names another key.
  const apiKeyHeader = headers['x-api-key'];
  const hasBearer = header !== undefined && header.trim() !== '';
  const hasApiKey = apiKeyHeader !== undefined && apiKeyHeader.trim() !== '';
  if (!hasBearer && !hasApiKey && requirement === 'optional') return null;
  if (!hasBearer && !hasApiKey) throw new UnauthenticatedError('Missing Authentication header');
  let text: string;
  if (hasBearer) {
    // Duplicate Authorization headers arrive joined with commas (API Gateway payload 2.0, and the local server
    // builds its events the same way): more than one credential is refused, never resolved to one of them.
    if (header.includes(',')) throw new UnauthenticatedError(MULTIPLE_CREDENTIALS_MESSAGE);
    const match = /^Bearer[ \t]+(\S+)\s*$/i.exec(header);
    if (!match) throw new UnauthenticatedError('Invalid Authentication header: expected exactly one "Bearer <API key>"');
    text = match[1]!;
    if (hasApiKey && apiKeyHeader.trim() !== text) throw new UnauthenticatedError(MULTIPLE_CREDENTIALS_MESSAGE);
  } else {
    if (apiKeyHeader!.includes(',')) throw new UnauthenticatedError(MULTIPLE_CREDENTIALS_MESSAGE);
    text = apiKeyHeader!.trim();
  }
  const shaped = hasKeyShape(text);
  if (!shaped && !isOperatorKey(text, deps.operatorKeyText)) throw new UnauthenticatedError(MALFORMED_MESSAGE);
  const hash = hashKey(text);
  let readUnits = 0;
  const key = await deps.keyCache.getOrLoad(hash, async (missing) => {
    // The checksum is checked before a lookup, not on every request: a cached hash is that of a text that
    // passed it (a second SHA-256 a request, saved).
    if (shaped && !hasKeyChecksum(text) && !isOperatorKey(text, deps.operatorKeyText)) throw new UnauthenticatedError(MALFORMED_MESSAGE);
    return deps.keys.get(missing, (units) => { readUnits += units; });
  });
  if (!key || !hashesEqual(key.hash, hash)) throw new UnauthenticatedError('Invalid API key');
  if (key.disabled) throw new UnauthenticatedError('API key disabled');
  if (key.expires_at !== null && Date.parse(key.expires_at) <= deps.clock().getTime()) {
    throw new UnauthenticatedError('API key expired');
  }
  const isManagement = key.kind === 'management';
  if (requirement === 'management' && !isManagement) throw new ForbiddenError(MANAGEMENT_ONLY_MESSAGE);
  if (requirement === 'inference' && isManagement) throw new ForbiddenError(NO_INFERENCE_FOR_MANAGEMENT_MESSAGE);
  if (requirement === 'regular' && isManagement) throw new ForbiddenError(REGULAR_KEYS_ONLY_MESSAGE);
  if (route.organizationOnly && key.org_kind !== 'organization') {
    throw new NotFoundError('Not found: this key belongs to a personal account, which has no organization');
  }
  return { key, isManagement, readUnits };
}

/** The Authenticator port over these deps, for the HTTP platform's dispatch. */
export function createAuthenticator(deps: AuthDeps): Authenticator {
  return (headers, route) => authenticate(headers, route, deps);
}

function isOperatorKey(text: string, operatorKeyText: string | undefined): boolean {
  return operatorKeyText !== undefined && operatorKeyText.length > 0 && hashesEqual(hashKey(text), hashKey(operatorKeyText));
}
