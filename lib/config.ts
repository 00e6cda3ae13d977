// Deployment settings read from CDK context (`cdk synth -c memory=2048`, cdk.json) and the CLI's
// environment, validated once so a typo fails synthesis with a message naming the setting.
export type ArchitectureName = 'arm64' | 'x86_64';

export interface GatewayConfig {
  /** CloudFormation stack name: `ModelGatewayStack`, or `ModelGatewayStack-<stage>` when a stage is given. */
  stackName: string;
  stage: string | undefined;
  account: string | undefined;
  region: string;
  /** Memory of both functions, in MB. */
  memorySize: number;
  architecture: ArchitectureName;
}

export const DEFAULT_STACK_NAME = 'ModelGatewayStack';
export const DEFAULT_REGION = 'us-east-1';
export const DEFAULT_MEMORY_MB = 1024;
export const DEFAULT_ARCHITECTURE: ArchitectureName = 'arm64';

/** The context keys this app reads; anything else in `-c` is CDK's own business. */
export const CONTEXT_KEYS = ['region', 'memory', 'architecture', 'stage'] as const;
export type GatewayContext = Partial<Record<(typeof CONTEXT_KEYS)[number], unknown>>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const REGION_PATTERN = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;
const STAGE_PATTERN = /^[a-z][a-z0-9-]{0,19}$/;
const ACCOUNT_PATTERN = /^\d{12}$/;
const MIN_MEMORY_MB = 128;
const MAX_MEMORY_MB = 10_240;

/**
 * @param context reads one context value (`app.node.tryGetContext`); CLI values arrive as strings,
 *   cdk.json and tests may pass numbers.
 * @param env the process environment, for CDK_DEFAULT_ACCOUNT / CDK_DEFAULT_REGION set by the CDK CLI.
 */
export function readGatewayConfig(
  context: (key: string) => unknown,
  env: NodeJS.ProcessEnv = process.env,
): GatewayConfig {
  const stage = optionalString(context('stage'), 'stage');
  if (stage !== undefined && !STAGE_PATTERN.test(stage)) {
    throw new ConfigError(`Context "stage" must be 1-20 characters of lowercase letters, digits and "-", starting with a letter; got "${stage}"`);
  }

  const region = optionalString(context('region'), 'region') ?? (env.CDK_DEFAULT_REGION || undefined) ?? DEFAULT_REGION;
  if (!REGION_PATTERN.test(region)) {
    throw new ConfigError(`Region must look like "us-east-1" (context "region" or CDK_DEFAULT_REGION); got "${region}"`);
  }

  const account = env.CDK_DEFAULT_ACCOUNT || undefined;
  if (account !== undefined && !ACCOUNT_PATTERN.test(account)) {
    throw new ConfigError(`CDK_DEFAULT_ACCOUNT must be a 12-digit AWS account id; got "${account}"`);
  }

  return {
    stackName: stage ? `${DEFAULT_STACK_NAME}-${stage}` : DEFAULT_STACK_NAME,
    stage,
    account,
    region,
    memorySize: readMemory(context('memory')),
    architecture: readArchitecture(context('architecture')),
  };
}

function readMemory(raw: unknown): number {
  if (raw === undefined || raw === null || raw === '') return DEFAULT_MEMORY_MB;
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!Number.isInteger(value) || value < MIN_MEMORY_MB || value > MAX_MEMORY_MB) {
    throw new ConfigError(`Context "memory" must be a whole number of MB from ${MIN_MEMORY_MB} to ${MAX_MEMORY_MB}; got ${JSON.stringify(raw)}`);
  }
  return value;
}

function readArchitecture(raw: unknown): ArchitectureName {
  if (raw === undefined || raw === null || raw === '') return DEFAULT_ARCHITECTURE;
  if (raw === 'arm64' || raw === 'x86_64') return raw;
  throw new ConfigError(`Context "architecture" must be "arm64" or "x86_64"; got ${JSON.stringify(raw)}`);
}

function optionalString(raw: unknown, key: string): string | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (typeof raw !== 'string') throw new ConfigError(`Context "${key}" must be a string; got ${JSON.stringify(raw)}`);
  return raw.trim();
}
