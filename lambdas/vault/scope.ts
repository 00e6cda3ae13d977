// Who may use a vault or intern route, and which vault a request means. Rules: the key selects the scope,
// with no default workspace and no fallback; everything answers 404 outside the intern programme; an intern's
// own key is confined to that intern; regional hostnames are refused.
import { ForbiddenError, NotFoundError } from '../platform/errors.js';
import type { Principal } from '../platform/http/auth.js';
import type { GatewayRequest } from '../platform/http/request.js';
import { hashKey, hashesEqual, type ApiKey } from '../keys/index.js';
import type { Organization, OrganizationRepository } from '../organizations/index.js';
import type { VaultRef } from './envelope.js';
import { FRONT_DOOR_HEADER } from './front-door-header.js';
import type { HostRules } from './settings.js';

export const NOT_FOUND = 'Not found';
/** The AWS regional endpoints a deployment also answers on; the CloudFront front door marks its requests. */
const REGIONAL_AWS_HOST = /\.(execute-api\.[a-z0-9-]+\.amazonaws\.com|lambda-url\.[a-z0-9-]+\.on\.aws)$/;

export interface Caller {
  key: ApiKey;
  org: Organization;
}

/**
 * Rule 9: the vault is served only on the global hostname, never on a regional one. The raw AWS regional
 * endpoints count as global only for requests CloudFront marked with the deployment's front-door token.
 */
export function isRegionalHost(request: GatewayRequest, rules: HostRules): boolean {
  const host = (request.host.split(':')[0] ?? '').toLowerCase();
  if (rules.regionalHostnames.includes(host)) return true;
  if (!REGIONAL_AWS_HOST.test(host)) return false;
  const sent = request.headers[FRONT_DOOR_HEADER];
  return !(rules.frontDoorTokenHash && sent && hashesEqual(hashKey(sent), rules.frontDoorTokenHash));
}

/** The caller of a vault or intern route: in the programme (else 404) and on the global hostname. */
export async function callerOf(principal: Principal, request: GatewayRequest, organizations: Pick<OrganizationRepository, 'get'>, hosts: HostRules): Promise<Caller> {
  const { key } = principal;
  const org = await organizations.get(key.org_id);
  if (!org?.intern_programme) throw new NotFoundError(NOT_FOUND);
  if (isRegionalHost(request, hosts)) throw new ForbiddenError('The vault is not served on regional hostnames; use the global base URL');
  return { key, org };
}

export const workspaceVault = (key: ApiKey): VaultRef => ({ orgId: key.org_id, workspaceId: key.workspace_id, purpose: 'vault' });
export const internVault = (key: ApiKey, internId: string): VaultRef => ({ orgId: key.org_id, workspaceId: key.workspace_id, internId, purpose: 'vault' });

/** The scope of /vault/secrets: the key's workspace, or the intern an intern's key belongs to. */
export function keyScope(caller: Caller): VaultRef {
  return caller.key.intern_id ? internVault(caller.key, caller.key.intern_id) : workspaceVault(caller.key);
}

/** What the scope rules read of an intern (the interns feature's Intern has these). */
export interface InternRef {
  id: string;
  workspace_id: string;
}

/**
 * The port to the interns' store: interns build on the vault (their secrets are vault routes), so the
 * vault names only the lookup it needs rather than importing the interns feature.
 */
export interface InternLookup<T extends InternRef = InternRef> {
  getIntern(orgId: string, internId: string): Promise<T | undefined>;
}

/** An intern of the key's workspace, for intern routes; 404 for any other (and for other interns' keys). */
export async function internOf<T extends InternRef>(caller: Caller, interns: InternLookup<T>, internId: string): Promise<T> {
  if (caller.key.intern_id && caller.key.intern_id !== internId) throw new NotFoundError(NOT_FOUND);
  const intern = await interns.getIntern(caller.key.org_id, internId);
  if (!intern || intern.workspace_id !== caller.key.workspace_id) throw new NotFoundError(NOT_FOUND);
  return intern;
}

/** Routes an intern's own key never reaches (every workspace route and every other intern route). */
export function notForInternKeys(caller: Caller): void {
  if (caller.key.intern_id) throw new NotFoundError(NOT_FOUND);
}
