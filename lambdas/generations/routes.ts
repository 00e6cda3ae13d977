// The generation routes: one generation's stats and cost ledger, and feedback on it.
import type { OperationsFor, RouteDef } from '../platform/http/route.js';
import { feedbackBody, feedbackReply, generationQuery, generationReply } from './schemas.js';

export const generationRoutes = [
  {
    operationId: 'getGeneration', method: 'GET', path: '/generation', fn: 'management', auth: 'any',
    tag: 'Generations', summary: 'One generation\'s stats and cost ledger (upstream and infrastructure cost)', query: generationQuery, response: generationReply,
  },
  {
    operationId: 'submitGenerationFeedback', method: 'POST', path: '/generation/feedback', fn: 'management', auth: 'management',
    tag: 'Generations', summary: 'Feedback on a generation', body: feedbackBody, response: feedbackReply,
  },
] as const satisfies readonly RouteDef[];

export type GenerationOperations = OperationsFor<typeof generationRoutes>;
