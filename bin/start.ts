// `npm start`: the gateway on this machine, no AWS account needed.
//
// Stopping: SIGTERM or SIGINT (Ctrl-C) drains in-flight requests (GATEWAY_SHUTDOWN_GRACE_MS), then stops
// DynamoDB Local, the simulator and KMS and exits; a second signal exits at once. `npm start` execs this
// process, so a signal to npm reaches it; if npm itself dies without passing a signal on, this process
// notices its parent is gone and stops the same way. DynamoDB Local stops with this process however it
// ends (see bin/local/dynamodb-local.ts).
import { configFromEnv, startLocalRuntime } from './local/runtime.js';
import { logLine } from '../lambdas/platform/logger.js';

// Local development may run on Node 20; the SDK's notice that future releases need Node 22 is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** How often the process checks that npm, which started it, is still there. */
const PARENT_CHECK_MS = 1000;

// A stray rejected promise is a bug to log, not a reason to take every client's connection down with the process.
process.on('unhandledRejection', (reason) => {
  console.error(logLine('error', 'unhandled rejection', { error: reason instanceof Error ? reason.stack : String(reason) }));
});

const started = Date.now();
let config: ReturnType<typeof configFromEnv>;
try {
  config = configFromEnv();
} catch (err) {
  console.error(`Gateway failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}

// During start-up nothing is in flight: a signal exits at once (DynamoDB Local goes with the process).
/** A signal repeated within this long of the first is the same stop delivered twice (see stop below). */
const REPEATED_SIGNAL_MS = 1000;

let stop: (reason: string) => void = (reason) => {
  console.error(`${reason} during start-up: exiting`);
  process.exit(1);
};
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGHUP', () => stop('SIGHUP'));
if (process.env.npm_lifecycle_event) {
  const parent = process.ppid;
  const timer = setInterval(() => {
    try {
      process.kill(parent, 0);
    } catch {
      stop('npm, which started the gateway, has exited');
    }
  }, PARENT_CHECK_MS);
  timer.unref();
}

startLocalRuntime(config, {
  onFatal: (message) => {
    console.error(`\nThe gateway cannot serve without its store: ${message}\nExiting.`);
    process.exit(1);
  },
}).then((runtime) => {
  const { bootstrap } = runtime;
  const lines = [
    `Model Gateway listening on ${runtime.url}/api/v1 (health: ${runtime.url}/health)`,
    `  data directory: ${config.dataDir}`,
    `  DynamoDB Local: ${runtime.dynamodb.endpoint} (table ${config.tableName})`,
    `  upstream simulator: ${runtime.simulator.url} (models simulator/*)`,
    `  organization ${bootstrap.orgId}, workspace ${bootstrap.workspaceId}`,
  ];
  if (bootstrap.generatedKeyText) {
    const rule = '='.repeat(78);
    lines.push(
      '',
      rule,
      '  Management key (shown once, store it now):',
      '',
      `    ${bootstrap.generatedKeyText}`,
      '',
      `  Also saved, readable only by you, in ${runtime.managementKeyFile}`,
      '  (delete that file once the key is stored elsewhere).',
      rule,
      '',
    );
  } else if (config.adminKey) {
    lines.push(`  Management key: the value of GATEWAY_ADMIN_KEY${bootstrap.adminKeyCreated ? ' (registered now)' : ''}`);
  } else {
    lines.push('  Management key: printed at first start (and saved in management-key.txt in the data directory); create another with `npm run admin -- create-management-key --name ops`');
  }
  lines.push(
    `  logs: ${config.logFormat === 'json' ? 'JSON and metrics lines' : 'one line per request'}${config.logFile ? `, all JSON and metrics lines in ${config.logFile}` : ' (GATEWAY_LOG_FORMAT=json for JSON and metrics lines, GATEWAY_LOG_FILE=path for a file)'}`,
    `  ready in ${Date.now() - started} ms`,
  );
  console.log(lines.join('\n'));

  let stopping: { reason: string; at: number } | undefined;
  stop = (reason: string) => {
    if (stopping !== undefined) {
      // The same signal twice at once is one stop: a signal to the process group reaches this process and
      // npm, which passes it on (Ctrl-C, or `kill -TERM -<pgid>`). A second one later, or another signal, is
      // someone insisting.
      if (reason === stopping.reason && Date.now() - stopping.at < REPEATED_SIGNAL_MS) return;
      console.error(`${reason} again: exiting now`);
      process.exit(1);
    }
    stopping = { reason, at: Date.now() };
    console.error(`\n${reason}: stopping the gateway (in-flight requests get up to ${config.shutdownGraceMs} ms), then DynamoDB Local`);
    runtime.stop().then(() => process.exit(0), (err: unknown) => {
      console.error(err);
      process.exit(1);
    });
  };
}, (err: unknown) => {
  console.error(`Gateway failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
