// The DynamoDB document client, created once per module and injectable.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { withoutSdkLogging } from '../aws/quiet-client.js';
import { retryTransactionConflicts } from './conflict-retry.js';
import { storeUserKeysAsMaps } from './user-keys.js';

export interface StoreConfig {
  tableName: string;
  endpoint?: string | undefined;
  region?: string | undefined;
}

export function storeConfigFromEnv(env: NodeJS.ProcessEnv = process.env): StoreConfig {
  const tableName = env.TABLE_NAME;
  if (!tableName) throw new Error('TABLE_NAME is not set');
  return { tableName, endpoint: env.DYNAMODB_ENDPOINT || undefined, region: env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined };
}

export function createDocumentClient(config: Pick<StoreConfig, 'endpoint' | 'region'>): DynamoDBDocumentClient {
  const local = Boolean(config.endpoint);
  const client = storeUserKeysAsMaps(retryTransactionConflicts(withoutSdkLogging(new DynamoDBClient({
    endpoint: config.endpoint,
    region: config.region ?? (local ? 'local' : undefined),
    // DynamoDB Local accepts any credentials; never reach for a real profile when pointed at it.
    ...(local ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
    maxAttempts: 3,
  }))));
  return DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true },
  });
}
