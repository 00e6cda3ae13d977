// A batch's input: JSON Lines read as a stream (never whole in memory), at most MAX_BATCH_INPUT_BYTES, and
// each line checked on its own. A line is one request:
//
//   {"custom_id": "a-1", "body": {...}}                                              (SPEC's item)
//   {"custom_id": "a-1", "method": "POST", "url": "/v1/chat/completions", "body": {...}}   (OpenAI's batch file)
//
// A bad line never fails the batch: it becomes that item's error (the batch's results say which and why),
// and the others run. Only the input as a whole can fail it: over the byte limit (413, TooLargeError, thrown
// as soon as the limit is passed, before anything beyond it is read).
import { isUtf8 } from 'node:buffer';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../platform/json-depth.js';
import type { z } from 'zod';
import { InvalidInputError, TooLargeError } from '../platform/errors.js';
import { describeIssues, unstorableJson, withoutNullFields } from '../platform/http/validation.js';
import { chatRequestSchema } from '../inference/formats/chat-schema.js';
import { responsesRequestSchema } from '../inference/formats/responses-schema.js';
import { messagesRequestSchema } from '../inference/formats/messages-schema.js';
import { embeddingsRequestSchema } from '../inference/formats/embeddings-schema.js';
import { INFERENCE_MAX_BODY_BYTES } from '../inference/routes.js';

/** SPEC Limits: a batch's input is at most 200 MB (209,715,200 bytes); over it → 413. */
export const MAX_BATCH_INPUT_BYTES = 200 * 1024 * 1024;
/** One item is at most what one live inference request may be (a Function URL's 6 MB payload). */
export const MAX_BATCH_LINE_BYTES = INFERENCE_MAX_BODY_BYTES;
/** custom_id names the item's result and its generation id: bounded, so every store key stays small. */
export const MAX_CUSTOM_ID_LENGTH = 256;

export const BATCH_ENDPOINTS = ['/v1/chat/completions', '/v1/responses', '/v1/messages', '/v1/embeddings'] as const;
export type BatchEndpoint = typeof BATCH_ENDPOINTS[number];

/** The request schema of each endpoint's items. */
const ITEM_SCHEMAS: Record<BatchEndpoint, z.ZodType> = {
  '/v1/chat/completions': chatRequestSchema,
  '/v1/responses': responsesRequestSchema,
  '/v1/messages': messagesRequestSchema,
  '/v1/embeddings': embeddingsRequestSchema,
};

/** Why an item cannot run, as a batch result's `error` (SPEC: message, param, type, error_type). */
export interface BatchItemError {
  message: string;
  param: string | null;
  type: 'invalid_request_error';
  error_type: 'invalid_json' | 'missing_custom_id' | 'invalid_custom_id' | 'duplicate_custom_id' | 'line_too_large' | 'wrong_endpoint' | 'invalid_body';
}

export type CheckedItem =
  | { kind: 'item'; line: number; customId: string; body: Record<string, unknown> }
  | { kind: 'error'; line: number; customId: string | null; error: BatchItemError };

/**
 * One line of the input: its 1-based number, its text (null when it was longer than MAX_BATCH_LINE_BYTES),
 * its length and where it starts in the input (bytes; the newline after it is not counted in `bytes`).
 */
export interface InputLine {
  number: number;
  text: string | null;
  bytes: number;
  offset: number;
  /** The line's bytes are not UTF-8 (its text has U+FFFD in their place): the item is refused. */
  notUtf8?: true;
}

const NEWLINE = 0x0a;
const CR = 0x0d;

/**
 * The lines of a JSON Lines input as they arrive. Blank lines are skipped (but counted, so line numbers
 * match the file). A line longer than `maxLineBytes` is not buffered: it comes out with `text: null` and its
 * length. Throws TooLargeError once more than `maxBytes` arrived, before reading on.
 */
export async function* jsonLines(
  source: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
  limits: { maxBytes?: number; maxLineBytes?: number } = {},
): AsyncGenerator<InputLine> {
  const maxBytes = limits.maxBytes ?? MAX_BATCH_INPUT_BYTES;
  const maxLineBytes = limits.maxLineBytes ?? MAX_BATCH_LINE_BYTES;
  let total = 0;
  let number = 0;
  /** The start of the current line from earlier chunks (when it fits), and its length so far. */
  let carried: Buffer[] = [];
  let carriedBytes = 0;
  let oversized = false;
  let first = true;
  /** Where the current line starts in the input. */
  let lineStart = 0;
  const finish = (tail: Buffer | undefined): InputLine | undefined => {
    number += 1;
    const bytes = carriedBytes + (tail?.length ?? 0);
    const offset = lineStart;
    lineStart += bytes + 1;
    // A CRLF line's CR is not part of the item (its limit is the item's own size).
    if (oversized || bytes > maxLineBytes + 1) return { number, text: null, bytes, offset };
    const parts = tail ? [...carried, tail] : carried;
    const whole = parts.length === 1 ? parts[0]! : Buffer.concat(parts, bytes);
    let end = whole.length;
    if (end > 0 && whole[end - 1] === CR) end -= 1;
    if (end > maxLineBytes) return { number, text: null, bytes, offset };
    const text = whole.toString('utf8', 0, end);
    if (text.trim() === '') return undefined;
    // Decoding put U+FFFD in place of bytes that are not UTF-8: the prompt would be sent other than it was given.
    return text.includes('\uFFFD') && !isUtf8(whole.subarray(0, end)) ? { number, text, bytes, offset, notUtf8: true } : { number, text, bytes, offset };
  };
  const reset = () => {
    carried = [];
    carriedBytes = 0;
    oversized = false;
  };
  for await (const piece of source) {
    const chunk = typeof piece === 'string' ? Buffer.from(piece) : Buffer.isBuffer(piece) ? piece : Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    total += chunk.length;
    if (total > maxBytes) throw tooLarge(maxBytes);
    // A byte-order mark (editors on Windows write one) is not part of the first item.
    let start = first && chunk.length >= 3 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf ? 3 : 0;
    if (chunk.length > 0) first = false;
    lineStart += start;
    for (let at = chunk.indexOf(NEWLINE, start); at !== -1; at = chunk.indexOf(NEWLINE, start)) {
      const line = finish(chunk.subarray(start, at));
      reset();
      if (line) yield line;
      start = at + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      carriedBytes += rest.length;
      if (carriedBytes > maxLineBytes + 1) {
        // The line is already too long to run: remember only its length.
        oversized = true;
        carried = [];
      } else {
        // The chunk may be reused by its producer: keep a copy of the part this line needs.
        carried.push(Buffer.from(rest));
      }
    }
  }
  if (carriedBytes > 0) {
    const line = finish(undefined);
    if (line) yield line;
  }
}

function tooLarge(maxBytes: number): TooLargeError {
  return new TooLargeError(`Batch input is larger than ${maxBytes} bytes (200 MB)`, { metadata: { limit_bytes: maxBytes } });
}

/**
 * Checks items one by one: the line's JSON, its custom_id (present, a non-empty string of at most
 * MAX_CUSTOM_ID_LENGTH characters, not seen before in this batch), OpenAI's method and url when given, and
 * the body against the endpoint's request schema. A batch's items do not stream.
 */
export class BatchItemChecker {
  private readonly seen = new Set<string>();
  private readonly schema: z.ZodType;

  /** `model`: the batch's, filled into items that name none; an item naming another is that item's error. */
  constructor(readonly endpoint: BatchEndpoint, private readonly options: { model?: string | null } = {}) {
    this.schema = ITEM_SCHEMAS[endpoint];
  }

  /** One line of a JSON Lines input. */
  checkLine(line: InputLine): CheckedItem {
    if (line.text === null) {
      return failed(line.number, null, 'line_too_large', `Line ${line.number} is ${line.bytes} bytes; an item is at most ${MAX_BATCH_LINE_BYTES} bytes`, null);
    }
    if (line.notUtf8) return failed(line.number, null, 'invalid_json', `Line ${line.number} is not valid UTF-8`, null);
    let value: unknown;
    try {
      value = JSON.parse(line.text);
    } catch (err) {
      return failed(line.number, null, 'invalid_json', `Line ${line.number} is not valid JSON: ${(err as Error).message.slice(0, 200)}`, null);
    }
    if (nestsDeeperThan(line.text)) {
      return failed(line.number, null, 'invalid_json', `Line ${line.number} nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep`, null);
    }
    // As a live request's body: a "__proto__" key or half of a surrogate pair could not be sent on as given.
    const unstorable = unstorableJson(value, line.text, `Line ${line.number}`);
    if (unstorable) return failed(line.number, null, 'invalid_json', unstorable, null);
    return this.check(value, line.number);
  }

  /** One item already parsed (an inline request, or a line). `line` numbers items from 1. */
  check(value: unknown, line: number): CheckedItem {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return failed(line, null, 'invalid_body', `Item ${line} must be an object with custom_id and body`, null);
    }
    const item = value as Record<string, unknown>;
    const customId = item.custom_id;
    if (customId === undefined || customId === null) return failed(line, null, 'missing_custom_id', `Item ${line} has no custom_id`, 'custom_id');
    if (typeof customId !== 'string' || customId.length === 0 || customId.length > MAX_CUSTOM_ID_LENGTH) {
      return failed(line, null, 'invalid_custom_id', `Item ${line}: custom_id must be a non-empty string of at most ${MAX_CUSTOM_ID_LENGTH} characters`, 'custom_id');
    }
    if (this.seen.has(customId)) return failed(line, customId, 'duplicate_custom_id', `Item ${line}: custom_id "${customId}" is used by an earlier item`, 'custom_id');
    this.seen.add(customId);
    if (item.method !== undefined && item.method !== null && item.method !== 'POST') {
      return failed(line, customId, 'wrong_endpoint', `Item ${line}: method must be POST`, 'method');
    }
    if (item.url !== undefined && item.url !== null && item.url !== this.endpoint) {
      return failed(line, customId, 'wrong_endpoint', `Item ${line}: url must be this batch's endpoint ${this.endpoint}`, 'url');
    }
    const body = item.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      return failed(line, customId, 'invalid_body', `Item ${line}: body must be a JSON object (a ${this.endpoint} request)`, 'body');
    }
    // As on the inference routes, a top-level field that is null is an option left out.
    const fields = withoutNullFields(body) as Record<string, unknown>;
    if (fields.stream === true) {
      return failed(line, customId, 'invalid_body', `Item ${line}: batch items do not stream; leave out stream or set it to false`, 'body.stream');
    }
    // A preset is resolved when a request runs, and a new version may come between the batch's validation and
    // an item's run: the batch's lease, sized at validation, could then be short. Items carry their settings.
    const named = fields.model;
    if (fields.preset !== undefined || (typeof named === 'string' && named.includes('@preset/'))) {
      return failed(line, customId, 'invalid_body', `Item ${line}: presets cannot be used in batch items; send the preset's settings in the item`, fields.preset !== undefined ? 'body.preset' : 'body.model');
    }
    const model = this.options.model;
    let checked = fields;
    if (model) {
      if (checked.model === undefined) {
        if (checked.models === undefined) checked = { model, ...checked };
      } else if (checked.model !== model) {
        return failed(line, customId, 'invalid_body', `Item ${line}: body.model "${String(checked.model)}" is not the batch's model "${model}"; leave it out or use the same`, 'body.model');
      }
    }
    const parsed = this.schema.safeParse(checked);
    if (!parsed.success) {
      const { issues, message } = describeIssues(parsed.error.issues, 'body');
      return failed(line, customId, 'invalid_body', `Item ${line}: ${message}`, issues[0]?.path ?? 'body');
    }
    return { kind: 'item', line, customId, body: parsed.data as Record<string, unknown> };
  }
}

function failed(line: number, customId: string | null, errorType: BatchItemError['error_type'], message: string, param: string | null): CheckedItem {
  return { kind: 'error', line, customId, error: { message, param, type: 'invalid_request_error', error_type: errorType } };
}

/**
 * A batch's requests sent inline in the create call. SPEC: an item without custom_id is a 400, and so is a
 * custom_id used twice or an item that is not an object; an item whose body fails the endpoint's schema is
 * that item's error.
 */
export function checkInlineRequests(requests: readonly unknown[], endpoint: BatchEndpoint): CheckedItem[] {
  const checker = new BatchItemChecker(endpoint);
  return requests.map((request, index) => {
    const checked = checker.check(request, index + 1);
    // An item whose custom_id is missing, unreadable or taken (or that is not an object at all).
    if (checked.kind === 'error' && (checked.customId === null || checked.error.error_type === 'duplicate_custom_id')) {
      throw new InvalidInputError(`Invalid body.requests.${index}: ${checked.error.message}`, { metadata: { param: `requests.${index}.custom_id`, index } });
    }
    return checked;
  });
}
