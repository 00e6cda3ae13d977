// The delivering side, behind the delivery queue's event source mapping: each message is one generation for
// one destination. Delivered → deleted; failed → named in batchItemFailures and hidden for a backoff that
// doubles at each receive, until the queue's redrive policy moves it to the dead-letter queue. At least
// once: a receiver tells repeats by the Idempotency-Key header (the same on every attempt).
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { Logger } from '../platform/logger.js';
import { deliver, type DeliverPorts } from './deliver.js';
import type { DeliveryMessage } from './event.js';
import type { Destination } from './types.js';

import { DELIVERY_MAX_RECEIVES } from './queue-settings.js';

export { DELIVERY_MAX_RECEIVES };
/** The longest a failed delivery waits before its next attempt. */
const MAX_BACKOFF_SECONDS = 900;

export interface DeliveryWorkerDeps {
  destinations: { destinationsFor(orgId: string): Destination[] | Promise<Destination[]> };
  secrets: { release(destination: Destination, url: string): Promise<Record<string, unknown>> };
  /** Hides failed messages for their backoff; absent: they come back after the queue's visibility timeout. */
  queue?: { delay(messages: ReadonlyArray<{ receiptHandle: string; seconds: number }>): Promise<void> } | undefined;
  log: Logger;
  /** The first retry's wait; each later one doubles it. */
  retryBaseSeconds: number;
  maxReceives?: number;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

/** Seconds a message that failed at its `receiveCount`th receive waits before the next. */
export function backoffSeconds(receiveCount: number, baseSeconds: number): number {
  return Math.min(MAX_BACKOFF_SECONDS, Math.round(baseSeconds * 2 ** Math.max(0, receiveCount - 1)));
}

function parse(record: SQSRecord): DeliveryMessage | undefined {
  try {
    const message = JSON.parse(record.body) as Partial<DeliveryMessage> | null;
    if (!message || message.v !== 1 || typeof message.destination_id !== 'string' || typeof message.org_id !== 'string' || typeof message.generation?.generation_id !== 'string') return undefined;
    return message as DeliveryMessage;
  } catch {
    return undefined;
  }
}

export async function handleDeliveries(event: SQSEvent, deps: DeliveryWorkerDeps): Promise<SQSBatchResponse> {
  const maxReceives = deps.maxReceives ?? DELIVERY_MAX_RECEIVES;
  // One release of a destination's secrets per batch (each release is audited).
  const released = new Map<string, Promise<Record<string, unknown>>>();
  const ports: DeliverPorts = {
    secrets: (destination, url) => {
      let secrets = released.get(destination.id);
      if (!secrets) {
        secrets = deps.secrets.release(destination, url);
        released.set(destination.id, secrets);
      }
      return secrets;
    },
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
    ...(deps.timeoutMs ? { timeoutMs: deps.timeoutMs } : {}),
  };
  const failed: Array<{ record: SQSRecord; seconds: number }> = [];
  await Promise.all(event.Records.map(async (record) => {
    const message = parse(record);
    if (!message) {
      deps.log.error('observability delivery message not understood: dropped', { message_id: record.messageId });
      return;
    }
    const fields = { destination_id: message.destination_id, generation_id: message.generation.generation_id };
    let destination: Destination | undefined;
    try {
      destination = (await deps.destinations.destinationsFor(message.org_id)).find((entry) => entry.id === message.destination_id);
    } catch (err) {
      failed.push({ record, seconds: backoffSeconds(Number(record.attributes.ApproximateReceiveCount) || 1, deps.retryBaseSeconds) });
      deps.log.warn('observability destination not read: delivery retried', { ...fields, error: String(err) });
      return;
    }
    // Deleted or disabled since the generation: nothing is owed to it any more.
    if (!destination || !destination.enabled) return;
    const outcome = await deliver(destination, message, ports);
    if (outcome.ok) return;
    const receives = Number(record.attributes.ApproximateReceiveCount) || 1;
    const last = receives >= maxReceives;
    failed.push({ record, seconds: backoffSeconds(receives, deps.retryBaseSeconds) });
    deps.log.warn(last ? 'observability delivery failed for the last time: it goes to the dead-letter queue' : 'observability delivery failed: retried later', {
      ...fields, type: destination.type, status: outcome.status, error: outcome.error, attempt: receives, retryable: outcome.retryable,
    });
  }));
  if (failed.length > 0 && deps.queue) {
    try {
      await deps.queue.delay(failed.map(({ record, seconds }) => ({ receiptHandle: record.receiptHandle, seconds })));
    } catch (err) {
      deps.log.warn('observability retry backoff not set: retried after the visibility timeout', { error: String(err) });
    }
  }
  return { batchItemFailures: failed.map(({ record }) => ({ itemIdentifier: record.messageId })) };
}
