// The upstream simulator: a plain node:http server that speaks the OpenAI Chat Completions, OpenAI
// Responses, Anthropic Messages and Google Gemini wire formats, with a handful of scripted models
// (echo, tool-call, error-429, error-500, timeout, cut-stream), OpenAI's and Gemini's embeddings APIs
// (the `embed` model, embeddings.ts), the providers' batch APIs (batches.ts) and Bedrock's Converse and batch
// inference jobs (bedrock.ts), and OpenAI's and ElevenLabs' text-to-speech APIs (the `tts-echo` model,
// streaming real MP3 or PCM audio, speech.ts and audio.ts). Used by `npm start`, the end-to-end
// tests and the benchmark, so the hot path stays lean: no logging, no per-request allocation beyond
// the body and the reply.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { jsonBody, textReply, toolReply, writeCorked, type ParsedRequest, type Reply, type WireFormat } from './common.js';
import { openAiChat } from './openai-chat.js';
import { openAiResponses } from './openai-responses.js';
import { anthropic } from './anthropic.js';
import { geminiJsonArray, geminiSse } from './gemini.js';
import { geminiEmbeddings, openAiEmbeddings, type EmbeddingsReply } from './embeddings.js';
import { SimulatedBatches } from './batches.js';
import { BEDROCK_CONVERSE_PATH, SimulatedBedrockBatches, bedrockConverse } from './bedrock.js';
import { ELEVENLABS_SPEECH_PATH, OPENAI_SPEECH_PATH, elevenLabsSpeech, openAiSpeech, streamSpeech, type SpeechApi, type SpeechFormat } from './speech.js';

export interface SimulatorOptions {
  port: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Delay between streamed chunks, default 0 (every chunk written in the same tick). */
  chunkDelayMs?: number;
  /** Delay before the status line and headers, default 0. */
  firstByteDelayMs?: number;
  /** How long a provider batch (OpenAI Batch API, Anthropic Message Batches, a Bedrock job) stays in progress, default 1000. */
  batchDelayMs?: number;
  /** The S3 stand-in Bedrock batch jobs read and write, as known when a job runs (default: S3_ENDPOINT then). */
  s3Endpoint?: string | (() => string | undefined);
  /**
   * Called once per streamed speech reply when its response closes: `completed` false when the client
   * went away first, `bytes` the audio bytes written until then. Not called for error replies.
   */
  onSpeech?: (event: SpeechEvent) => void;
  /** Called with every parsed JSON request body of the chat formats, the embeddings and the speech APIs. */
  onRequest?: (path: string, body: unknown) => void;
}

export interface SpeechEvent {
  path: string;
  /** The model as the client sent it. */
  model: string;
  format: SpeechFormat;
  completed: boolean;
  bytes: number;
}

export const DEFAULT_SIMULATOR_BATCH_DELAY_MS = 1000;

export interface Simulator {
  /** http://127.0.0.1:PORT */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Content pieces a `cut-stream` reply sends before the connection is destroyed. */
const CUT_AFTER_PIECES = 3;
const GEMINI_PATH = /^\/v1(?:beta)?\/models\/(.+):(generateContent|streamGenerateContent)$/;
const GEMINI_EMBED_PATH = /^\/v1(?:beta)?\/models\/(.+):(embedContent|batchEmbedContents)$/;

interface Route {
  format: WireFormat;
  /** Gemini: the model from the path. */
  pathModel?: string;
  /** Gemini: streaming is chosen by the path, not the body. */
  stream?: boolean;
}

function route(path: string, query: string): Route | undefined {
  switch (path) {
    case '/v1/chat/completions':
      return { format: openAiChat };
    case '/v1/responses':
      return { format: openAiResponses };
    case '/v1/messages':
      return { format: anthropic };
  }
  const bedrock = BEDROCK_CONVERSE_PATH.exec(path);
  if (bedrock) return { format: bedrockConverse, pathModel: decodeURIComponent(bedrock[1]!), stream: bedrock[2] === 'converse-stream' };
  const gemini = GEMINI_PATH.exec(path);
  if (!gemini) return undefined;
  let model = gemini[1]!;
  try {
    model = decodeURIComponent(model);
  } catch {
    // keep it as sent
  }
  const stream = gemini[2] === 'streamGenerateContent';
  const sse = stream && /(?:^|&)alt=sse(?:&|$)/.test(query);
  return { format: stream && !sse ? geminiJsonArray : geminiSse, pathModel: model, stream };
}

/** A request's whole body, once it has arrived (one chunk is used as it is). */
function readBody(req: IncomingMessage, then: (body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => then(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
}

function sendJson(res: ServerResponse, status: number, body: unknown, extraHeaders?: Record<string, string>): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...extraHeaders });
  res.end(text);
}

export function startSimulator(options: SimulatorOptions): Promise<Simulator> {
  const host = options.host ?? '127.0.0.1';
  const chunkDelayMs = Math.max(0, options.chunkDelayMs ?? 0);
  const firstByteDelayMs = Math.max(0, options.firstByteDelayMs ?? 0);
  const { onSpeech, onRequest } = options;

  /** Run `fn` after the first-byte delay, unless the client has gone by then. */
  function afterFirstByteDelay(res: ServerResponse, fn: () => void): void {
    if (firstByteDelayMs === 0) {
      fn();
      return;
    }
    const timer = setTimeout(() => {
      res.off('close', cancel);
      if (!res.destroyed) fn();
    }, firstByteDelayMs);
    const cancel = () => clearTimeout(timer);
    res.once('close', cancel);
  }

  /** Write frames one `res.write` each; end the response, or with `cut` destroy the socket after the last. */
  function writeFrames(res: ServerResponse, frames: string[], cut: boolean): void {
    const finish = () => {
      if (cut) res.destroy();
      else res.end();
    };
    if (chunkDelayMs === 0 || frames.length <= 1) {
      if (!frames.length) finish();
      else writeCorked(res, frames, cut ? (frame) => res.write(frame, finish) : undefined);
      return;
    }
    let index = 0;
    let timer: NodeJS.Timeout | undefined;
    const cancel = () => clearTimeout(timer);
    const tick = () => {
      timer = undefined;
      if (res.destroyed) return;
      const frame = frames[index++]!;
      if (index < frames.length) {
        res.write(frame);
        timer = setTimeout(tick, chunkDelayMs);
        return;
      }
      res.off('close', cancel);
      if (cut) res.write(frame, finish);
      else res.end(frame);
    };
    res.once('close', cancel);
    tick();
  }

  function respond(res: ServerResponse, format: WireFormat, request: ParsedRequest, reply: Reply, cut: boolean): void {
    if (request.stream) {
      if (cut && reply.pieces.length > CUT_AFTER_PIECES) reply = { ...reply, pieces: reply.pieces.slice(0, CUT_AFTER_PIECES) };
      const frames = format.frames(request, reply, cut);
      res.writeHead(200, { 'content-type': format.streamContentType, 'cache-control': 'no-cache' });
      writeFrames(res, frames, cut);
      return;
    }
    const body = JSON.stringify(format.render(request, reply));
    if (!cut) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    // Promise the whole body, send half of it, then drop the connection.
    const bytes = Buffer.from(body);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes.length });
    res.write(bytes.subarray(0, bytes.length >> 1), () => res.destroy());
  }

  function handle(res: ServerResponse, path: string, found: Route, raw: string): void {
    const { format } = found;
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      const failure = format.error('invalid', 'We could not parse the JSON body of your request. The request body must be valid JSON.');
      sendJson(res, failure.status, failure.body);
      return;
    }
    if (onRequest) onRequest(path, body);
    if (format === bedrockConverse && found.stream) {
      const failure = format.error('invalid', 'The simulator answers Converse, not ConverseStream');
      sendJson(res, failure.status, failure.body);
      return;
    }
    const parsed = format.parse(body, found.pathModel, found.stream ?? false);
    if (typeof parsed === 'string') {
      const failure = format.error('invalid', parsed);
      sendJson(res, failure.status, failure.body);
      return;
    }
    switch (parsed.upstream) {
      case 'echo':
      case 'tool-call':
      case 'cut-stream': {
        const reply = parsed.forcedTool !== undefined
          ? toolReply(parsed.forcedTool, parsed)
          : parsed.upstream === 'tool-call' && parsed.toolName !== undefined
          ? toolReply(parsed.toolName, parsed)
          : textReply(parsed.lastUserText, parsed);
        const cut = parsed.upstream === 'cut-stream';
        afterFirstByteDelay(res, () => respond(res, format, parsed, reply, cut));
        return;
      }
      case 'error-429': {
        const failure = format.error('rate_limit', '');
        afterFirstByteDelay(res, () => sendJson(res, failure.status, failure.body, { 'retry-after': '1' }));
        return;
      }
      case 'error-500': {
        const failure = format.error('server', '');
        afterFirstByteDelay(res, () => sendJson(res, failure.status, failure.body));
        return;
      }
      case 'timeout':
        // Never answer. The request holds no timer or buffer: when the client closes the socket, Node
        // destroys the request and response and nothing is left behind; close() destroys the socket.
        return;
      default: {
        const failure = format.error('not_found', '', parsed.model);
        sendJson(res, failure.status, failure.body);
      }
    }
  }

  /** An embeddings call: POST only, JSON in and out. */
  function embeddings(req: IncomingMessage, res: ServerResponse, path: string, answer: (body: unknown) => EmbeddingsReply): void {
    if (req.method !== 'POST') {
      req.resume();
      sendJson(res, 405, { error: { message: `Method ${req.method ?? ''} not allowed; use POST.` } }, { allow: 'POST' });
      return;
    }
    readBody(req, (raw) => {
      const parsed = jsonBody(raw);
      if (!parsed) {
        sendJson(res, 400, { error: { message: 'We could not parse the JSON body of your request.', type: 'invalid_request_error', param: null, code: null } });
        return;
      }
      if (onRequest) onRequest(path, parsed.value);
      const reply = answer(parsed.value);
      afterFirstByteDelay(res, () => sendJson(res, reply.status, reply.body, reply.headers));
    });
  }

  /** A text-to-speech call: POST only, JSON in, streamed audio (or a JSON error) out. */
  function speech(req: IncomingMessage, res: ServerResponse, path: string, query: string, api: SpeechApi): void {
    if (req.method !== 'POST') {
      req.resume();
      const failure = api.methodNotAllowed(req.method ?? '');
      sendJson(res, failure.status, failure.body, { allow: 'POST' });
      return;
    }
    readBody(req, (raw) => {
      const parsed = jsonBody(raw);
      if (parsed && onRequest) onRequest(path, parsed.value);
      const reply = api.answer(parsed, query);
      switch (reply.kind) {
        case 'audio': {
          const { model, audio } = reply;
          const done = onSpeech && ((completed: boolean, bytes: number) => onSpeech({ path, model, format: audio.format, completed, bytes }));
          streamSpeech(res, audio, reply.headers, firstByteDelayMs, chunkDelayMs, done);
          return;
        }
        case 'error':
          if (reply.delayed) afterFirstByteDelay(res, () => sendJson(res, reply.status, reply.body, reply.headers));
          else sendJson(res, reply.status, reply.body, reply.headers);
          return;
        case 'timeout':
          // As the chat formats' `timeout`: never answer, hold nothing.
          return;
      }
    });
  }

  let ownUrl = '';
  const batchDelayMs = Math.max(0, options.batchDelayMs ?? DEFAULT_SIMULATOR_BATCH_DELAY_MS);
  const batches = new SimulatedBatches(batchDelayMs, () => ownUrl);
  const bedrockJobs = new SimulatedBedrockBatches(batchDelayMs, () => (typeof options.s3Endpoint === 'function' ? options.s3Endpoint() : options.s3Endpoint) ?? process.env.S3_ENDPOINT);

  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (SimulatedBatches.handles(path)) {
      readBody(req, (raw) => {
        const reply = batches.handle(req.method ?? 'GET', path, req.headers['content-type'] ?? '', raw);
        if (Buffer.isBuffer(reply.body)) {
          res.writeHead(reply.status, { 'content-type': reply.contentType ?? 'application/octet-stream', 'content-length': reply.body.length });
          res.end(reply.body);
        } else sendJson(res, reply.status, reply.body);
      });
      return;
    }
    if (SimulatedBedrockBatches.handles(path)) {
      readBody(req, (raw) => {
        void bedrockJobs.handle(req.method ?? 'GET', path, q === -1 ? '' : url.slice(q + 1), raw).then((reply) => sendJson(res, reply.status, reply.body));
      });
      return;
    }
    if (path === '/v1/embeddings') {
      embeddings(req, res, path, openAiEmbeddings);
      return;
    }
    const geminiEmbed = GEMINI_EMBED_PATH.exec(path);
    if (geminiEmbed) {
      const model = geminiEmbed[1]!;
      embeddings(req, res, path, (body) => geminiEmbeddings(body, model, geminiEmbed[2] === 'batchEmbedContents'));
      return;
    }
    if (path === OPENAI_SPEECH_PATH) {
      speech(req, res, path, '', openAiSpeech);
      return;
    }
    if (ELEVENLABS_SPEECH_PATH.test(path)) {
      speech(req, res, path, q === -1 ? '' : url.slice(q + 1), elevenLabsSpeech);
      return;
    }
    const found = route(path, q === -1 ? '' : url.slice(q + 1));
    if (!found) {
      req.resume();
      if (req.method === 'GET' && path === '/health') sendJson(res, 200, { status: 'ok' });
      else sendJson(res, 404, { error: { message: `Unknown path: ${req.method ?? ''} ${path}`, type: 'invalid_request_error', param: null, code: 'not_found' } });
      return;
    }
    if (req.method !== 'POST') {
      req.resume();
      const failure = found.format.error('invalid', `Method ${req.method ?? ''} not allowed; use POST.`);
      sendJson(res, 405, failure.body, { allow: 'POST' });
      return;
    }
    readBody(req, (raw) => handle(res, path, found, raw.toString('utf8')));
  });
  // Benchmarks and the gateway keep connections alive between requests.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;

  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : options.port;
      const urlHost = host.includes(':') ? `[${host}]` : host;
      let closing: Promise<void> | undefined;
      ownUrl = `http://${urlHost}:${port}`;
      resolve({
        url: ownUrl,
        port,
        close: () => {
          bedrockJobs.close();
          closing ??= new Promise<void>((done, fail) => {
            server.close((err) => (err ? fail(err) : done()));
            // Requests that never get an answer (`timeout`), streams in progress (a speech stream's 'close'
            // clears its timer), idle keep-alive sockets.
            server.closeAllConnections();
            for (const socket of sockets) socket.destroy();
          });
          return closing;
        },
      });
    });
  });
}
