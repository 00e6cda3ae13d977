// The one table's key schema, shared by the CDK stack and the local runtime's CreateTable.
export const TABLE_SCHEMA = {
  partitionKey: 'pk',
  sortKey: 'sk',
  ttlAttribute: 'ttl',
  globalIndexes: [{ indexName: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' }],
  /** The stream the meter aggregator reads: new items as written (pages are written once, never changed). */
  streamViewType: 'NEW_IMAGE',
} as const;
