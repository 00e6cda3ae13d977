// The interns feature as other folders see it: interns (the type and their repository) and the intern
// routes (an intern's secrets are the vault's routes, which reach interns through a port of their own).
export { InternRepository, type Intern, type InternStatus } from './intern-repository.js';
export { internRoutes, type InternOperations } from './routes.js';
export { createInternOperations, type InternPorts } from './operations.js';
