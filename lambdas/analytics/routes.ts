// The report routes (management keys): daily activity and analytics queries over the hourly rollups.
import type { OperationsFor, RouteDef } from '../platform/http/route.js';
import { activityQuery, activityReply, analyticsMetaReply, analyticsQueryBody, analyticsQueryReply } from './schemas.js';

export const analyticsRoutes = [
  {
    operationId: 'getActivity', method: 'GET', path: '/activity', fn: 'management', auth: 'management',
    tag: 'Analytics', summary: 'Daily usage by model and provider over the last 30 UTC days (today included)', query: activityQuery, response: activityReply,
  },
  {
    operationId: 'getAnalyticsMeta', method: 'GET', path: '/analytics/meta', fn: 'management', auth: 'management',
    tag: 'Analytics', summary: 'Dimensions, metrics, granularities and filter operators of /analytics/query', response: analyticsMetaReply,
  },
  {
    operationId: 'queryAnalytics', method: 'POST', path: '/analytics/query', fn: 'management', auth: 'management',
    tag: 'Analytics', summary: 'Metrics grouped by dimensions and time buckets, from hourly rollups', body: analyticsQueryBody, response: analyticsQueryReply,
  },
] as const satisfies readonly RouteDef[];

export type AnalyticsOperations = OperationsFor<typeof analyticsRoutes>;
