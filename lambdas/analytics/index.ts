// The analytics feature as other folders see it: the activity and analytics routes.
export { analyticsRoutes, type AnalyticsOperations } from './routes.js';
export { createAnalyticsOperations, type AnalyticsPorts } from './operations.js';
