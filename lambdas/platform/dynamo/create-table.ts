// Creates the table from TABLE_SCHEMA where no CloudFormation does it: the local runtime and integration tests.
import {
  CreateTableCommand, DescribeTableCommand, ResourceInUseException, UpdateTableCommand, UpdateTimeToLiveCommand,
  type DynamoDBClient, type TableDescription,
} from '@aws-sdk/client-dynamodb';
import { TABLE_SCHEMA } from './table-schema.js';

const STREAM = { StreamEnabled: true, StreamViewType: TABLE_SCHEMA.streamViewType };

export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<void> {
  let existing: TableDescription | undefined;
  try {
    existing = (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
  } catch (err) {
    if ((err as Error).name !== 'ResourceNotFoundException') throw err;
  }
  if (existing) {
    await ensureStream(client, tableName, existing);
    return;
  }
  const attributes = new Set<string>([TABLE_SCHEMA.partitionKey, TABLE_SCHEMA.sortKey]);
  for (const index of TABLE_SCHEMA.globalIndexes) {
    attributes.add(index.partitionKey);
    attributes.add(index.sortKey);
  }
  try {
    await client.send(new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [...attributes].map((name) => ({ AttributeName: name, AttributeType: 'S' })),
      KeySchema: [
        { AttributeName: TABLE_SCHEMA.partitionKey, KeyType: 'HASH' },
        { AttributeName: TABLE_SCHEMA.sortKey, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: TABLE_SCHEMA.globalIndexes.map((index) => ({
        IndexName: index.indexName,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      })),
      StreamSpecification: STREAM,
    }));
    await client.send(new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { AttributeName: TABLE_SCHEMA.ttlAttribute, Enabled: true },
    }));
  } catch (err) {
    if (!(err instanceof ResourceInUseException)) throw err;
  }
}

/**
 * A table created before the meter aggregator (an older `.gateway-data`) has no stream: enable it. Its
 * stream then starts empty; items written before it are not replayed.
 */
async function ensureStream(client: DynamoDBClient, tableName: string, table: TableDescription): Promise<void> {
  const stream = table.StreamSpecification;
  if (stream?.StreamEnabled && stream.StreamViewType === TABLE_SCHEMA.streamViewType) return;
  if (stream?.StreamEnabled) {
    // Changing the view type replaces the stream; that is an operator's decision, not a start-up side effect.
    throw new Error(`table ${tableName} has a ${stream.StreamViewType} stream; the meter aggregator needs ${TABLE_SCHEMA.streamViewType}`);
  }
  await client.send(new UpdateTableCommand({ TableName: tableName, StreamSpecification: STREAM }));
}
