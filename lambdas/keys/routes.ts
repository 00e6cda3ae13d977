// The API key routes: the organization's keys (management keys) and the calling key's own metadata.
import type { OperationsFor, PathParam, RouteDef } from '../platform/http/route.js';
import { createKeyBody, createKeyReply, currentKeyReply, deleteKeyReply, keyListReply, keyReply, listKeysQuery, updateKeyBody } from './schemas.js';

const keyHash: PathParam = { pattern: /^[0-9a-f]{64}$/, expected: 'the key hash: 64 lowercase hexadecimal characters' };

export const keyRoutes = [
  {
    operationId: 'listKeys', method: 'GET', path: '/keys', fn: 'management', auth: 'management',
    tag: 'API Keys', summary: 'List API keys of the organization, newest first, 100 per page', query: listKeysQuery, response: keyListReply,
  },
  {
    operationId: 'createKey', method: 'POST', path: '/keys', fn: 'management', auth: 'management',
    tag: 'API Keys', summary: 'Create an API key; the reply carries the key text once', body: createKeyBody, response: createKeyReply, successStatus: 201,
  },
  {
    operationId: 'getKey', method: 'GET', path: '/keys/{hash}', params: { hash: keyHash }, fn: 'management', auth: 'management',
    tag: 'API Keys', summary: 'Get an API key by its hash', response: keyReply,
  },
  {
    operationId: 'updateKey', method: 'PATCH', path: '/keys/{hash}', params: { hash: keyHash }, fn: 'management', auth: 'management',
    tag: 'API Keys', summary: 'Update an API key', body: updateKeyBody, response: keyReply,
  },
  {
    operationId: 'deleteKey', method: 'DELETE', path: '/keys/{hash}', params: { hash: keyHash }, fn: 'management', auth: 'management',
    tag: 'API Keys', summary: 'Delete an API key', response: deleteKeyReply,
  },
  {
    operationId: 'getCurrentKey', method: 'GET', path: '/key', fn: 'management', auth: 'any',
    tag: 'API Keys', summary: 'Metadata of the calling key', response: currentKeyReply,
  },
] as const satisfies readonly RouteDef[];

export type KeyOperations = OperationsFor<typeof keyRoutes>;
