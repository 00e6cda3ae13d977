// One gateway process of several sharing a table (the multi-process tests start it with
// `node --import tsx test/support/gateway-worker.ts`): the real inference and management handlers behind
// the local HTTP server, as npm start serves them, over an existing table (TABLE_NAME, DYNAMODB_ENDPOINT)
// and the upstream at SIMULATOR_URL, with a lease owner of its own (GATEWAY_LEASE_OWNER, or a fresh random
// one). No stream feeder: the test runs the one aggregator. Prints `listening on <url>` once it serves; on
// SIGTERM stops accepting, lets in-flight requests end, gives its leases back, writes its last pages and
// exits 0. Warnings and errors of its logger go to stderr, the rest (info, metrics lines) nowhere.
import { installAwsLambdaShim } from '../../bin/local/awslambda-shim.js';
import { startLocalServer, type BufferedHandler, type StreamingHandler } from '../../bin/local/server.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
process.env.AWS_REGION ??= 'local';
if (!process.env.TABLE_NAME || !process.env.DYNAMODB_ENDPOINT) {
  console.error('gateway worker: TABLE_NAME and DYNAMODB_ENDPOINT must name an existing table');
  process.exit(2);
}

// The handlers build their clients (and the streaming wrapper) at import: the environment is set first.
installAwsLambdaShim();
const { handler: inference } = await import('../../lambdas/handlers/inference.js');
const { handler: management } = await import('../../lambdas/handlers/management.js');
const { defaultDeps } = await import('../../lambdas/app/deps.js');
// The handlers' own deps: createDeps(readConfig(env)), built once for the process.
const deps = await defaultDeps();
deps.log.sink = (line) => {
  if (line.startsWith('{"level":"warn"') || line.startsWith('{"level":"error"')) process.stderr.write(`${line}\n`);
};

const server = await startLocalServer({
  port: 0,
  handlers: { inference: inference as unknown as StreamingHandler, management: management as unknown as BufferedHandler },
  log: (line) => process.stderr.write(`${line}\n`),
});

let stopping = false;
process.on('SIGTERM', () => {
  if (stopping) return;
  stopping = true;
  void (async () => {
    await server.close({ graceMs: 5000, settleMs: 3000, finishMs: 10_000, onGraceExpired: () => deps.engine.shutdown.trigger() });
    // Every request has ended: what its leases did not spend goes back to the meters, and the last records
    // are stored (the aggregator in the test applies them).
    await deps.engine.leases?.returnAll();
    await deps.engine.pages.flush();
    process.exit(0);
  })().catch((err: unknown) => {
    console.error(`gateway worker: shutdown failed: ${err instanceof Error ? err.stack : String(err)}`);
    process.exit(1);
  });
});

// A snapshot of the process's leases, for a test explaining where a key's budget is at some moment.
process.on('SIGUSR2', () => {
  const leases = (deps.engine.leases?.held() ?? []).map((lease) => ({ ...lease, amount: String(lease.amount), available: String(lease.available), spent: String(lease.spent) }));
  process.stdout.write(`leases ${JSON.stringify(leases)}\n`);
});

process.stdout.write(`listening on ${server.url} (lease owner ${deps.engine.leases?.owner ?? 'none'})\n`);
