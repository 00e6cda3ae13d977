// The byok feature as other folders see it: customers' own provider credentials (sealed in the vault), the
// rule for which endpoints they make usable, and the BYOK routes.
export type { ByokCredential } from './types.js';
export { ByokRepository } from './byok-repository.js';
export { ByokSource } from './byok-source.js';
export { endpointCredentials, usableEndpointFilter, type ByokContext } from './routing.js';
export { byokRoutes, type ByokOperations } from './routes.js';
export { createByokOperations, type ByokPorts } from './operations.js';
