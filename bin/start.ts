// `npm start`: the gateway on this machine, no AWS account needed. Ctrl-C or SIGTERM stops every child process.
import { configFromEnv, startLocalRuntime } from './local/runtime.js';

// Local development may run on Node 20; the SDK's notice that future releases need Node 22 is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

// A stray rejected promise is a bug to log, not a reason to take every client's connection down with the process.
process.on('unhandledRejection', (reason) => {
  console.error(JSON.stringify({ level: 'error', message: 'unhandled rejection', error: reason instanceof Error ? reason.stack : String(reason) }));
});

const started = Date.now();
const config = configFromEnv();

startLocalRuntime(config).then((runtime) => {
  const { bootstrap } = runtime;
  const lines = [
    `Model Gateway listening on ${runtime.url}/api/v1 (health: ${runtime.url}/health)`,
    `  data directory: ${config.dataDir}`,
    `  DynamoDB Local: ${runtime.dynamodb.endpoint} (table ${config.tableName})`,
    `  upstream simulator: ${runtime.simulator.url} (models simulator/*)`,
    `  organization ${bootstrap.orgId}, workspace ${bootstrap.workspaceId}`,
  ];
  if (bootstrap.generatedKeyText) {
    lines.push('', `  Management key (shown once, store it now): ${bootstrap.generatedKeyText}`, '');
  } else if (config.adminKey) {
    lines.push(`  Management key: the value of GATEWAY_ADMIN_KEY${bootstrap.adminKeyCreated ? ' (registered now)' : ''}`);
  } else {
    lines.push('  Management key: printed at first start; create another with `npm run admin -- create-management-key --name ops`');
  }
  lines.push(`  ready in ${Date.now() - started} ms`);
  console.log(lines.join('\n'));

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping the gateway and DynamoDB Local`);
    runtime.stop().then(() => process.exit(0), (err: unknown) => {
      console.error(err);
      process.exit(1);
    });
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // If this process dies any other way, do not leave Java behind.
  process.on('exit', () => runtime.dynamodb.process.kill('SIGKILL'));
}, (err: unknown) => {
  console.error(`Gateway failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
