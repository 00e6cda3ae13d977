// A timestamping copy of the simulator's streaming OpenAI Chat Completions endpoint, run inside the bench
// process: the same request parsing, reply and SSE frames as bin/simulator (it reuses that code), written
// every `chunkDelayMs`, with the moment each frame was handed to the socket recorded under the request's
// tag. The bench's client runs on the same clock, so "arrival − emission" per chunk is exact, directly and
// through the gateway.
import { writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { openAiChat } from '../bin/simulator/openai-chat.js';
import { splitPieces, textReply } from '../bin/simulator/common.js';
import { chatBody, type Outcome, type RequestSpec } from './load.js';
import { Samples } from './stats.js';

export interface TimedUpstream {
  url: string;
  /** Emission time (performance.now()) of every frame, by request tag; taken (and forgotten) by the client. */
  takeEmissions(tag: string): Float64Array | undefined;
  close(): Promise<void>;
}

/** The tag a chunk-timing request carries at the start of its user message. */
export function taggedText(tag: string, length: number): string {
  const head = `[${tag}] `;
  const filler = 'The quick brown fox jumps over the lazy dog while the gateway forwards every chunk. ';
  let text = head;
  while (text.length < length) text += filler;
  return text.slice(0, Math.max(length, head.length));
}

/**
 * Where each streamed content piece of an echo reply ends in the concatenated content: piece k is fully
 * received once that many characters of content have arrived. Piece k is frame k + 1 (frame 0 is the role).
 */
export function pieceEnds(text: string): number[] {
  const ends: number[] = [];
  let end = 0;
  for (const piece of splitPieces(text)) {
    end += piece.length;
    ends.push(end);
  }
  return ends;
}

const TAG = /^\[([^\]]+)\]/;

export function startTimedUpstream(options: { chunkDelayMs: number; host?: string }): Promise<TimedUpstream> {
  const emissions = new Map<string, Float64Array>();
  const sockets = new Set<Socket>();

  function stream(res: ServerResponse, frames: string[], times: Float64Array): void {
    const start = performance.now();
    let index = 0;
    let timer: NodeJS.Timeout | undefined;
    const tick = () => {
      if (res.destroyed) return;
      const frame = frames[index]!;
      times[index] = performance.now();
      index += 1;
      if (index === frames.length) {
        res.end(frame);
        return;
      }
      res.write(frame);
      // Scheduled against the start, so timer lateness does not accumulate over the stream.
      timer = setTimeout(tick, Math.max(0, start + index * options.chunkDelayMs - performance.now()));
    };
    res.once('close', () => clearTimeout(timer));
    tick();
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"invalid JSON"}}');
        return;
      }
      const parsed = openAiChat.parse(body, undefined, false);
      if (typeof parsed === 'string' || req.url !== '/v1/chat/completions') {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: typeof parsed === 'string' ? parsed : 'unknown path' } }));
        return;
      }
      const reply = textReply(parsed.lastUserText, parsed);
      if (!parsed.stream) {
        const text = JSON.stringify(openAiChat.render(parsed, reply));
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
        return;
      }
      const frames = openAiChat.frames(parsed, reply, false);
      const times = new Float64Array(frames.length).fill(Number.NaN);
      const tag = TAG.exec(parsed.lastUserText)?.[1];
      if (tag) emissions.set(tag, times);
      res.writeHead(200, { 'content-type': openAiChat.streamContentType, 'cache-control': 'no-cache' });
      stream(res, frames, times);
    });
  });
  server.keepAliveTimeout = 65_000;
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      resolve({
        url: `http://127.0.0.1:${port}`,
        takeEmissions(tag) {
          const times = emissions.get(tag);
          emissions.delete(tag);
          return times;
        },
        close: () => new Promise<void>((done) => {
          server.close(() => done());
          for (const socket of sockets) socket.destroy();
        }),
      });
    });
  });
}

/**
 * Client side of a chunk-timing request: parses the SSE body as it arrives (OpenAI chat chunks, directly
 * from the upstream or re-encoded by the gateway) and records when each content piece was complete.
 */
export class ChunkClock {
  readonly arrivals: Float64Array;
  private buffer = '';
  private received = 0;
  private next = 0;

  constructor(private readonly ends: readonly number[]) {
    this.arrivals = new Float64Array(ends.length).fill(Number.NaN);
  }

  onChunk(chunk: Buffer, at: number): void {
    this.buffer += chunk.toString('utf8');
    for (;;) {
      const boundary = this.buffer.indexOf('\n\n');
      if (boundary === -1) return;
      const event = this.buffer.slice(0, boundary);
      this.buffer = this.buffer.slice(boundary + 2);
      for (const line of event.split('\n')) {
        if (!line.startsWith('data:')) continue;
        const data = line.slice(5).trim();
        if (data === '[DONE]' || data === '') continue;
        let content: unknown;
        try {
          content = (JSON.parse(data) as { choices?: Array<{ delta?: { content?: unknown } }> }).choices?.[0]?.delta?.content;
        } catch {
          continue;
        }
        if (typeof content !== 'string' || content === '') continue;
        this.received += content.length;
        while (this.next < this.ends.length && this.ends[this.next]! <= this.received) this.arrivals[this.next++] = at;
      }
    }
  }
}

/**
 * A catalog file (GATEWAY_CATALOG_FILE) with one model, `bench/timed`, whose endpoint is the timed upstream
 * (OpenAI chat, upstream model `echo`): its path.
 */
export function writeTimedCatalog(timed: TimedUpstream, file: string): string {
  writeFileSync(file, JSON.stringify({
    models: [{
      id: 'bench/timed',
      name: 'Bench: timestamped simulator stream',
      endpoints: [{
        provider: 'bench-timed', adapter: 'openai-chat', base_url: `${timed.url}/v1`, upstream_model: 'echo',
        pricing: { prompt: '0.000001', completion: '0.000002' }, context_length: 131072,
      }],
    }],
  }));
  return file;
}

/**
 * The chunk phase's settings, the same for `npm run bench` and `bench:ab`'s BENCH_AB_CHUNKS: a chunk every
 * 20 ms, a 200-character text (about 30 chunks), late past 1 ms over the direct median.
 */
export const CHUNK_PHASE = { delayMs: 20, chars: 200, lateMs: 1 } as const;

/** Where chunk-timing requests go: the timed upstream itself (`model` 'echo') or a gateway in front of it. */
export interface ChunkTarget {
  url: URL;
  headers: Record<string, string>;
  model: string;
}

/** Chunk timing straight at an origin that speaks the timed upstream's chat (it, or a proxy in front of it). */
export function directChunkTarget(origin: string): ChunkTarget {
  return { url: new URL('/v1/chat/completions', origin), headers: { 'content-type': 'application/json' }, model: 'echo' };
}

/** How many chunk delays are more than `lateMs` over `baseline` (the direct median). */
export function countLate(delays: ArrayLike<number>, baseline: number, lateMs: number = CHUNK_PHASE.lateMs): number {
  let late = 0;
  for (let i = 0; i < delays.length; i += 1) if (delays[i]! - baseline > lateMs) late += 1;
  return late;
}

/**
 * One load's chunk timing: `spec` makes each request (a tagged text of `chars` characters, streamed), and
 * `onOutcome` takes each finished request's chunks: per content chunk, arrival at the client − the moment
 * the timed upstream wrote it (ms) into `delays` (`onPair` gets the two moments too), or a count of
 * `missing` ones (a chunk not seen at either end).
 */
export function chunkTiming(timed: TimedUpstream, target: ChunkTarget, chars: number, onPair?: (emission: number, arrival: number) => void) {
  const delays = new Samples();
  const clocks = new WeakMap<RequestSpec, { tag: string; clock: ChunkClock }>();
  let sequence = 0;
  const prefix = `${target.url.port}-${Math.random().toString(36).slice(2, 8)}`;
  const timing = {
    delays,
    missing: 0,
    spec: (): RequestSpec => {
      const tag = `${prefix}-${sequence++}`;
      const text = taggedText(tag, chars);
      const clock = new ChunkClock(pieceEnds(text));
      const request: RequestSpec = { url: target.url, headers: target.headers, body: chatBody(target.model, text, true), onChunk: (chunk, at) => clock.onChunk(chunk, at) };
      clocks.set(request, { tag, clock });
      return request;
    },
    onOutcome: (_outcome: Outcome, request: RequestSpec) => {
      const entry = clocks.get(request);
      if (!entry) return;
      const emitted = timed.takeEmissions(entry.tag);
      entry.clock.arrivals.forEach((arrival, piece) => {
        const emission = emitted?.[piece + 1];
        if (emission === undefined || Number.isNaN(emission) || Number.isNaN(arrival)) timing.missing += 1;
        else {
          delays.push(arrival - emission);
          onPair?.(emission, arrival);
        }
      });
    },
  };
  return timing;
}
