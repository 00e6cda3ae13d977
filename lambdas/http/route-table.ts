// The single source of truth for the HTTP surface: the local server dispatches from it, the CDK stack
// creates the API Gateway routes from it, and the OpenAPI document is generated from it.
// Adding an endpoint = one entry here + its operation in the feature folder.
import * as z from 'zod';
import type { LambdaFunction, OperationFor, RouteDef } from './route.js';
import {
  createKeyBody, createKeyReply, currentKeyReply, deleteKeyReply, keyListReply, keyReply, listKeysQuery, updateKeyBody,
} from '../keys/schemas.js';
import { organizationSettingsReply, updateOrganizationSettingsBody } from '../tenancy/schemas.js';
import { chatRequestSchema } from '../inference/chat-schema.js';
import { responsesRequestSchema } from '../inference/responses-schema.js';
import { listModelsQuery, listModelsReply } from '../catalog/schemas.js';

/** Lambda Function URLs accept request payloads up to 6 MB. */
const INFERENCE_MAX_BODY_BYTES = 6 * 1024 * 1024;

export const routes = [
  {
    operationId: 'health', method: 'GET', path: '/health', unversioned: true, fn: 'management', auth: 'none',
    tag: 'System', summary: 'Liveness: 200 once the gateway can serve', response: z.object({ status: z.literal('ok') }),
  },
  {
    operationId: 'getOpenApiDocument', method: 'GET', path: '/openapi.json', fn: 'management', auth: 'none',
    tag: 'System', summary: 'This API as an OpenAPI 3.1 document', response: z.object({ openapi: z.string() }).passthrough(),
  },
  {
    operationId: 'listKeys', method: 'GET', path: '/keys', fn: 'management', auth: 'management',
    tag: 'API Keys', summary: 'List API keys of the organization, newest first, 100 per page', query: listKeysQuery, response: keyListReply,
  },
  {
    operationId: 'createKey', method: 'POST', path: '/keys', fn: 'management', auth: 'management',
    tag: 'API Keys', summary: 'Create an API key; the reply carries the key text once', body: createKeyBody, response: createKeyReply, successStatus: 201,
  },
  {
    operationId: 'getKey', method: 'GET', path: '/keys/{hash}', fn: 'management', auth: 'management',
    tag: 'API Keys', summary: 'Get an API key by its hash', response: keyReply,
  },
  {
    operationId: 'updateKey', method: 'PATCH', path: '/keys/{hash}', fn: 'management', auth: 'management',
    tag: 'API Keys', summary: 'Update an API key', body: updateKeyBody, response: keyReply,
  },
  {
    operationId: 'deleteKey', method: 'DELETE', path: '/keys/{hash}', fn: 'management', auth: 'management',
    tag: 'API Keys', summary: 'Delete an API key', response: deleteKeyReply,
  },
  {
    operationId: 'getCurrentKey', method: 'GET', path: '/key', fn: 'management', auth: 'any',
    tag: 'API Keys', summary: 'Metadata of the calling key', response: currentKeyReply,
  },
  {
    operationId: 'getOrganizationSettings', method: 'GET', path: '/organization/settings', fn: 'management', auth: 'management', organizationOnly: true,
    tag: 'Organization', summary: 'Organization settings', response: organizationSettingsReply,
  },
  {
    operationId: 'updateOrganizationSettings', method: 'PATCH', path: '/organization/settings', fn: 'management', auth: 'management', organizationOnly: true,
    tag: 'Organization', summary: 'Update organization settings', body: updateOrganizationSettingsBody, response: organizationSettingsReply,
  },
  {
    operationId: 'listModels', method: 'GET', path: '/models', fn: 'management', auth: 'optional',
    tag: 'Models', summary: 'The model catalog (only the usable models for keys of organizations that filter their catalog)', query: listModelsQuery, response: listModelsReply,
  },
  {
    operationId: 'listModelsForUser', method: 'GET', path: '/models/user', fn: 'management', auth: 'any',
    tag: 'Models', summary: 'The models the calling key may use', query: listModelsQuery, response: listModelsReply,
  },
  {
    operationId: 'chatCompletions', method: 'POST', path: '/chat/completions', fn: 'inference', auth: 'inference',
    tag: 'Inference', summary: 'Chat completion (JSON, or SSE with stream: true)', body: chatRequestSchema, maxBodyBytes: INFERENCE_MAX_BODY_BYTES,
  },
  {
    operationId: 'createResponse', method: 'POST', path: '/responses', fn: 'inference', auth: 'inference',
    tag: 'Inference', summary: 'Responses-format generation (JSON, or SSE with stream: true); stateless', body: responsesRequestSchema, maxBodyBytes: INFERENCE_MAX_BODY_BYTES,
  },
] as const satisfies readonly RouteDef[];

export type Route = (typeof routes)[number];
type RoutesOf<F extends LambdaFunction> = Extract<Route, { fn: F }>;

/** Every operation of one Lambda function, typed by its route's body and query schemas. */
export type Operations<F extends LambdaFunction> = { [R in RoutesOf<F> as R['operationId']]: OperationFor<R> };
export type ManagementOperations = Operations<'management'>;
export type InferenceOperations = Operations<'inference'>;

export function routesOf(fn: LambdaFunction): RouteDef[] {
  return (routes as readonly RouteDef[]).filter((route) => route.fn === fn);
}
