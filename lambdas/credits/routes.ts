// The credits routes (management keys): the organization's balance, and grants by the operator.
import type { OperationsFor, RouteDef } from '../platform/http/route.js';
import { addCreditsBody, addCreditsReply, creditsReply } from './schemas.js';

export const creditRoutes = [
  {
    operationId: 'getCredits', method: 'GET', path: '/credits', fn: 'management', auth: 'management',
    tag: 'Credits', summary: 'Credits added and used by the organization (USD)', response: creditsReply,
  },
  {
    operationId: 'addCredits', method: 'POST', path: '/credits', fn: 'management', auth: 'management',
    tag: 'Credits', summary: 'Add credits to an organization: management keys of the operator\'s (default) organization only', body: addCreditsBody, response: addCreditsReply,
  },
] as const satisfies readonly RouteDef[];

export type CreditOperations = OperationsFor<typeof creditRoutes>;
