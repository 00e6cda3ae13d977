// The private endpoint routes (management keys): SPEC's Private endpoints group.
import type { OperationsFor, RouteDef } from '../platform/http/route.js';
import { uuidParam } from '../platform/http/path-params.js';
import { createPrivateEndpointBody, deleteQuery, deleteReply, endpointReply, listReply, managedReply, pricingBody, updatePrivateEndpointBody, validateBody, validationReply } from './schemas.js';

const id = uuidParam('a private endpoint id');
const tag = 'Private endpoints';

export const privateEndpointRoutes = [
  {
    operationId: 'listPrivateEndpoints', method: 'GET', path: '/private-endpoints', fn: 'management', auth: 'management',
    tag, summary: 'The organization\'s private endpoints, drafts included, newest first', response: listReply,
  },
  {
    operationId: 'createPrivateEndpoint', method: 'POST', path: '/private-endpoints', fn: 'management', auth: 'management',
    tag, summary: 'Create a private endpoint as a draft (with `activate`: validated and activated too); its api_key is sealed in the vault for its base URL\'s host', body: createPrivateEndpointBody, response: managedReply, successStatus: 201,
  },
  {
    operationId: 'getPrivateEndpoint', method: 'GET', path: '/private-endpoints/{id}', params: { id }, fn: 'management', auth: 'management',
    tag, summary: 'One private endpoint, with its upstream, pricing and last validation', response: endpointReply,
  },
  {
    operationId: 'updatePrivateEndpoint', method: 'PATCH', path: '/private-endpoints/{id}', params: { id }, fn: 'management', auth: 'management',
    tag, summary: 'Update a draft\'s upstream (409 once activated); any change clears its validation', body: updatePrivateEndpointBody, response: endpointReply,
  },
  {
    operationId: 'deletePrivateEndpoint', method: 'DELETE', path: '/private-endpoints/{id}', params: { id }, fn: 'management', auth: 'management',
    tag, summary: 'Delete a private endpoint and its key (draft_only=true: 409 if it was ever activated)', query: deleteQuery, response: deleteReply,
  },
  {
    operationId: 'validatePrivateEndpoint', method: 'POST', path: '/private-endpoints/{id}/validate', params: { id }, fn: 'management', auth: 'management',
    tag, summary: 'Validate a draft with a live call through its adapter; failed checks are a 200 with passed false', body: validateBody, response: validationReply,
  },
  {
    operationId: 'activatePrivateEndpoint', method: 'POST', path: '/private-endpoints/{id}/activate', params: { id }, fn: 'management', auth: 'management',
    tag, summary: 'Make a validated draft routable (409: never validated, validation failed or stale, or not a draft)', response: managedReply,
  },
  {
    operationId: 'disablePrivateEndpoint', method: 'POST', path: '/private-endpoints/{id}/disable', params: { id }, fn: 'management', auth: 'management',
    tag, summary: 'Stop routing to an active endpoint without deleting it (409 unless active)', response: managedReply,
  },
  {
    operationId: 'enablePrivateEndpoint', method: 'POST', path: '/private-endpoints/{id}/enable', params: { id }, fn: 'management', auth: 'management',
    tag, summary: 'Route to a disabled endpoint again (409 unless disabled)', response: managedReply,
  },
  {
    operationId: 'setPrivateEndpointPricing', method: 'PUT', path: '/private-endpoints/{id}/pricing', params: { id }, fn: 'management', auth: 'management',
    tag, summary: 'Set the USD per-token prices its generations are recorded at (any state; applies to the next request)', body: pricingBody, response: endpointReply,
  },
] as const satisfies readonly RouteDef[];

export type PrivateEndpointOperations = OperationsFor<typeof privateEndpointRoutes>;
