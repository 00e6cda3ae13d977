// The credits feature as other folders see it: credit grants and the credits routes (the balance itself is
// part of the organizations aggregate).
export { newCreditGrant } from './credit-grant.js';
export { creditRoutes, type CreditOperations } from './routes.js';
export { createCreditOperations, type CreditPorts } from './operations.js';
