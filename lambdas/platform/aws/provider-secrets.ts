// Provider credentials on AWS: one Secrets Manager secret holding a JSON object of credential names to
// values ({"OPENAI_API_KEY": "sk-…", "ANTHROPIC_API_KEY": "…"}), read once per cold start. The names are
// the same environment variable names `npm start` reads, so one catalog serves both places.
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import * as z from 'zod';

const secretSchema = z.record(z.string().regex(/^[A-Z][A-Z0-9_]*$/, 'credential names look like OPENAI_API_KEY'), z.string());

let client: SecretsManagerClient | undefined;

export async function loadProviderSecrets(secretId: string, secrets: SecretsManagerClient = (client ??= new SecretsManagerClient({}))): Promise<Record<string, string>> {
  const { SecretString } = await secrets.send(new GetSecretValueCommand({ SecretId: secretId }));
  if (!SecretString) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(SecretString);
  } catch {
    // Never echo the secret text, not even in part.
    throw new Error(`provider secret ${secretId} is not a JSON object of credential names to values`);
  }
  const result = secretSchema.safeParse(parsed);
  if (!result.success) {
    throw new Error(`provider secret ${secretId} must be a JSON object of credential names to string values: ${result.error.issues[0]?.message ?? ''}`);
  }
  return result.data;
}

/**
 * The environment the gateway is configured from: the process environment, plus the provider secret's
 * credentials when GATEWAY_PROVIDER_SECRET_ARN names one (environment values win, for local overrides).
 */
export async function gatewayEnvironment(env: NodeJS.ProcessEnv = process.env, load: typeof loadProviderSecrets = loadProviderSecrets): Promise<NodeJS.ProcessEnv> {
  const secretId = env.GATEWAY_PROVIDER_SECRET_ARN;
  if (!secretId) return env;
  return { ...(await load(secretId)), ...env };
}
