// The real Lambda handlers behind the local server, as npm start serves them, for tests that need real HTTP.
// Set the environment the handlers read (TABLE_NAME, DYNAMODB_ENDPOINT, …) before calling it: they build
// their clients at import.
import { installAwsLambdaShim } from '../../bin/local/awslambda-shim.js';
import { startLocalServer, type BufferedHandler, type LocalServer, type StreamingHandler } from '../../bin/local/server.js';

/**
 * `close` also does what npm start does once its requests have ended: the handlers' deps give their budget
 * leases back and write their last records, while the test's table still exists (a lease left to the
 * pool's idle timer would be returned, and fail and log, after the test dropped the table).
 */
export async function startHandlerServer(): Promise<LocalServer> {
  installAwsLambdaShim();
  // One after the other: Jest's ESM loader fails on concurrent imports that share modules.
  const { handler: inference } = await import('../../lambdas/handlers/inference.js');
  const { handler: management } = await import('../../lambdas/handlers/management.js');
  const { defaultDeps } = await import('../../lambdas/app/deps.js');
  const server = await startLocalServer({
    port: 0,
    handlers: { inference: inference as unknown as StreamingHandler, management: management as unknown as BufferedHandler },
    log: () => undefined,
  });
  const close = server.close.bind(server);
  return Object.assign(server, {
    close: async (...args: Parameters<LocalServer['close']>) => {
      await close(...args);
      const deps = await defaultDeps();
      await deps.engine.leases?.returnAll();
      await deps.engine.pages.flush();
    },
  });
}
