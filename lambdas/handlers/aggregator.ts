// Meter aggregator Lambda (DynamoDB stream event source mapping, filtered to new pages: billing/page-stream.ts).
// Reports the first page not applied as a batch item failure, so the mapping retries from there.
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { applyPages, type StreamedPage } from '../app/aggregator.js';
import { defaultDeps, type GatewayDeps } from '../app/deps.js';

export async function handleStreamEvent(event: DynamoDBStreamEvent, deps: GatewayDeps): Promise<DynamoDBBatchResponse> {
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

export const handler = async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => handleStreamEvent(event, await defaultDeps());
