// The model catalog routes: the models (all, the caller's, one, the count, one model's endpoints) and the providers.
import type { OperationsFor, PathParam, RouteDef } from '../platform/http/route.js';
import {
  countModelsQuery, listModelsQuery, listModelsReply, modelCountReply, modelDataReply, modelEndpointsReply, modelReply, providersReply,
} from './schemas.js';

const author: PathParam = { pattern: /^[a-z0-9][a-z0-9._-]{0,99}$/, expected: 'a model author: lowercase letters, digits, ".", "_" and "-" (the part of the model id before "/")' };
const slug: PathParam = { pattern: /^[a-zA-Z0-9._:-]{1,200}$/, expected: 'a model slug: letters, digits, ".", "_", ":" and "-" (the part of the model id after "/")' };

export const catalogRoutes = [
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
    operationId: 'getModel', method: 'GET', path: '/models/{author}/{slug}', params: { author, slug }, fn: 'management', auth: 'optional',
    tag: 'Models', summary: 'One model, as an item of GET /models', response: modelReply,
  },
  {
    operationId: 'getModelData', method: 'GET', path: '/model/{author}/{slug}', params: { author, slug }, fn: 'management', auth: 'optional',
    tag: 'Models', summary: 'One model under data (the @openrouter/sdk models.get path)', response: modelDataReply,
  },
  {
    operationId: 'listModelEndpoints', method: 'GET', path: '/models/{author}/{slug}/endpoints', params: { author, slug }, fn: 'management', auth: 'optional',
    tag: 'Models', summary: 'The endpoints of one model: pricing, context length, supported parameters, uptime, latency and throughput', response: modelEndpointsReply,
  },
  {
    operationId: 'listEmbeddingsModels', method: 'GET', path: '/embeddings/models', fn: 'management', auth: 'optional',
    tag: 'Models', summary: 'The embeddings models (output_modalities include "embeddings"), as items of GET /models', query: listModelsQuery, response: listModelsReply,
  },
  {
    operationId: 'listProviders', method: 'GET', path: '/providers', fn: 'management', auth: 'optional',
    tag: 'Providers', summary: 'The providers behind the catalog\'s endpoints', response: providersReply,
  },
] as const satisfies readonly RouteDef[];

export type CatalogOperations = OperationsFor<typeof catalogRoutes>;
