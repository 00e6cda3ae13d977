// A cheap AbortController for the request path. Node's AbortController builds its signal on its
// EventTarget: about 2 µs to create, more per listener added and removed, and, measured under load, its
// signals outlive the scavenge after their request and are promoted to the old generation. A request makes
// three (the client's, the generation's, each attempt's) and links them with listeners.
//
// `Abort` is the controller and its signal in one plain object. Its signal has what the gateway's code and
// the Node APIs it is handed to use of an AbortSignal (they check the shape, not the class: node:http,
// timers/promises, the AWS SDK's HTTP handler, fetch): `aborted`, `reason`, `throwIfAborted`, `onabort` and
// `addEventListener` / `removeEventListener` for 'abort'. Listeners run once, in the order added, with an
// 'abort' Event whose target is the signal, when `abort` is first called; `onabort` runs in the place of its
// first assignment, and a listener removed by an earlier one does not run, as with an EventTarget.
// AbortSignal.any, which checks the class, does not take it.

type Listener = ((this: AbortSignal, event: Event) => unknown) | { handleEvent(event: Event): unknown };

export class Abort {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Set<Listener> | undefined;
  private handler: ((this: AbortSignal, event: Event) => unknown) | null = null;

  /** This object, typed as the AbortSignal it stands in for. */
  get signal(): AbortSignal {
    return this as unknown as AbortSignal;
  }

  /** As an event handler attribute: it runs in the place of its first assignment among the listeners. */
  get onabort(): ((this: AbortSignal, event: Event) => unknown) | null {
    return this.handler;
  }

  set onabort(handler: ((this: AbortSignal, event: Event) => unknown) | null) {
    const had = this.handler !== null;
    this.handler = typeof handler === 'function' ? handler : null;
    // Made at the first assignment only: most signals never get one.
    this.runHandler ??= (event: Event) => {
      this.handler?.call(this.signal, event);
    };
    if (this.handler !== null && !had) this.addEventListener('abort', this.runHandler);
    else if (this.handler === null && had) this.removeEventListener('abort', this.runHandler);
  }

  private runHandler: ((event: Event) => void) | undefined;

  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
    const listeners = this.listeners;
    if (listeners === undefined) return;
    const event = new Event('abort');
    const signal = this.signal;
    Object.defineProperty(event, 'target', { value: signal });
    Object.defineProperty(event, 'currentTarget', { value: signal });
    // In the order added; one that an earlier one removed does not run (as with an EventTarget).
    for (const listener of [...listeners]) {
      if (listeners.has(listener)) call(signal, listener, event);
    }
    this.listeners = undefined;
  }

  /** Listeners waiting for the abort. */
  get listenerCount(): number {
    return this.listeners?.size ?? 0;
  }

  throwIfAborted(): void {
    if (this.aborted) throw this.reason;
  }

  addEventListener(type: string, listener: Listener | null, _options?: boolean | { once?: boolean }): void {
    // Like an aborted AbortSignal, an aborted Abort never fires again: a listener added now never runs.
    if (type !== 'abort' || listener === null || this.aborted) return;
    (this.listeners ??= new Set()).add(listener);
  }

  removeEventListener(type: string, listener: Listener | null): void {
    if (type === 'abort' && listener !== null) this.listeners?.delete(listener);
  }
}

function call(signal: AbortSignal, listener: Listener, event: Event): void {
  // As an EventTarget does, a listener that throws does not stop the others: its error is reported.
  try {
    if (typeof listener === 'function') listener.call(signal, event);
    else listener.handleEvent(event);
  } catch (err) {
    queueMicrotask(() => {
      throw err;
    });
  }
}
