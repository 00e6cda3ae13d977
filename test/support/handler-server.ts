// The real Lambda handlers behind the local server, as npm start serves them, for tests that need real HTTP.
// Set the environment the handlers read (TABLE_NAME, DYNAMODB_ENDPOINT, …) before calling it: they build
// their clients at import.
import { installAwsLambdaShim } from '../../bin/local/awslambda-shim.js';
import { startLocalServer, type BufferedHandler, type LocalServer, type StreamingHandler } from '../../bin/local/server.js';

export async function startHandlerServer(): Promise<LocalServer> {
  installAwsLambdaShim();
  // One after the other: Jest's ESM loader fails on concurrent imports that share modules.
  const { handler: inference } = await import('../../lambdas/handlers/inference.js');
  const { handler: management } = await import('../../lambdas/handlers/management.js');
  return startLocalServer({
    port: 0,
    handlers: { inference: inference as unknown as StreamingHandler, management: management as unknown as BufferedHandler },
    log: () => undefined,
  });
}
