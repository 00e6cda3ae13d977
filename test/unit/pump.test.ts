// The reply body's pipe into the response stream (platform/http/pump.ts): pipeline's contract without its
// per-call AbortController.
import { describe, expect, it } from '@jest/globals';
import { PassThrough, Readable, Writable } from 'node:stream';
import { pump } from '../../lambdas/platform/http/pump.js';

/** A destination that keeps what is written, and what each end() call was given (undefined: nothing). */
function sink() {
  const chunks: string[] = [];
  const ends: Array<string | undefined> = [];
  const stream = new Writable({ write(chunk, _encoding, done) { chunks.push(String(chunk)); done(); } });
  const end = stream.end.bind(stream);
  stream.end = ((chunk?: unknown) => {
    ends.push(chunk === undefined ? undefined : String(chunk));
    return chunk === undefined ? end() : end(chunk as string);
  }) as typeof stream.end;
  return { stream, chunks, ends };
}

describe('pump', () => {
  it('resolves once everything is written and the destination has finished', async () => {
    const { stream, chunks } = sink();
    await pump(Readable.from(['a', 'b', 'c']), stream);
    expect(chunks.join('')).toBe('abc');
    expect(stream.writableFinished).toBe(true);
  });

  it('rejects on a source error and destroys the destination', async () => {
    const source = new PassThrough();
    const { stream } = sink();
    const done = pump(source, stream);
    source.write('a');
    source.destroy(new Error('upstream failed'));
    await expect(done).rejects.toThrow('upstream failed');
    expect(stream.destroyed).toBe(true);
  });

  it('rejects when the destination closes early (the client went away) and destroys the source', async () => {
    const source = new PassThrough();
    const { stream } = sink();
    const done = pump(source, stream);
    source.write('a');
    stream.destroy();
    await expect(done).rejects.toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
    expect(source.destroyed).toBe(true);
  });

  it('rejects when the source is destroyed before its end, without an error', async () => {
    const source = new PassThrough();
    const { stream } = sink();
    const done = pump(source, stream);
    source.destroy();
    await expect(done).rejects.toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
    expect(stream.destroyed).toBe(true);
  });

  it('hands a source\'s last chunk to the destination\'s end() when the end was given in the same turn (one write with an HTTP response\'s terminator)', async () => {
    const source = new Readable({ read() { /* pushed below */ } });
    const { stream, chunks, ends } = sink();
    const done = pump(source, stream);
    source.push('first');
    await new Promise((resolve) => setImmediate(resolve));
    source.push('last');
    source.push(null);
    await done;
    expect(chunks).toEqual(['first', 'last']);
    expect(ends).toEqual(['last']);
  });

  it('ends the destination with nothing more when the source ends in a later turn', async () => {
    const source = new Readable({ read() { /* pushed below */ } });
    const { stream, chunks, ends } = sink();
    const done = pump(source, stream);
    source.push('only');
    await new Promise((resolve) => setImmediate(resolve));
    source.push(null);
    await done;
    expect(chunks).toEqual(['only']);
    expect(ends).toEqual([undefined]);
  });

  it('keeps the order of every chunk and waits for a slow destination (backpressure) without losing any', async () => {
    const pieces = Array.from({ length: 200 }, (_, i) => `piece-${i};`);
    const chunks: string[] = [];
    // The most the destination ever had waiting: a pump that ignored its backpressure would queue nearly all.
    let most = 0;
    const slow: Writable = new Writable({
      highWaterMark: 16,
      write(chunk, _encoding, done) {
        most = Math.max(most, slow.writableLength);
        setTimeout(() => { chunks.push(String(chunk)); done(); }, 0);
      },
    });
    const source = new PassThrough({ highWaterMark: 16 });
    const done = pump(source, slow);
    for (const piece of pieces) {
      if (!source.write(piece)) await new Promise((resolve) => source.once('drain', resolve));
    }
    source.end();
    await done;
    expect(chunks.join('')).toBe(pieces.join(''));
    expect(most).toBeLessThan(100);
    expect(slow.writableFinished).toBe(true);
  });

  it('waits for a full destination with one drain listener, however many hand-overs find it full (a client gone but not yet closed)', async () => {
    // Writes that never complete: the destination stays full, as a response whose client stopped reading.
    const stuck = new Writable({ highWaterMark: 4, write() { /* never done */ } });
    const source = new PassThrough();
    const done = pump(source, stuck).catch(() => undefined);
    // A source that goes on emitting while paused (as one that ignores pause does), a chunk a turn.
    for (let i = 0; i < 20; i += 1) {
      source.emit('data', `chunk-${i}`);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(stuck.listenerCount('drain')).toBe(1);
    stuck.destroy();
    await done;
    expect(stuck.listenerCount('drain')).toBe(0);
  });

  it('resumes a source paused before, and ends the destination for a source that had already ended (as pipe does)', async () => {
    const paused = new PassThrough();
    paused.pause();
    paused.end('abc');
    const first = sink();
    await pump(paused, first.stream);
    expect(first.chunks.join('')).toBe('abc');

    const over = new Readable({ autoDestroy: false, read() { /* ended below */ } });
    over.push(null);
    over.resume();
    await new Promise((resolve) => over.once('end', resolve));
    const second = sink();
    await pump(over, second.stream);
    expect(second.chunks).toEqual([]);
    expect(second.stream.writableFinished).toBe(true);
  });
});
