// The request headers browsers may send cross-origin: one list for the local server, the Function URL and
// the HTTP API (the CDK stack), so the three answer a preflight alike. Beyond the gateway's own headers it
// names what the client SDKs send from a browser (test/unit/cors.test.ts captures them): a preflight that
// leaves one out makes the browser refuse every request of that SDK.
export const CORS_ALLOWED_HEADERS = [
  'authorization', 'x-api-key', 'anthropic-version', 'anthropic-beta', 'content-type', 'x-service-metadata', 'x-service-experimental-metadata', 'x-session-id',
  // Anthropic's SDK and OpenAI's: the x-stainless-* family, and their optional idempotency key.
  'anthropic-dangerous-direct-browser-access',
  'x-stainless-arch', 'x-stainless-lang', 'x-stainless-os', 'x-stainless-package-version', 'x-stainless-retry-count',
  'x-stainless-runtime', 'x-stainless-runtime-version', 'x-stainless-timeout', 'x-stainless-async', 'x-stainless-helper',
  'x-stainless-helper-method', 'x-stainless-poll-helper', 'x-stainless-custom-poll-interval', 'idempotency-key',
  'openai-organization', 'openai-project', 'openai-beta',
  // OpenRouter's SDK and apps: attribution, and the SDK's own names of the metadata headers.
  'http-referer', 'x-title', 'x-openrouter-title', 'x-openrouter-categories', 'x-openrouter-metadata', 'x-openrouter-experimental-metadata', 'x-openrouter-callmodel',
] as const;
