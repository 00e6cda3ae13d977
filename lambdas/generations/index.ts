// The generations feature as other folders see it: generation records (written at settlement, read by the
// generation routes) and the generation routes.
export { GenerationRepository } from './generation-repository.js';
export type { GenerationRecord } from '../billing/generation-record.js';
export { generationRoutes, type GenerationOperations } from './routes.js';
export { createGenerationOperations, type GenerationPorts } from './operations.js';
