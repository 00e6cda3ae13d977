// Builds the CDK app: reads and validates the context, registers cdk-nag, adds the gateway stack.
// bin/app.ts runs it for the CDK CLI; tests call it with their own context and output directory.
import { App, Tags, type AppProps } from 'aws-cdk-lib';
import { readGatewayConfig, type GatewayConfig, type GatewayContext } from './config.js';
import { GatewayStack } from './gateway-stack.js';
import { addNagChecks } from './nag.js';

export interface GatewayAppOptions {
  /** Context values (`region`, `memory`, `architecture`, `stage`, or any CDK context key). */
  context?: GatewayContext & Record<string, unknown>;
  /** Where the cloud assembly goes; the CLI's own directory when omitted. */
  outdir?: string;
  /** Environment for CDK_DEFAULT_ACCOUNT / CDK_DEFAULT_REGION; the process's when omitted. */
  env?: NodeJS.ProcessEnv;
  /** Run the cdk-nag AwsSolutions checks on synthesis (default true). */
  nag?: boolean;
}

export interface GatewayApp {
  app: App;
  stack: GatewayStack;
  config: GatewayConfig;
}

export function createGatewayApp(options: GatewayAppOptions = {}): GatewayApp {
  const appProps: AppProps = {
    ...(options.context ? { context: options.context } : {}),
    ...(options.outdir ? { outdir: options.outdir } : {}),
  };
  const app = new App(appProps);
  const config = readGatewayConfig((key) => app.node.tryGetContext(key), options.env ?? process.env);
  if (options.nag ?? true) addNagChecks(app);

  const stack = new GatewayStack(app, config.stackName, {
    // Explicit account/region: region-dependent constructs (KMS keys for TableV2, ARNs) need a concrete region.
    env: { account: config.account, region: config.region },
    description: 'Model gateway: OpenAI/OpenRouter-compatible inference, keys, credits and management API',
    memorySize: config.memorySize,
    architecture: config.architecture,
  });
  Tags.of(stack).add('app', 'model-gateway');
  if (config.stage) Tags.of(stack).add('stage', config.stage);

  return { app, stack, config };
}
