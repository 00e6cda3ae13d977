import { describe, expect, it } from '@jest/globals';
import { authenticate, MANAGEMENT_ONLY_MESSAGE, MULTIPLE_CREDENTIALS_MESSAGE, NO_INFERENCE_FOR_MANAGEMENT_MESSAGE, type AuthDeps } from '../../lambdas/keys/index.js';
import { HttpError, httpErrorOf } from '../../lambdas/platform/http/errors.js';
import { DomainError } from '../../lambdas/platform/errors.js';
import { KeyCache } from '../../lambdas/keys/key-cache.js';
import { newApiKey } from '../../lambdas/keys/new-key.js';
import { hashKey } from '../../lambdas/keys/key-format.js';
import type { ApiKey, KeyKind } from '../../lambdas/keys/types.js';
import type { ApiKeyRepository } from '../../lambdas/keys/api-key-repository.js';

function fixture(keys: ApiKey[], options: { now?: Date; operatorKeyText?: string } = {}) {
  const lookups: string[] = [];
  const repo = { get: async (hash: string) => { lookups.push(hash); return keys.find((key) => key.hash === hash); } } as unknown as ApiKeyRepository;
  const deps: AuthDeps = { keys: repo, keyCache: new KeyCache(60_000), clock: () => options.now ?? new Date('2026-06-01T00:00:00Z'), operatorKeyText: options.operatorKeyText };
  return { deps, lookups };
}

function makeKey(kind: KeyKind, overrides: Partial<ApiKey> = {}, text?: string) {
  const made = newApiKey({ orgId: 'o', orgKind: 'organization', workspaceId: 'w', kind, name: 'k', now: new Date('2026-01-01T00:00:00Z'), text });
  return { key: { ...made.key, ...overrides }, text: made.text };
}

async function failure(promise: Promise<unknown>): Promise<{ status: number; message: string }> {
  try {
    await promise;
  } catch (err) {
    // Authentication throws domain errors; the status is what the HTTP error map answers them with.
    const http = err instanceof DomainError ? httpErrorOf(err) : err;
    if (http instanceof HttpError) return { status: http.status, message: http.message };
    throw err;
  }
  throw new Error('expected an HttpError');
}

const bearer = (text: string) => ({ authorization: `Bearer ${text}` });

describe('authenticate', () => {
  it('needs nothing on open routes', async () => {
    expect(await authenticate({}, { auth: 'none' }, fixture([]).deps)).toBeNull();
  });

  it('accepts a valid key and caches its record', async () => {
    const { key, text } = makeKey('standard');
    const { deps, lookups } = fixture([key]);
    expect((await authenticate(bearer(text), { auth: 'any' }, deps))?.key.hash).toBe(key.hash);
    await authenticate({ authorization: `bearer  ${text} ` }, { auth: 'inference' }, deps);
    expect(lookups).toHaveLength(1);
  });

  it('refuses kinds that the route does not allow', async () => {
    const standard = makeKey('standard');
    const management = makeKey('management');
    const { deps } = fixture([standard.key, management.key]);
    expect(await failure(authenticate(bearer(standard.text), { auth: 'management' }, deps))).toEqual({ status: 403, message: MANAGEMENT_ONLY_MESSAGE });
    expect(await failure(authenticate(bearer(management.text), { auth: 'inference' }, deps))).toEqual({ status: 403, message: NO_INFERENCE_FOR_MANAGEMENT_MESSAGE });
  });

  it('refuses disabled, expired and unknown keys with 401', async () => {
    const disabled = makeKey('standard', { disabled: true });
    const expired = makeKey('management', { expires_at: '2026-05-31T23:59:59.000Z' });
    const unknown = makeKey('standard');
    const { deps } = fixture([disabled.key, expired.key]);
    expect(await failure(authenticate(bearer(disabled.text), { auth: 'any' }, deps))).toEqual({ status: 401, message: 'API key disabled' });
    expect(await failure(authenticate(bearer(expired.text), { auth: 'management' }, deps))).toEqual({ status: 401, message: 'API key expired' });
    expect(await failure(authenticate(bearer(unknown.text), { auth: 'any' }, deps))).toEqual({ status: 401, message: 'Invalid API key' });
  });

  it('refuses missing, non-bearer and malformed credentials without a lookup', async () => {
    const { deps, lookups } = fixture([]);
    expect(await failure(authenticate({}, { auth: 'any' }, deps))).toEqual({ status: 401, message: 'Missing Authentication header' });
    expect(await failure(authenticate({ authorization: '  ' }, { auth: 'any' }, deps))).toEqual({ status: 401, message: 'Missing Authentication header' });
    expect((await failure(authenticate({ authorization: 'Token abc' }, { auth: 'any' }, deps))).status).toBe(401);
    expect(await failure(authenticate(bearer('sk-gw-v1-deadbeef'), { auth: 'any' }, deps))).toEqual({ status: 401, message: 'Malformed API key' });
    expect(lookups).toEqual([]);
  });

  it('refuses a key of the right shape whose checksum does not match without a lookup, each time it is sent', async () => {
    const { key, text } = makeKey('standard');
    const last = text.at(-1) === '0' ? '1' : '0';
    const mistyped = `${text.slice(0, -1)}${last}`;
    // Even when the store would know its hash: the checksum is what refuses it.
    const { deps, lookups } = fixture([{ ...key, hash: hashKey(mistyped) }]);
    for (let i = 0; i < 2; i++) {
      expect(await failure(authenticate(bearer(mistyped), { auth: 'any' }, deps))).toEqual({ status: 401, message: 'Malformed API key' });
    }
    expect(lookups).toEqual([]);
    // The key itself is looked up once, and served from the cache after.
    const { deps: good, lookups: looked } = fixture([key]);
    for (let i = 0; i < 3; i++) expect((await authenticate(bearer(text), { auth: 'inference' }, good))?.key.hash).toBe(key.hash);
    expect(looked).toHaveLength(1);
  });

  it('refuses more than one credential (duplicate headers joined with commas, as API Gateway passes them) with 401', async () => {
    const standard = makeKey('standard');
    const management = makeKey('management');
    const { deps, lookups } = fixture([standard.key, management.key]);
    const refused = { status: 401, message: MULTIPLE_CREDENTIALS_MESSAGE };
    for (const header of [
      `Bearer ${standard.text},Bearer ${management.text}`,
      `Bearer ${management.text},Bearer ${standard.text}`,
      `Bearer ${management.text}, Bearer ${management.text}`,
      `Bearer ${standard.text},`,
    ]) {
      for (const auth of ['any', 'management', 'optional'] as const) {
        expect(await failure(authenticate({ authorization: header }, { auth }, deps))).toEqual(refused);
      }
    }
    expect(lookups).toEqual([]);
  });

  it('takes the key from x-api-key (Anthropic SDKs) when there is no Authorization header, and refuses two different keys', async () => {
    const standard = makeKey('standard');
    const other = makeKey('standard');
    const { deps } = fixture([standard.key, other.key]);
    expect((await authenticate({ 'x-api-key': standard.text }, { auth: 'inference' }, deps))?.key.hash).toBe(standard.key.hash);
    // The same key both ways (a client configured with both) is one credential.
    expect((await authenticate({ ...bearer(standard.text), 'x-api-key': standard.text }, { auth: 'inference' }, deps))?.key.hash).toBe(standard.key.hash);
    const refused = { status: 401, message: MULTIPLE_CREDENTIALS_MESSAGE };
    expect(await failure(authenticate({ ...bearer(standard.text), 'x-api-key': other.text }, { auth: 'inference' }, deps))).toEqual(refused);
    expect(await failure(authenticate({ 'x-api-key': `${standard.text},${other.text}` }, { auth: 'inference' }, deps))).toEqual(refused);
    expect(await failure(authenticate({ 'x-api-key': 'nope' }, { auth: 'inference' }, deps))).toEqual({ status: 401, message: 'Malformed API key' });
    expect(await failure(authenticate({ 'x-api-key': ' ' }, { auth: 'inference' }, deps))).toEqual({ status: 401, message: 'Missing Authentication header' });
  });

  it('accepts the operator\'s chosen key text without the checksum format', async () => {
    const operator = makeKey('management', {}, 'operator-chosen-secret');
    const { deps } = fixture([operator.key], { operatorKeyText: 'operator-chosen-secret' });
    expect((await authenticate(bearer('operator-chosen-secret'), { auth: 'management' }, deps))?.isManagement).toBe(true);
    expect(await failure(authenticate(bearer('operator-chosen-secreT'), { auth: 'management' }, deps))).toEqual({ status: 401, message: 'Malformed API key' });
  });

  it('answers 404 on organization-only routes for personal accounts', async () => {
    const personal = makeKey('management', { org_kind: 'personal' });
    const { deps } = fixture([personal.key]);
    expect((await failure(authenticate(bearer(personal.text), { auth: 'management', organizationOnly: true }, deps))).status).toBe(404);
  });
});
