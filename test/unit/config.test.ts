// The typed configuration read once per process: each variable's default and meaning, the vault's host
// rules and write switch as the vault operations get them (through their ports, not the environment).
import { describe, expect, it } from '@jest/globals';
import { readConfig } from '../../lambdas/app/config.js';
import { DEFAULT_ENGINE_CONFIG } from '../../lambdas/inference/engine.js';
import { isRegionalHost } from '../../lambdas/vault/scope.js';
import { createVaultOperations, hostRulesFromEnv, vaultSettingsFromEnv, type VaultSettings } from '../../lambdas/vault/index.js';
import { UnavailableError } from '../../lambdas/platform/errors.js';
import type { GatewayRequest } from '../../lambdas/platform/http/request.js';
import type { Principal } from '../../lambdas/platform/http/auth.js';
import type { Organization } from '../../lambdas/organizations/index.js';

const request = (host: string, headers: Record<string, string> = {}): GatewayRequest => ({
  method: 'PUT', path: '/api/v1/vault/secrets/x', headers, query: {}, body: undefined, requestId: 'r-1', sourceIp: '', host,
});

describe('readConfig', () => {
  it('has the documented defaults for an empty environment', () => {
    const config = readConfig({});
    expect(config.store).toBeUndefined();
    expect(config.kms).toBeUndefined();
    expect(config.engine).toEqual(DEFAULT_ENGINE_CONFIG);
    expect(config.keyCacheTtlMs).toBe(2000);
    expect(config.operatorKeyText).toBeUndefined();
    expect(config.vault).toEqual({ writesDisabled: false, hosts: { regionalHostnames: [], frontDoorTokenHash: undefined } });
    expect(config.catalog).toEqual({ simulatorUrl: undefined, providers: { models: [] }, catalogFile: undefined });
    expect(config.credentials.get('OPENAI_API_KEY')).toBeUndefined();
  });

  it('reads each variable into its module\'s settings', () => {
    const config = readConfig({
      TABLE_NAME: 'gateway', DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000', AWS_REGION: 'eu-west-1',
      GATEWAY_KMS_KEY_ID: 'key-1', KMS_ENDPOINT: 'http://127.0.0.1:9000',
      GATEWAY_KEY_CACHE_TTL_MS: '0', GATEWAY_ADMIN_KEY: 'sk-admin', GATEWAY_REQUEST_TIMEOUT_MS: '30000',
      GATEWAY_VAULT_WRITES: 'off', GATEWAY_REGIONAL_HOSTNAMES: ' EU.Example.com , ,us.example.com', GATEWAY_FRONT_DOOR_TOKEN: 'token',
      SIMULATOR_URL: 'http://127.0.0.1:7000', OPENAI_API_KEY: 'sk-openai',
    });
    expect(config.store).toEqual({ tableName: 'gateway', endpoint: 'http://127.0.0.1:8000', region: 'eu-west-1' });
    expect(config.kms).toEqual({ keyId: 'key-1', endpoint: 'http://127.0.0.1:9000', region: 'eu-west-1' });
    expect(config.keyCacheTtlMs).toBe(0);
    expect(config.operatorKeyText).toBe('sk-admin');
    expect(config.engine).toMatchObject({ requestTimeoutMs: 30_000, firstByteTimeoutMs: 30_000, region: 'eu-west-1' });
    expect(config.vault.writesDisabled).toBe(true);
    expect(config.vault.hosts.regionalHostnames).toEqual(['eu.example.com', 'us.example.com']);
    expect(config.vault.hosts.frontDoorTokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(config.catalog.simulatorUrl).toBe('http://127.0.0.1:7000');
    expect(config.catalog.providers.models.map((model) => model.id)).toContain('openai/gpt-4.1-mini');
    expect(config.credentials.get('OPENAI_API_KEY')).toBe('sk-openai');
  });

  it('keeps the exact meanings: only "off" disables vault writes, an empty admin key is none', () => {
    expect(vaultSettingsFromEnv({ GATEWAY_VAULT_WRITES: 'on' }).writesDisabled).toBe(false);
    expect(vaultSettingsFromEnv({ GATEWAY_VAULT_WRITES: 'OFF' }).writesDisabled).toBe(false);
    expect(readConfig({ GATEWAY_ADMIN_KEY: '' }).operatorKeyText).toBeUndefined();
    expect(hostRulesFromEnv({ GATEWAY_FRONT_DOOR_TOKEN: '' }).frontDoorTokenHash).toBeUndefined();
  });

  it('is read once: changing the environment afterwards changes nothing', () => {
    const env: NodeJS.ProcessEnv = { OPENAI_API_KEY: 'sk-first' };
    const config = readConfig(env);
    env.OPENAI_API_KEY = 'sk-second';
    env.GATEWAY_VAULT_WRITES = 'off';
    expect(config.credentials.get('OPENAI_API_KEY')).toBe('sk-first');
    expect(config.vault.writesDisabled).toBe(false);
  });

  it('refuses a malformed timeout', () => {
    expect(() => readConfig({ GATEWAY_REQUEST_TIMEOUT_MS: 'soon' })).toThrow(/GATEWAY_REQUEST_TIMEOUT_MS must be a positive integer/);
  });
});

describe('isRegionalHost over the configured host rules', () => {
  const rules = hostRulesFromEnv({ GATEWAY_REGIONAL_HOSTNAMES: 'eu.example.com', GATEWAY_FRONT_DOOR_TOKEN: 'token-from-the-deployment' });
  const regional = 'abc123.execute-api.eu-west-1.amazonaws.com';

  it('refuses configured hostnames (any port, any case) and serves others', () => {
    expect(isRegionalHost(request('EU.example.com:443'), rules)).toBe(true);
    expect(isRegionalHost(request('gateway.example.com'), rules)).toBe(false);
  });

  it('serves a raw AWS endpoint only through the front door, marked with the deployment\'s token', () => {
    expect(isRegionalHost(request(regional), rules)).toBe(true);
    expect(isRegionalHost(request(regional, { 'x-gateway-front-door': 'token-from-the-deployment' }), rules)).toBe(false);
    expect(isRegionalHost(request(regional, { 'x-gateway-front-door': 'made-up' }), rules)).toBe(true);
    expect(isRegionalHost(request(regional, { 'x-gateway-front-door': 'token-from-the-deployment' }), hostRulesFromEnv({}))).toBe(true);
  });
});

describe('the vault operations\' write switch', () => {
  const org = { id: 'org-1', intern_programme: true, vault_writes_disabled: false } as unknown as Organization;
  const principal = { key: { org_id: 'org-1', workspace_id: 'ws-1' } } as unknown as Principal;
  const operations = (settings: VaultSettings) => createVaultOperations({
    vault: undefined, organizations: { get: async () => org }, interns: { getIntern: async () => undefined }, settings,
  });
  const put = (settings: VaultSettings) => operations(settings).putVaultSecret({
    principal, request: request('gateway.example.com'), params: { name: 'x' }, query: {}, body: { hosts: ['a.example.com'], value: 'v' },
  } as never);

  it('answers 503 to writes when the settings say vault writes are off', async () => {
    const disabled = put(vaultSettingsFromEnv({ GATEWAY_VAULT_WRITES: 'off' }));
    await expect(disabled).rejects.toThrow(UnavailableError);
    await expect(put(vaultSettingsFromEnv({ GATEWAY_VAULT_WRITES: 'off' }))).rejects.toThrow(/Vault writes are disabled/);
    // With writes on, the same call gets as far as the vault (none configured here).
    await expect(put(vaultSettingsFromEnv({}))).rejects.toThrow(/The vault is not configured/);
  });
});
