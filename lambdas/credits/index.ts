// The credits feature as other folders see it: credit grants (their repository and constructor) and the
// credits routes (the balance itself is part of the organization).
export { CreditRepository, type CreditGrant } from './credit-repository.js';
export { newCreditGrant } from './credit-grant.js';
export { creditRoutes, type CreditOperations } from './routes.js';
export { createCreditOperations, type CreditPorts } from './operations.js';
