// A reply body piped into the response stream, as stream.pipeline does it but without its per-call
// AbortController: pipeline aborts one when it finishes, and an abort without a reason builds a
// DOMException with a captured stack, about 50 µs per streamed reply on a slow machine (bench --profile).
// The contract is pipeline's: resolves once the destination has finished; on an error of either side,
// or either closing early, both are destroyed and it rejects.
import type { Readable, Writable } from 'node:stream';

/** What stream.pipeline rejects with when either side closes before the end. */
const prematureClose = () => Object.assign(new Error('premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });

const ignore = () => undefined;

export function pump(source: Readable, destination: Writable): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const settle = (err?: Error) => {
      if (settled) return;
      settled = true;
      source.off('error', onError).off('close', onSourceClose);
      destination.off('error', onError).off('close', onDestinationClose).off('finish', onFinish);
      // A late error of either (after the reply finished, or of the other once destroyed) is not a crash.
      source.on('error', ignore);
      destination.on('error', ignore);
      if (err) {
        source.destroy();
        destination.destroy();
        reject(err);
      } else {
        resolve();
      }
    };
    const onError = (err: Error) => settle(err);
    const onSourceClose = () => {
      if (!source.readableEnded) settle(prematureClose());
    };
    const onDestinationClose = () => {
      if (!destination.writableFinished) settle(prematureClose());
    };
    const onFinish = () => settle();
    source.on('error', onError).on('close', onSourceClose);
    destination.on('error', onError).on('close', onDestinationClose).on('finish', onFinish);
    // Either already gone (its events were before these listeners): settled now, as pipeline does.
    const gone = (stream: Readable | Writable, over: boolean) => stream.errored ?? (stream.destroyed || over ? prematureClose() : undefined);
    const early = gone(source, false) ?? gone(destination, destination.writableEnded);
    if (early) return settle(early);
    source.pipe(destination);
  });
}
