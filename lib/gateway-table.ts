// The gateway's one DynamoDB table, keyed as the shared TABLE_SCHEMA says (the local runtime creates
// the same keys in DynamoDB Local).
import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, Billing, StreamViewType, TableEncryptionV2, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { TABLE_SCHEMA } from '../lambdas/platform/dynamo/table-schema.js';

export class GatewayTable extends Construct {
  readonly table: TableV2;
  readonly indexNames: readonly string[];

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.indexNames = TABLE_SCHEMA.globalIndexes.map((index) => index.indexName);

    this.table = new TableV2(this, 'Table', {
      partitionKey: { name: TABLE_SCHEMA.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_SCHEMA.sortKey, type: AttributeType.STRING },
      globalSecondaryIndexes: TABLE_SCHEMA.globalIndexes.map((index) => ({
        indexName: index.indexName,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
      })),
      timeToLiveAttribute: TABLE_SCHEMA.ttlAttribute,
      // Feeds the meter aggregator (its event source mapping in gateway-stack.ts).
      dynamoStream: StreamViewType[TABLE_SCHEMA.streamViewType],
      billing: Billing.onDemand(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // The AWS-managed key (aws/dynamodb): encrypted with KMS, no key policy of ours to get wrong.
      encryption: TableEncryptionV2.awsManagedKey(),
      // Keys, balances and the ledger live here: a stack deletion or replacement must not take them along.
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }
}
