// Meter aggregator Lambda (DynamoDB stream event source mapping, filtered to new pages: billing/page-stream.ts),
// over its own few ports (app/aggregator-deps.ts): no engine, no provider secret.
// Reports the first page not applied as a batch item failure, so the mapping retries from there.
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { applyPages, type StreamedPage } from '../app/aggregator.js';
import { defaultAggregatorDeps, type AggregatorDeps } from '../app/aggregator-deps.js';

export async function handleStreamEvent(event: DynamoDBStreamEvent, deps: AggregatorDeps): Promise<DynamoDBBatchResponse> {
  const pages = event.Records.map((record): StreamedPage => {
    const sequenceNumber = record.dynamodb?.SequenceNumber;
    const image = record.dynamodb?.NewImage;
    // Only a misconfigured stream (no NEW_IMAGE) gets here: fail, and the mapping bisects down to this record.
    if (!sequenceNumber || !image) throw new Error(`stream record ${record.eventID ?? '(no id)'} has no sequence number or new image`);
    return { sequenceNumber, item: unmarshall(image as Record<string, AttributeValue>) };
  });
  const { failedSequenceNumber } = await applyPages(deps, pages);
  return { batchItemFailures: failedSequenceNumber ? [{ itemIdentifier: failedSequenceNumber }] : [] };
}

export const handler = async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => handleStreamEvent(event, defaultAggregatorDeps());
