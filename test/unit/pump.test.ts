// The reply body's pipe into the response stream (platform/http/pump.ts): pipeline's contract without its
// per-call AbortController.
import { describe, expect, it } from '@jest/globals';
import { PassThrough, Readable, Writable } from 'node:stream';
import { pump } from '../../lambdas/platform/http/pump.js';

function sink() {
  const chunks: string[] = [];
  const stream = new Writable({ write(chunk, _encoding, done) { chunks.push(String(chunk)); done(); } });
  return { stream, chunks };
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
});
