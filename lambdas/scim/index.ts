// The SCIM feature as other folders see it: its storage and routes.
export { ScimRepository } from './scim-repository.js';
export { scimRoutes, type ScimOperations } from './routes.js';
export { createScimOperations, type ScimPorts } from './operations.js';
