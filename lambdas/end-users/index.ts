// The end-users feature as other folders see it: storage, what inference reads (an organization's end users,
// cached), the hash that names an end user, and the routes.
export { endUserHash, type EndUser } from './types.js';
export { EndUserRepository, endUserFromItem } from './end-user-repository.js';
export { EndUserSource } from './end-user-source.js';
export { endUserRoutes, type EndUserOperations } from './routes.js';
export { createEndUserOperations, type EndUserPorts } from './operations.js';
