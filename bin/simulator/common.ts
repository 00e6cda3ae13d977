// Shared pieces of the upstream simulator: the parsed request every wire format reduces to, the reply
// the simulated model produces, deterministic token counting, chunking and cheap ids.
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';

/** What every wire format's request is reduced to. */
export interface ParsedRequest {
  /** The `model` as the client sent it (echoed back in responses). */
  model: string;
  /** The upstream model name: `model` with any `vendor/` prefix stripped. */
  upstream: string;
  stream: boolean;
  /** Text of the last user message (its text parts concatenated). */
  lastUserText: string;
  /** Total characters of all input text (system prompt and every message's text). */
  inputChars: number;
  /** The format's output-token limit, when the request sets one. */
  maxTokens: number | undefined;
  /** Name of the first declared function tool, if any. */
  toolName: string | undefined;
  /** A tool the request makes the model call (Anthropic's tool_choice {type: 'tool'}): any model then calls it. */
  forcedTool?: string | undefined;
}

export type Reply =
  | {
      kind: 'text';
      text: string;
      /** The text split into streaming pieces; their concatenation is `text`. */
      pieces: string[];
      /** True when `max_tokens` cut the text short. */
      truncated: boolean;
      inputTokens: number;
      outputTokens: number;
    }
  | {
      kind: 'tool';
      name: string;
      /** JSON text of the arguments. */
      arguments: string;
      /** `arguments` split into streaming pieces. */
      pieces: string[];
      truncated: false;
      inputTokens: number;
      outputTokens: number;
    };

/** How a format failed a request before any model ran. */
export type ErrorKind = 'invalid' | 'not_found' | 'rate_limit' | 'server';

export interface ErrorReply {
  status: number;
  body: unknown;
}

/** One provider wire format. */
export interface WireFormat {
  /** Reduce the JSON body to a ParsedRequest, or return the 400 message. */
  parse(body: unknown, pathModel: string | undefined, stream: boolean): ParsedRequest | string;
  error(kind: ErrorKind, message: string, model?: string): ErrorReply;
  /** The complete non-streaming response body. */
  render(request: ParsedRequest, reply: Reply): unknown;
  /**
   * Streaming frames, each written with one `res.write`. With `cut`, only the frames up to the last
   * content piece (no final event).
   */
  frames(request: ParsedRequest, reply: Reply, cut: boolean): string[];
  streamContentType: string;
}

export const CHARS_PER_TOKEN = 4;
const PIECE_SIZE = 8;

export function tokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / CHARS_PER_TOKEN));
}

/** Split into ~8-character pieces, never between the halves of a surrogate pair. */
export function splitPieces(text: string, size = PIECE_SIZE): string[] {
  const pieces: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + size, text.length);
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end += 1;
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** `text` cut to at most `maxTokens` tokens' worth of characters, not splitting a surrogate pair. */
export function truncate(text: string, maxTokens: number): string {
  let end = Math.max(0, maxTokens) * CHARS_PER_TOKEN;
  if (end >= text.length) return text;
  if (end > 0 && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
  return text.slice(0, end);
}

export function textReply(text: string, request: ParsedRequest): Reply {
  let truncated = false;
  const limit = request.maxTokens;
  if (limit !== undefined && tokens(text.length) > limit) {
    text = truncate(text, limit);
    truncated = true;
  }
  return { kind: 'text', text, pieces: splitPieces(text), truncated, inputTokens: tokens(request.inputChars), outputTokens: tokens(text.length) };
}

export function toolReply(name: string, request: ParsedRequest): Reply {
  const args = JSON.stringify({ echo: request.lastUserText });
  return { kind: 'tool', name, arguments: args, pieces: splitPieces(args), truncated: false, inputTokens: tokens(request.inputChars), outputTokens: tokens(args.length) };
}

/** Strip any `vendor/` prefix: `simulator/echo` → `echo`. */
export function upstreamName(model: string): string {
  const slash = model.lastIndexOf('/');
  return slash === -1 ? model : model.slice(slash + 1);
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const PROCESS_TAG = Array.from(randomBytes(12), (byte) => ALPHABET[byte % ALPHABET.length]).join('');
let counter = 0;

/** A unique id with the given prefix (`chatcmpl-`, `msg_`, …): a per-process random tag and a counter. */
export function newId(prefix: string): string {
  counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
  return prefix + PROCESS_TAG + counter.toString(36).padStart(6, '0');
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

// ---- request-body helpers -------------------------------------------------------------------

export type Json = Record<string, unknown>;

/** A request body parsed as JSON, or `undefined` when it is not JSON (the caller answers its format's 400). */
export function jsonBody(raw: Buffer): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(raw.toString('utf8')) as unknown };
  } catch {
    return undefined;
  }
}

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A positive integer limit, `undefined` when absent, or `null` when present but invalid. */
export function readLimit(value: unknown): number | undefined | null {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : null;
}

/**
 * Text of a message content: a string, or an array of parts whose `text` is a string (only parts whose
 * type is one of `textTypes`, or that have no type).
 */
export function contentText(content: unknown, textTypes: ReadonlySet<string>): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) {
    if (!isObject(part) || typeof part.text !== 'string') continue;
    if (part.type === undefined || (typeof part.type === 'string' && textTypes.has(part.type))) text += part.text;
  }
  return text;
}

export function sseData(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

export function sseEvent(type: string, payload: unknown): string {
  return `event: ${type}\ndata: ${JSON.stringify(payload)}\n\n`;
}

/**
 * Every piece its own `res.write` (its own HTTP chunk), the last one with `end` (or, with `last`, handed to
 * it), all handed to the kernel in one writev; with no pieces the response just ends (`last` is not
 * called). The socket is corked, not the response: Node 22.23's and 24.21's `ServerResponse.cork()` drop
 * the writes they buffered when `end` comes before `uncork`.
 */
export function writeCorked(res: ServerResponse, pieces: readonly (string | Buffer)[], last?: (piece: string | Buffer) => void): void {
  const socket = res.socket;
  socket?.cork();
  const final = pieces.length - 1;
  for (let i = 0; i < final; i++) res.write(pieces[i]);
  if (final >= 0 && last) last(pieces[final]!);
  else if (final >= 0) res.end(pieces[final]);
  else res.end();
  socket?.uncork();
}
