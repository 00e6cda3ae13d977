// Graceful shutdown of a long-lived process (the local runtime): once triggered, in-flight inference
// requests stop waiting on their providers, report the shutdown to their clients (an error event on a
// stream, a 503 otherwise) and settle or release their holds as usual; new requests get a 503 before
// anything is reserved. Lambda never triggers it.
import { Abort } from './abort.js';
import { UnavailableError } from './errors.js';

/** The abort reason of the switch: tells a shutdown apart from a client that went away. */
export class ShuttingDown extends Error {
  constructor() {
    super('The gateway is shutting down');
    this.name = 'ShuttingDown';
  }
}

export function isShuttingDown(reason: unknown): boolean {
  return reason instanceof ShuttingDown;
}

/** The reply (or stream error event) of a request the shutdown ended or refused. */
export function shuttingDownError(): UnavailableError {
  return new UnavailableError('The gateway is shutting down; retry the request');
}

export class ShutdownSwitch {
  // Every request in flight listens to it (and stops listening when it ends): a set of listeners, not an
  // EventTarget that warns of a leak at 11 and costs more per listener.
  private readonly controller = new Abort();

  /** Aborted (with a ShuttingDown reason) once the process is shutting down. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Requests listening to the switch. */
  get listening(): number {
    return this.controller.listenerCount;
  }

  get triggered(): boolean {
    return this.controller.signal.aborted;
  }

  trigger(): void {
    if (!this.controller.signal.aborted) this.controller.abort(new ShuttingDown());
  }
}
