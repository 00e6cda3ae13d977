// Routes about the gateway itself: liveness and the OpenAPI document.
import { routes, type SystemOperations } from './routes.js';
import { buildOpenApiDocument } from '../platform/http/openapi.js';

export type PartStatus = 'ok' | 'down' | 'restarting';

export interface PartHealth {
  status: PartStatus;
  /** Whether the gateway cannot serve without it (then /health answers 503 while it is not ok). */
  required: boolean;
  message?: string;
}

export type HealthCheck = () => Promise<Record<string, PartHealth>>;

let openApiDocument: Record<string, unknown> | undefined;
let partsCheck: HealthCheck | undefined;

/**
 * A long-lived process that runs the gateway's parts itself (the local runtime: DynamoDB Local, KMS, the
 * simulator) registers how to check them; /health then reports each part. On Lambda nothing is registered
 * and /health stays shallow: the function answers, and a probe costs no DynamoDB or KMS request.
 */
export function registerHealthCheck(check: HealthCheck | undefined): void {
  partsCheck = check;
}

export const systemOperations: SystemOperations = {
  async health() {
    if (!partsCheck) return { body: { status: 'ok' } };
    const parts = await partsCheck();
    const down = Object.values(parts).some((part) => part.required && part.status !== 'ok');
    const body = {
      status: down ? ('degraded' as const) : ('ok' as const),
      parts: Object.fromEntries(Object.entries(parts).map(([name, { required: _required, ...part }]) => [name, part])),
    };
    return down ? { status: 503, body } : { body };
  },
  async getOpenApiDocument() {
    openApiDocument ??= buildOpenApiDocument(routes);
    return { headers: { 'cache-control': 'public, max-age=300' }, body: openApiDocument };
  },
};
