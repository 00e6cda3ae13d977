// Writes generation records in batches, off the reply's path. At most a few BatchWriteItem calls are in
// flight at once; records finishing meanwhile wait and join the next batch, so batches grow with load
// instead of the store being flooded with small writes. Each caller gets a promise that settles once its
// record is stored (or its loss is logged); the Lambda handler awaits those before the invocation ends.
import type { GenerationRecord, GenerationRepository } from '../store/generation-repository.js';

interface Pending {
  record: GenerationRecord;
  resolve: () => void;
}

const MAX_BATCH = 25;
/** Records queued or being written beyond which new requests wait (see `admit`). */
export const DEFAULT_MAX_BACKLOG = 2_000;

export class GenerationRecorder {
  private queue: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private inFlight = 0;
  private writing = 0;
  private waiters: Array<() => void> = [];

  /**
   * @param windowMs how long the first queued record waits for company; 0 writes on the next turn of the event loop.
   * @param maxInFlight concurrent BatchWriteItem calls.
   */
  constructor(
    private readonly repository: GenerationRepository,
    private readonly windowMs: number,
    private readonly log: (line: string) => void,
    private readonly maxInFlight = 2,
    private readonly maxBacklog = DEFAULT_MAX_BACKLOG,
  ) {}

  /** Records not yet stored: queued plus being written. */
  get backlog(): number {
    return this.queue.length + this.writing;
  }

  /**
   * Backpressure: resolves at once while the backlog is under its bound, otherwise once it has drained to
   * half of it. A store slower than the request rate (DynamoDB Local on disk takes ~480 records/s) then
   * slows admission instead of growing memory without limit.
   */
  admit(): Promise<void> {
    if (this.backlog < this.maxBacklog) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  record(record: GenerationRecord): Promise<void> {
    return new Promise((resolve) => {
      this.queue.push({ record, resolve });
      if (this.queue.length >= MAX_BATCH) this.pump();
      else if (!this.timer) {
        this.timer = this.windowMs > 0
          ? setTimeout(() => this.pump(), this.windowMs)
          : (setImmediate(() => this.pump()) as unknown as NodeJS.Timeout);
      }
    });
  }

  /** Starts batches while there are queued records and a free slot. */
  private pump(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      clearImmediate(this.timer as unknown as NodeJS.Immediate);
      this.timer = undefined;
    }
    while (this.queue.length > 0 && this.inFlight < this.maxInFlight) {
      const batch = this.queue.splice(0, MAX_BATCH);
      this.inFlight += 1;
      this.writing += batch.length;
      void this.write(batch).finally(() => {
        this.inFlight -= 1;
        this.writing -= batch.length;
        if (this.waiters.length && this.backlog <= this.maxBacklog / 2) {
          const waiters = this.waiters;
          this.waiters = [];
          for (const resolve of waiters) resolve();
        }
        if (this.queue.length > 0) this.pump();
      });
    }
  }

  private async write(batch: Pending[]): Promise<void> {
    try {
      await this.repository.putBatch(batch.map((entry) => entry.record));
    } catch (err) {
      // The replies have been produced; losing their records is logged loudly rather than failing callers.
      this.log(JSON.stringify({ level: 'error', message: 'generation record write failed', generation_ids: batch.map((entry) => entry.record.id), error: String(err) }));
    }
    for (const entry of batch) entry.resolve();
  }
}
