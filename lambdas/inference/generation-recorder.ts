// Writes generation records in batches, off the reply's path: records finished within one short window
// share a BatchWriteItem. Each caller gets a promise that settles once its record is stored (or its loss
// is logged); the Lambda handler awaits those before the invocation ends.
import type { GenerationRecord, GenerationRepository } from '../store/generation-repository.js';

interface Pending {
  record: GenerationRecord;
  resolve: () => void;
}

export class GenerationRecorder {
  private queue: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;

  /** @param windowMs how long the first queued record waits for company; 0 flushes on the next turn of the event loop. */
  constructor(
    private readonly repository: GenerationRepository,
    private readonly windowMs: number,
    private readonly log: (line: string) => void,
    private readonly maxBatch = 25,
  ) {}

  record(record: GenerationRecord): Promise<void> {
    return new Promise((resolve) => {
      this.queue.push({ record, resolve });
      if (this.queue.length >= this.maxBatch) {
        void this.flush();
      } else if (!this.timer) {
        this.timer = this.windowMs > 0 ? setTimeout(() => void this.flush(), this.windowMs) : setImmediate(() => void this.flush()) as unknown as NodeJS.Timeout;
      }
    });
  }

  /** Writes everything queued now. */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      clearImmediate(this.timer as unknown as NodeJS.Immediate);
      this.timer = undefined;
    }
    const batch = this.queue;
    this.queue = [];
    for (let start = 0; start < batch.length; start += this.maxBatch) {
      const slice = batch.slice(start, start + this.maxBatch);
      try {
        await this.repository.putBatch(slice.map((entry) => entry.record));
      } catch (err) {
        // The replies have been produced; losing their records is logged loudly rather than failing callers.
        this.log(JSON.stringify({ level: 'error', message: 'generation record write failed', generation_ids: slice.map((entry) => entry.record.id), error: String(err) }));
      }
      for (const entry of slice) entry.resolve();
    }
  }
}
