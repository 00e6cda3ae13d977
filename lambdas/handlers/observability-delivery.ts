// Observability delivery Lambda (SQS event source mapping with ReportBatchItemFailures): each message is
// one generation for one destination (observability/delivery-worker.ts). Failed deliveries come back after
// a doubling backoff, and to the dead-letter queue after the redrive policy's count.
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { defaultDeps, type GatewayDeps } from '../app/deps.js';
import { handleDeliveries } from '../observability/index.js';

export function handleObservabilityDeliveries(event: SQSEvent, deps: GatewayDeps): Promise<SQSBatchResponse> {
  const { observability, config, log } = deps;
  return handleDeliveries(event, {
    destinations: observability.source,
    secrets: {
      release: (destination, url) => (observability.secrets || destination.secret_fields.length === 0
        ? (observability.secrets?.release(destination, url) ?? Promise.resolve({}))
        : Promise.reject(new Error('no vault (GATEWAY_KMS_KEY_ID) to open the destination\'s secrets with'))),
    },
    queue: observability.queue,
    deadLetters: observability.deadLetters,
    allowPrivateHosts: config.observability.allowPrivateHosts,
    log,
    retryBaseSeconds: config.observability.retryBaseSeconds,
    timeoutMs: config.observability.timeoutMs,
  });
}

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => handleObservabilityDeliveries(event, await defaultDeps());
