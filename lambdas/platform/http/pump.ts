// A reply body piped into the response stream, as stream.pipeline does it but without its per-call
// AbortController: pipeline aborts one when it finishes, and an abort without a reason builds a
// DOMException with a captured stack, about 50 µs per streamed reply on a slow machine (bench --profile).
// The contract is pipeline's: resolves once the destination has finished; on an error of either side,
// or either closing early, both are destroyed and it rejects.
//
// Unlike pipe, the chunks that arrive in one turn of the event loop are handed over together at its end
// (process.nextTick), and a source that ended in that turn hands its last chunks to the destination's
// end(): an HTTP response then writes the last frame and the chunked terminator in one write, where pipe
// wrote them apart (the terminator in a second syscall, a second wake-up of the client, per streamed reply).
import type { Readable, Writable } from 'node:stream';

/** What stream.pipeline rejects with when either side closes before the end. */
export const prematureClose = () => Object.assign(new Error('premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });

const ignore = () => undefined;

/** Whether the source has been given its end (push(null)) but not emitted 'end' yet: no more data comes. */
function endGiven(source: Readable): boolean {
  return (source as unknown as { _readableState?: { ended?: boolean } })._readableState?.ended === true && source.readableLength === 0;
}

export function pump(source: Readable, destination: Writable): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    // One drain listener at a time: hand-overs while the destination is still full (its client reads
    // slowly, or is gone and not yet closed) wait for the same drain instead of adding one each.
    let awaitingDrain = false;
    const resume = () => {
      awaitingDrain = false;
      source.resume();
    };
    const awaitDrain = () => {
      if (awaitingDrain) return;
      awaitingDrain = true;
      destination.once('drain', resume);
    };
    const settle = (err?: Error) => {
      if (settled) return;
      settled = true;
      source.off('error', onError).off('close', onSourceClose);
      destination.off('error', onError).off('close', onDestinationClose).off('finish', onFinish).off('drain', resume);
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
    // What arrived this turn, handed over at its end. As pipe does, the source pauses while the destination
    // has its fill (what is held counting towards it) and resumes once it has drained.
    let held: unknown[] = [];
    let heldBytes = 0;
    let ending = false;
    const finish = () => {
      if (ending || settled) return;
      ending = true;
      const last = held;
      held = [];
      for (let i = 0; i < last.length - 1; i += 1) destination.write(last[i]);
      if (last.length > 0) destination.end(last[last.length - 1]);
      else destination.end();
    };
    const handOver = () => {
      if (ending || settled) return;
      if (endGiven(source)) return finish();
      const chunks = held;
      held = [];
      heldBytes = 0;
      let room = true;
      for (const chunk of chunks) room = destination.write(chunk);
      if (!room) awaitDrain();
      else if (!awaitingDrain && source.isPaused()) source.resume();
    };
    source.on('data', (chunk: { length?: number }) => {
      if (held.push(chunk) === 1) process.nextTick(handOver);
      heldBytes += typeof chunk.length === 'number' ? chunk.length : 1;
      if (heldBytes + destination.writableLength >= destination.writableHighWaterMark) source.pause();
    });
    source.once('end', finish);
    // As pipe: a source that had already ended ends the destination; one paused before is resumed, unless
    // the destination is full already.
    if (source.readableEnded) return finish();
    if (destination.writableNeedDrain) {
      source.pause();
      awaitDrain();
    } else if (source.isPaused()) {
      source.resume();
    }
  });
}
