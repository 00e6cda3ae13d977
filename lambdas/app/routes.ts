// The single source of truth for the HTTP surface: the local server dispatches from it, the CDK stack
// creates the API Gateway routes from it, and the OpenAPI document is generated from it.
// Adding an endpoint = one entry here + its operation in the feature folder.
import * as z from 'zod';
import type { LambdaFunction, OperationFor, PathParam, RouteDef } from '../platform/http/route.js';
import {
  createKeyBody, createKeyReply, currentKeyReply, deleteKeyReply, keyListReply, keyReply, listKeysQuery, updateKeyBody,
} from '../keys/schemas.js';
import { organizationSettingsReply, updateOrganizationSettingsBody } from '../organizations/schemas.js';
import { chatRequestSchema } from '../inference/chat-schema.js';
import { responsesRequestSchema } from '../inference/responses-schema.js';
import {
  countModelsQuery, listModelsQuery, listModelsReply, modelCountReply, modelDataReply, modelEndpointsReply, modelReply, providersReply,
} from '../catalog/schemas.js';
import { SLUG_PATTERN } from '../organizations/new-workspace.js';
import { SECRET_NAME } from '../vault/schemas.js';
import {
  budgetListReply, budgetReply, createWorkspaceBody, deletedReply, listWorkspacesQuery, updateWorkspaceBody, upsertBudgetBody, workspaceListReply, workspaceReply,
} from '../workspaces/schemas.js';
import {
  copySecretsBody, copySecretsReply, createInternBody, effectiveSecretListReply, internKeyBody, internListReply, internReply, listInternsQuery, pageQuery,
  putSecretBody, secretListReply, secretReply, updateInternBody,
} from '../vault/schemas.js';
import { byokListReply, byokReply, createByokBody, listByokQuery, updateByokBody } from '../byok/schemas.js';
import {
  activityQuery, activityReply, addCreditsBody, addCreditsReply, analyticsMetaReply, analyticsQueryBody, analyticsQueryReply, creditsReply, feedbackBody,
  feedbackReply, generationQuery, generationReply,
} from '../analytics/schemas.js';

/**
 * Path parameter patterns, as wide as what the operations accept (so that no valid input is refused) and
 * checked before authentication, so a malformed identifier never reaches the store.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const anyOf = (...patterns: RegExp[]) => new RegExp(`^(?:${patterns.map((pattern) => pattern.source.replace(/^\^|\$$/g, '')).join('|')})$`);
const param = {
  keyHash: { pattern: /^[0-9a-f]{64}$/, expected: 'the key hash: 64 lowercase hexadecimal characters' },
  workspaceRef: { pattern: anyOf(UUID, new RegExp(`^(?=.{1,64}$)${SLUG_PATTERN.source.slice(1)}`)), expected: 'a workspace id (UUID) or slug (lowercase letters and digits in hyphen-separated segments, at most 64 characters)' },
  interval: { pattern: /^(?:daily|weekly|monthly|lifetime)$/, expected: 'one of daily, weekly, monthly, lifetime' },
  secretName: { pattern: new RegExp(`^(?=.{1,255}$)${SECRET_NAME.source.slice(1)}`), expected: 'a secret name: lowercase letters, digits and single underscores, starting with a letter, not ending with an underscore, at most 255 characters' },
  internId: { pattern: UUID, expected: 'an intern id (UUID)' },
  byokId: { pattern: UUID, expected: 'a credential id (UUID)' },
  author: { pattern: /^[a-z0-9][a-z0-9._-]{0,99}$/, expected: 'a model author: lowercase letters, digits, ".", "_" and "-" (the part of the model id before "/")' },
  slug: { pattern: /^[a-zA-Z0-9._:-]{1,200}$/, expected: 'a model slug: letters, digits, ".", "_", ":" and "-" (the part of the model id after "/")' },
} satisfies Record<string, PathParam>;

/** Lambda Function URLs accept request payloads up to 6 MB. */
const INFERENCE_MAX_BODY_BYTES = 6 * 1024 * 1024;

export const routes = [
  {
    operationId: 'health', method: 'GET', path: '/health', unversioned: true, fn: 'management', auth: 'none',
    tag: 'System', summary: 'Liveness: 200 once the gateway can serve; locally also each part (store, KMS, simulator), 503 while a required one is down',
    response: z.object({
      status: z.enum(['ok', 'degraded']),
      parts: z.record(z.string(), z.object({ status: z.enum(['ok', 'down', 'restarting']), message: z.string().optional() })).optional(),
    }),
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
    operationId: 'getKey', method: 'GET', path: '/keys/{hash}', params: { hash: param.keyHash }, fn: 'management', auth: 'management',
    tag: 'API Keys', summary: 'Get an API key by its hash', response: keyReply,
  },
  {
    operationId: 'updateKey', method: 'PATCH', path: '/keys/{hash}', params: { hash: param.keyHash }, fn: 'management', auth: 'management',
    tag: 'API Keys', summary: 'Update an API key', body: updateKeyBody, response: keyReply,
  },
  {
    operationId: 'deleteKey', method: 'DELETE', path: '/keys/{hash}', params: { hash: param.keyHash }, fn: 'management', auth: 'management',
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
    operationId: 'countModels', method: 'GET', path: '/models/count', fn: 'management', auth: 'optional',
    tag: 'Models', summary: 'How many models GET /models lists for the caller', query: countModelsQuery, response: modelCountReply,
  },
  {
    // Also reached as /models/author%2Fslug (the openai client's models.retrieve): see the router.
    operationId: 'getModel', method: 'GET', path: '/models/{author}/{slug}', params: { author: param.author, slug: param.slug }, fn: 'management', auth: 'optional',
    tag: 'Models', summary: 'One model, as an item of GET /models', response: modelReply,
  },
  {
    operationId: 'getModelData', method: 'GET', path: '/model/{author}/{slug}', params: { author: param.author, slug: param.slug }, fn: 'management', auth: 'optional',
    tag: 'Models', summary: 'One model under data (the @openrouter/sdk models.get path)', response: modelDataReply,
  },
  {
    operationId: 'listModelEndpoints', method: 'GET', path: '/models/{author}/{slug}/endpoints', params: { author: param.author, slug: param.slug }, fn: 'management', auth: 'optional',
    tag: 'Models', summary: 'The endpoints of one model: pricing, context length, supported parameters, uptime, latency and throughput', response: modelEndpointsReply,
  },
  {
    operationId: 'listProviders', method: 'GET', path: '/providers', fn: 'management', auth: 'optional',
    tag: 'Providers', summary: 'The providers behind the catalog\'s endpoints', response: providersReply,
  },
  {
    operationId: 'listWorkspaces', method: 'GET', path: '/workspaces', fn: 'management', auth: 'management',
    tag: 'Workspaces', summary: 'List workspaces of the organization, oldest first', query: listWorkspacesQuery, response: workspaceListReply,
  },
  {
    operationId: 'createWorkspace', method: 'POST', path: '/workspaces', fn: 'management', auth: 'management',
    tag: 'Workspaces', summary: 'Create a workspace (slug unique in the organization)', body: createWorkspaceBody, response: workspaceReply, successStatus: 201,
  },
  {
    operationId: 'getWorkspace', method: 'GET', path: '/workspaces/{id}', params: { id: param.workspaceRef }, fn: 'management', auth: 'management',
    tag: 'Workspaces', summary: 'Get a workspace by id or slug', response: workspaceReply,
  },
  {
    operationId: 'updateWorkspace', method: 'PATCH', path: '/workspaces/{id}', params: { id: param.workspaceRef }, fn: 'management', auth: 'management',
    tag: 'Workspaces', summary: 'Update a workspace', body: updateWorkspaceBody, response: workspaceReply,
  },
  {
    operationId: 'deleteWorkspace', method: 'DELETE', path: '/workspaces/{id}', params: { id: param.workspaceRef }, fn: 'management', auth: 'management',
    tag: 'Workspaces', summary: 'Delete a workspace that has no API keys (409 otherwise)', response: deletedReply,
  },
  {
    operationId: 'listWorkspaceBudgets', method: 'GET', path: '/workspaces/{workspace_ref}/budgets', params: { workspace_ref: param.workspaceRef }, fn: 'management', auth: 'management',
    tag: 'Workspaces', summary: 'Budgets of a workspace (id or slug), with their current usage', response: budgetListReply,
  },
  {
    operationId: 'getWorkspaceBudget', method: 'GET', path: '/workspaces/{workspace_ref}/budgets/{interval}', params: { workspace_ref: param.workspaceRef, interval: param.interval }, fn: 'management', auth: 'management',
    tag: 'Workspaces', summary: 'One budget: daily, weekly, monthly or lifetime', response: budgetReply,
  },
  {
    operationId: 'putWorkspaceBudget', method: 'PUT', path: '/workspaces/{workspace_ref}/budgets/{interval}', params: { workspace_ref: param.workspaceRef, interval: param.interval }, fn: 'management', auth: 'management',
    tag: 'Workspaces', summary: 'Create or replace a budget; enforced from the next request', body: upsertBudgetBody, response: budgetReply,
  },
  {
    operationId: 'deleteWorkspaceBudget', method: 'DELETE', path: '/workspaces/{workspace_ref}/budgets/{interval}', params: { workspace_ref: param.workspaceRef, interval: param.interval }, fn: 'management', auth: 'management',
    tag: 'Workspaces', summary: 'Delete a budget (succeeds if there was none)', response: deletedReply,
  },
  {
    operationId: 'getCredits', method: 'GET', path: '/credits', fn: 'management', auth: 'management',
    tag: 'Credits', summary: 'Credits added and used by the organization (USD)', response: creditsReply,
  },
  {
    operationId: 'addCredits', method: 'POST', path: '/credits', fn: 'management', auth: 'management',
    tag: 'Credits', summary: 'Add credits to an organization: management keys of the operator\'s (default) organization only', body: addCreditsBody, response: addCreditsReply,
  },
  {
    operationId: 'getGeneration', method: 'GET', path: '/generation', fn: 'management', auth: 'any',
    tag: 'Generations', summary: 'One generation\'s stats and cost ledger (upstream and infrastructure cost)', query: generationQuery, response: generationReply,
  },
  {
    operationId: 'submitGenerationFeedback', method: 'POST', path: '/generation/feedback', fn: 'management', auth: 'management',
    tag: 'Generations', summary: 'Feedback on a generation', body: feedbackBody, response: feedbackReply,
  },
  {
    operationId: 'getActivity', method: 'GET', path: '/activity', fn: 'management', auth: 'management',
    tag: 'Analytics', summary: 'Daily usage by model and provider over the last 30 UTC days (today included)', query: activityQuery, response: activityReply,
  },
  {
    operationId: 'getAnalyticsMeta', method: 'GET', path: '/analytics/meta', fn: 'management', auth: 'management',
    tag: 'Analytics', summary: 'Dimensions, metrics, granularities and filter operators of /analytics/query', response: analyticsMetaReply,
  },
  {
    operationId: 'queryAnalytics', method: 'POST', path: '/analytics/query', fn: 'management', auth: 'management',
    tag: 'Analytics', summary: 'Metrics grouped by dimensions and time buckets, from hourly rollups', body: analyticsQueryBody, response: analyticsQueryReply,
  },
  {
    operationId: 'listVaultSecrets', method: 'GET', path: '/vault/secrets', fn: 'management', auth: 'regular',
    tag: 'Vault', summary: 'Secrets of the key\'s scope (its workspace, or the intern an intern\'s key belongs to), by name; metadata only', query: pageQuery, response: secretListReply,
  },
  {
    operationId: 'getVaultSecret', method: 'GET', path: '/vault/secrets/{name}', params: { name: param.secretName }, fn: 'management', auth: 'regular',
    tag: 'Vault', summary: 'Metadata of one secret; the value is never returned', response: secretReply,
  },
  {
    operationId: 'putVaultSecret', method: 'PUT', path: '/vault/secrets/{name}', params: { name: param.secretName }, fn: 'management', auth: 'regular',
    tag: 'Vault', summary: 'Create or replace a secret bound to exact hostnames', body: putSecretBody, response: secretReply,
  },
  {
    operationId: 'deleteVaultSecret', method: 'DELETE', path: '/vault/secrets/{name}', params: { name: param.secretName }, fn: 'management', auth: 'regular',
    tag: 'Vault', summary: 'Delete a secret (204)',
  },
  {
    operationId: 'listInternVaultSecrets', method: 'GET', path: '/vault/interns/{internId}/secrets', params: { internId: param.internId }, fn: 'management', auth: 'regular',
    tag: 'Vault', summary: 'Secrets of an intern of the key\'s workspace', query: pageQuery, response: secretListReply,
  },
  {
    operationId: 'getInternVaultSecret', method: 'GET', path: '/vault/interns/{internId}/secrets/{name}', params: { internId: param.internId, name: param.secretName }, fn: 'management', auth: 'regular',
    tag: 'Vault', summary: 'Metadata of one intern secret', response: secretReply,
  },
  {
    operationId: 'putInternVaultSecret', method: 'PUT', path: '/vault/interns/{internId}/secrets/{name}', params: { internId: param.internId, name: param.secretName }, fn: 'management', auth: 'regular',
    tag: 'Vault', summary: 'Create or replace an intern secret', body: putSecretBody, response: secretReply,
  },
  {
    operationId: 'deleteInternVaultSecret', method: 'DELETE', path: '/vault/interns/{internId}/secrets/{name}', params: { internId: param.internId, name: param.secretName }, fn: 'management', auth: 'regular',
    tag: 'Vault', summary: 'Delete an intern secret (204)',
  },
  {
    operationId: 'copyVaultSecretsToIntern', method: 'POST', path: '/vault/interns/{internId}/secrets/copy', params: { internId: param.internId }, fn: 'management', auth: 'regular',
    tag: 'Vault', summary: 'Copy named workspace secrets into an intern\'s vault (all or nothing)', body: copySecretsBody, response: copySecretsReply,
  },
  {
    operationId: 'listInternEffectiveSecrets', method: 'GET', path: '/vault/interns/{internId}/effective-secrets', params: { internId: param.internId }, fn: 'management', auth: 'regular',
    tag: 'Vault', summary: 'The secrets an intern receives, one per name (intern wins over workspace)', query: pageQuery, response: effectiveSecretListReply,
  },
  {
    operationId: 'listInterns', method: 'GET', path: '/interns', fn: 'management', auth: 'regular',
    tag: 'Interns', summary: 'Interns of the key\'s workspace, newest first', query: listInternsQuery, response: internListReply,
  },
  {
    operationId: 'createIntern', method: 'POST', path: '/interns', fn: 'management', auth: 'regular',
    tag: 'Interns', summary: 'Create an intern (with its private vault)', body: createInternBody, response: internReply, successStatus: 201,
  },
  {
    operationId: 'getIntern', method: 'GET', path: '/interns/{internId}', params: { internId: param.internId }, fn: 'management', auth: 'regular',
    tag: 'Interns', summary: 'Get an intern', response: internReply,
  },
  {
    operationId: 'updateIntern', method: 'PATCH', path: '/interns/{internId}', params: { internId: param.internId }, fn: 'management', auth: 'regular',
    tag: 'Interns', summary: 'Update an intern', body: updateInternBody, response: internReply,
  },
  {
    operationId: 'deleteIntern', method: 'DELETE', path: '/interns/{internId}', params: { internId: param.internId }, fn: 'management', auth: 'regular',
    tag: 'Interns', summary: 'Delete an intern, its keys and its private vault (202)',
  },
  {
    operationId: 'provisionIntern', method: 'POST', path: '/interns/{internId}/provision', params: { internId: param.internId }, fn: 'management', auth: 'regular',
    tag: 'Interns', summary: 'Start or resume an intern (202)',
  },
  {
    operationId: 'suspendIntern', method: 'POST', path: '/interns/{internId}/suspend', params: { internId: param.internId }, fn: 'management', auth: 'regular',
    tag: 'Interns', summary: 'Suspend an intern',
  },
  {
    operationId: 'createInternKey', method: 'POST', path: '/interns/{internId}/keys', params: { internId: param.internId }, fn: 'management', auth: 'regular',
    tag: 'Interns', summary: 'Provision an API key confined to the intern; the reply carries the key text once', body: internKeyBody, successStatus: 201,
  },
  {
    operationId: 'listByok', method: 'GET', path: '/byok', fn: 'management', auth: 'management',
    tag: 'BYOK', summary: 'Provider credentials of the organization (metadata; keys are never returned)', query: listByokQuery, response: byokListReply,
  },
  {
    operationId: 'createByok', method: 'POST', path: '/byok', fn: 'management', auth: 'management',
    tag: 'BYOK', summary: 'Add a provider credential, stored under KMS envelope encryption', body: createByokBody, response: byokReply, successStatus: 201,
  },
  {
    operationId: 'getByok', method: 'GET', path: '/byok/{id}', params: { id: param.byokId }, fn: 'management', auth: 'management',
    tag: 'BYOK', summary: 'One provider credential', response: byokReply,
  },
  {
    operationId: 'updateByok', method: 'PATCH', path: '/byok/{id}', params: { id: param.byokId }, fn: 'management', auth: 'management',
    tag: 'BYOK', summary: 'Update a provider credential (a new key rotates it in place)', body: updateByokBody, response: byokReply,
  },
  {
    operationId: 'deleteByok', method: 'DELETE', path: '/byok/{id}', params: { id: param.byokId }, fn: 'management', auth: 'management',
    tag: 'BYOK', summary: 'Delete a provider credential and its key material', response: z.object({ deleted: z.literal(true) }),
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
