// The vault routes (regular keys): secrets of the key's scope, and of an intern of the key's workspace.
import type { OperationsFor, PathParam, RouteDef } from '../platform/http/route.js';
import { uuidParam } from '../platform/http/path-params.js';
import { copySecretsBody, copySecretsReply, effectiveSecretListReply, pageQuery, putSecretBody, SECRET_NAME, secretListReply, secretReply } from './schemas.js';

const secretName: PathParam = { pattern: new RegExp(`^(?=.{1,255}$)${SECRET_NAME.source.slice(1)}`), expected: 'a secret name: lowercase letters, digits and single underscores, starting with a letter, not ending with an underscore, at most 255 characters' };
/** Also the intern routes' (the interns feature). */
export const internIdParam = uuidParam('an intern id');
const internId = internIdParam;

export const vaultRoutes = [
  {
    operationId: 'listVaultSecrets', method: 'GET', path: '/vault/secrets', fn: 'management', auth: 'regular',
    tag: 'Vault', summary: 'Secrets of the key\'s scope (its workspace, or the intern an intern\'s key belongs to), by name; metadata only', query: pageQuery, response: secretListReply,
  },
  {
    operationId: 'getVaultSecret', method: 'GET', path: '/vault/secrets/{name}', params: { name: secretName }, fn: 'management', auth: 'regular',
    tag: 'Vault', summary: 'Metadata of one secret; the value is never returned', response: secretReply,
  },
  {
    operationId: 'putVaultSecret', method: 'PUT', path: '/vault/secrets/{name}', params: { name: secretName }, fn: 'management', auth: 'regular',
    tag: 'Vault', summary: 'Create or replace a secret bound to exact hostnames', body: putSecretBody, response: secretReply,
  },
  {
    operationId: 'deleteVaultSecret', method: 'DELETE', path: '/vault/secrets/{name}', params: { name: secretName }, fn: 'management', auth: 'regular',
    tag: 'Vault', summary: 'Delete a secret (204)', successStatus: 204,
  },
  {
    operationId: 'listInternVaultSecrets', method: 'GET', path: '/vault/interns/{internId}/secrets', params: { internId }, fn: 'management', auth: 'regular',
    tag: 'Vault', summary: 'Secrets of an intern of the key\'s workspace', query: pageQuery, response: secretListReply,
  },
  {
    operationId: 'getInternVaultSecret', method: 'GET', path: '/vault/interns/{internId}/secrets/{name}', params: { internId, name: secretName }, fn: 'management', auth: 'regular',
    tag: 'Vault', summary: 'Metadata of one intern secret', response: secretReply,
  },
  {
    operationId: 'putInternVaultSecret', method: 'PUT', path: '/vault/interns/{internId}/secrets/{name}', params: { internId, name: secretName }, fn: 'management', auth: 'regular',
    tag: 'Vault', summary: 'Create or replace an intern secret', body: putSecretBody, response: secretReply,
  },
  {
    operationId: 'deleteInternVaultSecret', method: 'DELETE', path: '/vault/interns/{internId}/secrets/{name}', params: { internId, name: secretName }, fn: 'management', auth: 'regular',
    tag: 'Vault', summary: 'Delete an intern secret (204)', successStatus: 204,
  },
  {
    operationId: 'copyVaultSecretsToIntern', method: 'POST', path: '/vault/interns/{internId}/secrets/copy', params: { internId }, fn: 'management', auth: 'regular',
    tag: 'Vault', summary: 'Copy named workspace secrets into an intern\'s vault (all or nothing)', body: copySecretsBody, response: copySecretsReply,
  },
  {
    operationId: 'listInternEffectiveSecrets', method: 'GET', path: '/vault/interns/{internId}/effective-secrets', params: { internId }, fn: 'management', auth: 'regular',
    tag: 'Vault', summary: 'The secrets an intern receives, one per name (intern wins over workspace)', query: pageQuery, response: effectiveSecretListReply,
  },
] as const satisfies readonly RouteDef[];

export type VaultOperations = OperationsFor<typeof vaultRoutes>;
