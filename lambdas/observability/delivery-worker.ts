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
  /** The organization's destinations (cached); `invalidate` makes the next read a fresh one. */
  destinations: { destinationsFor(orgId: string): Destination[] | Promise<Destination[]>; invalidate(orgId: string): void };
  secrets: { release(destination: Destination, url: string): Promise<Record<string, unknown>> };
  /** Hides failed messages for their backoff; absent: they come back after the queue's visibility timeout. */
  queue?: { delay(messages: ReadonlyArray<{ receiptHandle: string; seconds: number }>): Promise<void> } | undefined;
  /**
   * Where a delivery that no retry can help goes at once (a 4xx, a refused address, secrets refused to the
   * host); absent: it is retried like any other until the redrive policy moves it.
   */
  deadLetters?: { send(bodies: readonly string[]): Promise<unknown> } | undefined;
  allowPrivateHosts: boolean;
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
    allowPrivateHosts: deps.allowPrivateHosts,
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
  const permanent: SQSRecord[] = [];
  await Promise.all(event.Records.map(async (record) => {
    const message = parse(record);
    if (!message) {
      deps.log.error('observability delivery message not understood: dropped', { message_id: record.messageId });
      return;
    }
    const fields = { destination_id: message.destination_id, generation_id: message.generation.generation_id };
    let destination: Destination | undefined;
    const receives = Number(record.attributes.ApproximateReceiveCount) || 1;
    try {
      const find = async () => (await deps.destinations.destinationsFor(message.org_id)).find((entry) => entry.id === message.destination_id);
      destination = await find();
      // Not there, or disabled, in a list cached before a change: read it again before dropping the delivery.
      if (!destination?.enabled) {
        deps.destinations.invalidate(message.org_id);
        destination = await find();
      }
    } catch (err) {
      failed.push({ record, seconds: backoffSeconds(receives, deps.retryBaseSeconds) });
      deps.log.warn('observability destination not read: delivery retried', { ...fields, error: String(err) });
      return;
    }
    // Deleted or disabled since the generation: nothing is owed to it any more.
    if (!destination || !destination.enabled) return;
    const outcome = await deliver(destination, message, ports);
    if (outcome.ok) return;
    const details = { ...fields, type: destination.type, status: outcome.status, error: outcome.error, attempt: receives };
    if (!outcome.retryable && deps.deadLetters) {
      permanent.push(record);
      deps.log.warn('observability delivery refused for good: it goes to the dead-letter queue now', details);
      return;
    }
    failed.push({ record, seconds: backoffSeconds(receives, deps.retryBaseSeconds) });
    deps.log.warn(receives >= maxReceives ? 'observability delivery failed for the last time: it goes to the dead-letter queue' : 'observability delivery failed: retried later', details);
  }));
  if (permanent.length > 0) {
    try {
      await deps.deadLetters!.send(permanent.map((record) => record.body));
    } catch (err) {
      // Not moved: retried as any failure, and moved by the redrive policy in the end.
      deps.log.warn('observability deliveries not moved to the dead-letter queue: retried', { error: String(err) });
      for (const record of permanent) failed.push({ record, seconds: backoffSeconds(Number(record.attributes.ApproximateReceiveCount) || 1, deps.retryBaseSeconds) });
    }
  }
  if (failed.length > 0 && deps.queue) {
    try {
      await deps.queue.delay(failed.map(({ record, seconds }) => ({ receiptHandle: record.receiptHandle, seconds })));
    } catch (err) {
      deps.log.warn('observability retry backoff not set: retried after the visibility timeout', { error: String(err) });
    }
  }
  return { batchItemFailures: failed.map(({ record }) => ({ itemIdentifier: record.messageId })) };
}
