// The vault's deployment settings, read from the environment once per process (app/config.ts) and handed
// to the vault and intern operations through their ports.
import { hashKey } from '../keys/index.js';

/** Which hosts count as regional (rule 9: the vault is refused there). */
export interface HostRules {
  /** GATEWAY_REGIONAL_HOSTNAMES, lower-cased. */
  regionalHostnames: string[];
  /** SHA-256 of GATEWAY_FRONT_DOOR_TOKEN (the secret CloudFront sends), compared in constant time; undefined when unset. */
  frontDoorTokenHash: string | undefined;
}

export interface VaultSettings {
  /** GATEWAY_VAULT_WRITES=off: every vault write answers 503 (the deployment-wide switch). */
  writesDisabled: boolean;
  hosts: HostRules;
}

export function hostRulesFromEnv(env: NodeJS.ProcessEnv): HostRules {
  const token = env.GATEWAY_FRONT_DOOR_TOKEN;
  return {
    regionalHostnames: (env.GATEWAY_REGIONAL_HOSTNAMES ?? '').split(',').map((entry) => entry.trim().toLowerCase()).filter(Boolean),
    frontDoorTokenHash: token ? hashKey(token) : undefined,
  };
}

export function vaultSettingsFromEnv(env: NodeJS.ProcessEnv): VaultSettings {
  return { writesDisabled: env.GATEWAY_VAULT_WRITES === 'off', hosts: hostRulesFromEnv(env) };
}
