// Graceful shutdown of a long-lived process (the local runtime): once triggered, in-flight inference
// requests stop waiting on their providers, report the shutdown to their clients (an error event on a
// stream, a 503 otherwise) and settle or release their holds as usual. Lambda never triggers it.
export class ShutdownSwitch {
  private readonly controller = new AbortController();

  /** Aborted once the process is shutting down. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get triggered(): boolean {
    return this.controller.signal.aborted;
  }

  trigger(): void {
    if (!this.controller.signal.aborted) this.controller.abort(new Error('The gateway is shutting down'));
  }
}
