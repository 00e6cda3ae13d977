// One DynamoDB Local (in memory) for the whole test run; each test file creates its own table in it.
import { startDynamoDbLocal } from '../../bin/local/dynamodb-local.js';

export default async function globalSetup(): Promise<void> {
  const db = await startDynamoDbLocal();
  process.env.TEST_DYNAMODB_ENDPOINT = db.endpoint;
  (globalThis as unknown as { __dynamodbLocal: typeof db }).__dynamodbLocal = db;
}
