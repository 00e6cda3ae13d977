import { describe, expect, it, jest } from '@jest/globals';
import { setTimeout as delay } from 'node:timers/promises';
import { Abort } from '../../lambdas/platform/abort.js';

describe('Abort', () => {
  it('aborts once, with a DOMException AbortError by default, and says so', () => {
    const abort = new Abort();
    expect(abort.signal.aborted).toBe(false);
    expect(() => abort.signal.throwIfAborted()).not.toThrow();
    abort.abort();
    expect(abort.signal.aborted).toBe(true);
    expect(abort.signal.reason).toBeInstanceOf(DOMException);
    expect((abort.signal.reason as DOMException).name).toBe('AbortError');
    const first = abort.signal.reason;
    abort.abort(new Error('later'));
    expect(abort.signal.reason).toBe(first);
    expect(() => abort.signal.throwIfAborted()).toThrow(first as DOMException);
  });

  it('runs its listeners once each, in the order added, with an abort event and the signal as `this`', () => {
    const abort = new Abort();
    const calls: string[] = [];
    let seenThis: unknown;
    let seenType = '';
    abort.signal.onabort = () => calls.push('onabort');
    const first = function (this: unknown, event: Event) {
      seenThis = this;
      seenType = event.type;
      calls.push('first');
    };
    abort.signal.addEventListener('abort', first);
    abort.signal.addEventListener('abort', first); // the same listener twice: once, as with an EventTarget
    abort.signal.addEventListener('abort', { handleEvent: () => calls.push('object') });
    const removed = () => calls.push('removed');
    abort.signal.addEventListener('abort', removed);
    abort.signal.removeEventListener('abort', removed);
    abort.signal.addEventListener('other' as 'abort', () => calls.push('other'));
    expect(abort.listenerCount).toBe(3); // onabort, first, object
    abort.abort(new Error('why'));
    abort.abort(new Error('again'));
    expect(calls).toEqual(['onabort', 'first', 'object']);
    expect(seenThis).toBe(abort.signal);
    expect(seenType).toBe('abort');
    expect(abort.listenerCount).toBe(0);
  });

  it('dispatches as an EventTarget does: onabort in the place of its first assignment, a listener removed by an earlier one skipped, the signal as the target', () => {
    // The same listeners on an Abort and on Node's own AbortController: the same calls, in the same order.
    const dispatch = (controller: { signal: AbortSignal; abort(): void }) => {
      const calls: string[] = [];
      let target: unknown;
      const second = () => calls.push('second');
      controller.signal.addEventListener('abort', (event) => {
        target = event.target;
        calls.push('first');
        controller.signal.removeEventListener('abort', second);
      });
      controller.signal.addEventListener('abort', second);
      controller.signal.onabort = () => calls.push('onabort');
      controller.signal.addEventListener('abort', () => calls.push('last'));
      controller.signal.onabort = () => calls.push('onabort, replaced');
      controller.abort();
      return { calls, target };
    };
    const abort = new Abort();
    const ours = dispatch(abort);
    expect(ours.calls).toEqual(['first', 'onabort, replaced', 'last']);
    expect(ours.target).toBe(abort.signal);
    const node = new AbortController();
    const theirs = dispatch(node);
    expect(theirs.calls).toEqual(ours.calls);
    expect(theirs.target).toBe(node.signal);
  });

  it('drops onabort when it is set to null', () => {
    const abort = new Abort();
    const handler = jest.fn();
    abort.signal.onabort = handler;
    expect(abort.listenerCount).toBe(1);
    abort.signal.onabort = null;
    expect(abort.listenerCount).toBe(0);
    abort.abort();
    expect(handler).not.toHaveBeenCalled();
  });

  it('never runs a listener added after the abort', () => {
    const abort = new Abort();
    abort.abort();
    const listener = jest.fn();
    abort.signal.addEventListener('abort', listener);
    expect(listener).not.toHaveBeenCalled();
    expect(abort.listenerCount).toBe(0);
  });

  it('keeps calling the other listeners when one throws, and reports the error', async () => {
    const abort = new Abort();
    const after = jest.fn();
    abort.signal.addEventListener('abort', () => {
      throw new Error('listener failed');
    });
    abort.signal.addEventListener('abort', after);
    let report: (() => void) | undefined;
    const queued = jest.spyOn(globalThis, 'queueMicrotask').mockImplementation((callback) => {
      report = callback;
    });
    try {
      abort.abort();
    } finally {
      queued.mockRestore();
    }
    expect(after).toHaveBeenCalledTimes(1);
    // Reported as an EventTarget reports it: thrown on its own, where nothing catches it.
    expect(report).toThrow('listener failed');
  });

  it('stops Node APIs that take an AbortSignal: timers/promises and fetch', async () => {
    const timer = new Abort();
    const sleeping = delay(10_000, undefined, { signal: timer.signal });
    timer.abort();
    await expect(sleeping).rejects.toMatchObject({ name: 'AbortError' });
    expect(timer.listenerCount).toBe(0);

    const request = new Abort();
    request.abort(new Error('gone'));
    await expect(fetch('http://127.0.0.1:9/', { signal: request.signal })).rejects.toThrow('gone');
  });
});
