// The sending side: once a generation's record is stored, one queue message per destination that takes it
// (its workspace's, enabled, its keys, filter rules and sample), sent in batches of up to ten a few
// milliseconds after the reply, never before it. An organization without destinations costs a cached
// lookup per generation and nothing else.
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from '../platform/logger.js';
import { delivered, messageBody, wants, type GenerationFacts } from './event.js';
import type { Destination } from './types.js';

/** Where delivery messages go (SQS on AWS, the local stand-in under npm start). */
export interface DeliveryQueue {
  /** Sends up to ten message bodies (at most BATCH_BYTES together) durably; the indexes of those it could not. Throws when none went. */
  send(bodies: readonly string[]): Promise<readonly number[]>;
}

export interface OutboxDeps {
  destinations: { destinationsFor(orgId: string): Destination[] | Promise<Destination[]> };
  queue: DeliveryQueue;
  log: Logger;
  /** How long a message waits for others to share its batch, in a process whose records share pages (`shared`). */
  flushDelayMs?: number;
  /** Waits between reads of the destinations that failed (default: a timer). */
  sleep?: (ms: number) => Promise<void>;
}

/** Reads of an organization's destinations before a generation is given up on (the store throttled): 100 ms, then 400 ms apart. */
const READ_ATTEMPTS = 3;
const READ_BACKOFF_MS = 100;

/** Messages per SendMessageBatch, and their bytes together (SQS's limit on older queues; 1 MiB on newer ones). */
const BATCH = 10;
const BATCH_BYTES = 256 * 1024;
const DEFAULT_FLUSH_DELAY_MS = 5;

interface Pending {
  body: string;
  generationId: string;
  destinationId: string;
  done: () => void;
}

export class ObservabilityOutbox {
  private pending: Pending[] = [];
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  /**
   * A long-lived process serving many requests at once (npm start, a batch runner): messages wait a few
   * milliseconds to share a SendMessageBatch. Otherwise (a Lambda instance, one request at a time) they go
   * at once, since the invocation waits for them.
   */
  shared = false;

  constructor(private readonly deps: OutboxDeps) {}

  /**
   * Whether a generation of the workspace may go to a destination: false only when its organization's
   * destinations are cached and none of the workspace's is enabled. A caller that learns it early need not
   * keep the generation's messages and output until its record is stored.
   */
  mayObserve(orgId: string, workspaceId: string): boolean {
    const list = this.deps.destinations.destinationsFor(orgId);
    if (Array.isArray(list)) return list.some((destination) => destination.enabled && destination.workspace_id === workspaceId);
    // Not cached: the read started here may fail, and observe() reports that (and reads again). Left
    // unhandled here, its rejection would be an unhandled one: fatal to a Lambda runtime.
    list.catch(() => undefined);
    return true;
  }

  /**
   * Queues the generation for each destination that takes it; resolves once its messages are sent (or
   * their failure logged), undefined when there is nothing to send. `facts` is called only then.
   */
  observe(orgId: string, workspaceId: string, facts: () => GenerationFacts): Promise<void> | undefined {
    const list = this.deps.destinations.destinationsFor(orgId);
    if (Array.isArray(list)) return this.enqueue(orgId, workspaceId, list, facts);
    return this.read(orgId, list).then((loaded) => this.enqueue(orgId, workspaceId, loaded, facts), (err: unknown) => {
      this.deps.log.error('observability destinations not read: generation not delivered', { org_id: orgId, error: String(err) });
    });
  }

  /** The destinations, read again a few times when a read fails. */
  private async read(orgId: string, first: Promise<Destination[]>): Promise<Destination[]> {
    const sleep = this.deps.sleep ?? delay;
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await (attempt === 1 ? first : this.deps.destinations.destinationsFor(orgId));
      } catch (err) {
        if (attempt >= READ_ATTEMPTS) throw err;
        await sleep(READ_BACKOFF_MS * 4 ** (attempt - 1));
      }
    }
  }

  private enqueue(orgId: string, workspaceId: string, list: Destination[], facts: () => GenerationFacts): Promise<void> | undefined {
    let taken: GenerationFacts | undefined;
    const sent: Array<Promise<void>> = [];
    for (const destination of list) {
      if (!destination.enabled || destination.workspace_id !== workspaceId) continue;
      taken ??= facts();
      if (!wants(destination, taken)) continue;
      const body = messageBody({ v: 1, destination_id: destination.id, org_id: orgId, generation: delivered(destination, taken) });
      sent.push(new Promise<void>((done) => {
        this.pending.push({ body, generationId: taken!.record.id, destinationId: destination.id, done });
        this.pendingBytes += Buffer.byteLength(body);
      }));
    }
    if (sent.length === 0) return undefined;
    if (this.pending.length >= BATCH || this.pendingBytes >= BATCH_BYTES) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.shared ? this.deps.flushDelayMs ?? DEFAULT_FLUSH_DELAY_MS : 0);
    return Promise.all(sent).then(() => undefined);
  }

  /** Sends everything queued now (a shutting-down process; the timer). */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    while (this.pending.length > 0) {
      // As many as fit one SendMessageBatch: ten, and their bytes within the batch limit (one at least).
      let count = 0;
      let bytes = 0;
      while (count < this.pending.length && count < BATCH) {
        const size = Buffer.byteLength(this.pending[count]!.body);
        if (count > 0 && bytes + size > BATCH_BYTES) break;
        bytes += size;
        count += 1;
      }
      const batch = this.pending.splice(0, count);
      this.pendingBytes -= bytes;
      const name = (entry: Pending) => `${entry.generationId}.${entry.destinationId}`;
      // The records themselves are stored and charged; only a delivery can be lost, and it is said so.
      const sending = this.deps.queue.send(batch.map((entry) => entry.body)).then((refused) => {
        if (refused.length) this.deps.log.error('observability deliveries not queued: SQS refused them', { deliveries: refused.map((index) => name(batch[index]!)) });
      }, (err: unknown) => {
        this.deps.log.error('observability deliveries not queued', { error: String(err), deliveries: batch.map(name) });
      }).finally(() => {
        for (const entry of batch) entry.done();
        this.inFlight.delete(sending);
      });
      this.inFlight.add(sending);
    }
    return Promise.all([...this.inFlight]).then(() => undefined);
  }
}
