// Routes about the gateway itself: liveness and the OpenAPI document.
import type { ManagementOperations } from './route-table.js';
import { routes } from './route-table.js';
import { buildOpenApiDocument } from './openapi.js';

let openApiDocument: Record<string, unknown> | undefined;

export const systemOperations: Pick<ManagementOperations, 'health' | 'getOpenApiDocument'> = {
  async health() {
    return { body: { status: 'ok' } };
  },
  async getOpenApiDocument() {
    openApiDocument ??= buildOpenApiDocument(routes);
    return { headers: { 'cache-control': 'public, max-age=300' }, body: openApiDocument };
  },
};
