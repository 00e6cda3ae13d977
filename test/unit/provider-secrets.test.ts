// Provider credentials from Secrets Manager (the AWS side of "enabled by its credentials"), with aws-sdk-client-mock.
import { beforeEach, describe, expect, it } from '@jest/globals';
import { mockClient } from 'aws-sdk-client-mock';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { gatewayEnvironment, loadProviderSecrets } from '../../lambdas/platform/aws/provider-secrets.js';
import { loadCatalog } from '../../lambdas/catalog/catalog-config.js';

const client = new SecretsManagerClient({ region: 'us-east-1' });
const mock = mockClient(client);

beforeEach(() => {
  mock.reset();
});

describe('provider secrets', () => {
  it('reads a JSON object of credential names to values', async () => {
    mock.on(GetSecretValueCommand, { SecretId: 'arn:secret' }).resolves({ SecretString: '{"OPENAI_API_KEY":"sk-1","ANTHROPIC_API_KEY":"a-2"}' });
    expect(await loadProviderSecrets('arn:secret', client)).toEqual({ OPENAI_API_KEY: 'sk-1', ANTHROPIC_API_KEY: 'a-2' });
  });

  it('refuses other shapes without echoing the secret', async () => {
    mock.on(GetSecretValueCommand).resolvesOnce({ SecretString: 'sk-not-json' }).resolvesOnce({ SecretString: '{"openai": 5}' });
    const notJson = await loadProviderSecrets('s', client).catch((err: Error) => err);
    expect(notJson).toBeInstanceOf(Error);
    expect((notJson as Error).message).not.toContain('sk-not-json');
    await expect(loadProviderSecrets('s', client)).rejects.toThrow('JSON object of credential names');
  });

  it('enables providers whose credentials the secret holds; the environment wins', async () => {
    const env = await gatewayEnvironment({ GATEWAY_PROVIDER_SECRET_ARN: 'arn', OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', ANTHROPIC_API_KEY: 'from-env' },
      async () => ({ OPENAI_API_KEY: 'sk-secret', ANTHROPIC_API_KEY: 'from-secret' }));
    expect(env.OPENAI_API_KEY).toBe('sk-secret');
    expect(env.ANTHROPIC_API_KEY).toBe('from-env');
    const ids = loadCatalog(env).models.map((model) => model.id);
    expect(ids).toEqual(expect.arrayContaining(['openai/gpt-4o-mini', 'anthropic/claude-sonnet-4.5']));
    expect(loadCatalog({}).models).toEqual([]);
    expect(await gatewayEnvironment({ A: '1' }, async () => { throw new Error('must not be called'); })).toEqual({ A: '1' });
  });
});
