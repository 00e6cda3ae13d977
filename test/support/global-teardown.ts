import type { DynamoDbLocal } from '../../bin/local/dynamodb-local.js';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as unknown as { __dynamodbLocal?: DynamoDbLocal }).__dynamodbLocal?.stop();
}
