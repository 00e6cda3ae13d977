// The private endpoints feature as other folders see it: storage, what routing reads (active endpoints as
// catalog endpoints, their upstream keys), and the routes.
export type { PrivateEndpoint } from './types.js';
export { PrivateEndpointRepository } from './private-endpoint-repository.js';
export { PrivateEndpointSource, catalogEndpointOf } from './private-endpoint-source.js';
export { privateEndpointRoutes, type PrivateEndpointOperations } from './routes.js';
export { createPrivateEndpointOperations, type PrivateEndpointPorts } from './operations.js';
