// CDK app entry point (`npx cdk synth|deploy`, run by tsx as cdk.json says). Settings come from context:
// -c region=eu-west-1 -c memory=2048 -c architecture=x86_64 -c stage=dev
import { ConfigError } from '../lib/config.js';
import { createGatewayApp } from '../lib/app.js';

try {
  createGatewayApp();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  // A bad setting is the operator's typo, not a crash: one line, no stack trace.
  console.error(`model-gateway: ${error.message}`);
  process.exit(1);
}
