// The interns feature as other folders see it: the intern routes (interns are stored by the vault's
// repository, beside their private vaults).
export { internRoutes, type InternOperations } from './routes.js';
export { createInternOperations, type InternPorts } from './operations.js';
