// The aggregator Lambda's handler: a stream record it cannot turn into a page fails the invocation (the
// event source mapping then bisects down to that record and, after its retries, reports it to the queue).
import { expect, it } from '@jest/globals';
import type { DynamoDBRecord } from 'aws-lambda';
import { handleStreamEvent } from '../../lambdas/handlers/aggregator.js';
import type { GatewayDeps } from '../../lambdas/app/deps.js';

const deps = {} as GatewayDeps;

it.each<[string, DynamoDBRecord]>([
  ['no new image (a KEYS_ONLY stream)', { eventID: 'e1', eventName: 'INSERT', dynamodb: { SequenceNumber: '1', Keys: { pk: { S: 'GENS#1' }, sk: { S: 'P#1' } } } }],
  ['no sequence number', { eventID: 'e2', eventName: 'INSERT', dynamodb: { NewImage: { pk: { S: 'GENS#1' }, sk: { S: 'P#1' } } } }],
])('fails the invocation on a record with %s, naming it', async (_case, record) => {
  await expect(handleStreamEvent({ Records: [record] }, deps)).rejects.toThrow(`stream record ${record.eventID} has no sequence number or new image`);
});
