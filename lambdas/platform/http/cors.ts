// The request headers browsers may send cross-origin: one list for the local server, the Function URL and
// the HTTP API (the CDK stack), so the three answer a preflight alike.
export const CORS_ALLOWED_HEADERS = ['authorization', 'x-api-key', 'anthropic-version', 'anthropic-beta', 'content-type', 'x-service-metadata', 'x-service-experimental-metadata', 'x-session-id'] as const;
