// The providers' batch APIs, in memory, so that a gateway can run a batch through a provider's own batch
// service locally:
//   OpenAI:    POST /v1/files (multipart, purpose "batch"), GET /v1/files/{id}, GET /v1/files/{id}/content,
//              POST /v1/batches, GET /v1/batches/{id}, POST /v1/batches/{id}/cancel;
//   Anthropic: POST /v1/messages/batches, GET /v1/messages/batches/{id}, GET …/{id}/results,
//              POST …/{id}/cancel.
// A batch is in progress for `delayMs` after it was created, then ends with every request answered as the
// simulator answers it live (echo, tool-call, the error models fail their request). A batch cancelled before
// that ends with none answered. Nothing is kept on disk: a restarted simulator knows no batch.
import { createHash } from 'node:crypto';
import { anthropic } from './anthropic.js';
import { isObject, jsonBody, newId, nowSeconds, textReply, toolReply, type WireFormat } from './common.js';
import { openAiEmbeddings } from './embeddings.js';
import { openAiChat } from './openai-chat.js';
import { openAiResponses } from './openai-responses.js';

export interface BatchReply {
  status: number;
  body: unknown;
  contentType?: string;
}

/** A request's non-streamed answer, as the live simulator gives it. */
export function bufferedAnswer(format: WireFormat, body: unknown): { status: number; body: unknown } {
  const parsed = format.parse(isObject(body) ? { ...body, stream: false } : body, undefined, false);
  if (typeof parsed === 'string') return format.error('invalid', parsed);
  switch (parsed.upstream) {
    case 'echo': case 'tool-call': case 'cut-stream': {
      const reply = parsed.forcedTool !== undefined ? toolReply(parsed.forcedTool, parsed) : parsed.upstream === 'tool-call' && parsed.toolName !== undefined ? toolReply(parsed.toolName, parsed) : textReply(parsed.lastUserText, parsed);
      return { status: 200, body: format.render(parsed, reply) };
    }
    case 'error-429': return format.error('rate_limit', '');
    case 'error-500': case 'timeout': return format.error('server', '');
    default: return format.error('not_found', '', parsed.model);
  }
}

const OPENAI_ENDPOINTS: Record<string, ((body: unknown) => { status: number; body: unknown })> = {
  '/v1/chat/completions': (body) => bufferedAnswer(openAiChat, body),
  '/v1/responses': (body) => bufferedAnswer(openAiResponses, body),
  '/v1/embeddings': (body) => openAiEmbeddings(body),
};

const ANTHROPIC_CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;

interface StoredFile {
  id: string;
  filename: string;
  purpose: string;
  bytes: Buffer;
  created_at: number;
}

interface OpenAiBatch {
  id: string;
  endpoint: string;
  input_file_id: string;
  completion_window: string;
  status: 'in_progress' | 'cancelling' | 'completed' | 'cancelled' | 'failed';
  created_at: number;
  createdMs: number;
  output_file_id: string | null;
  error_file_id: string | null;
  request_counts: { total: number; completed: number; failed: number };
  metadata: Record<string, string> | null;
  completed_at: number | null;
  cancelled_at: number | null;
  errors: { object: 'list'; data: Array<{ code: string; message: string; line: number | null }> } | null;
}

interface AnthropicBatch {
  id: string;
  createdMs: number;
  requests: Array<{ custom_id: string; params: unknown }>;
  processing_status: 'in_progress' | 'canceling' | 'ended';
  cancelled: boolean;
  results: string | null;
  request_counts: { processing: number; succeeded: number; errored: number; canceled: number; expired: number };
  created_at: string;
  ended_at: string | null;
  cancel_initiated_at: string | null;
}

const openAiError = (status: number, message: string, code: string | null = null): BatchReply => ({ status, body: { error: { message, type: 'invalid_request_error', param: null, code } } });
const anthropicError = (status: number, type: string, message: string): BatchReply => ({ status, body: { type: 'error', error: { type, message } } });
const iso = (ms: number) => new Date(ms).toISOString();

/** The fields of a multipart/form-data body: text fields as strings, file fields with their bytes and name. */
export function parseMultipart(body: Buffer, contentType: string): Map<string, { value: Buffer; filename: string | undefined }> | undefined {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  if (!boundary) return undefined;
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]!.trim()}`);
  const fields = new Map<string, { value: Buffer; filename: string | undefined }>();
  let at = body.indexOf(delimiter);
  while (at !== -1) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, start);
    if (next === -1) break;
    // \r\n<headers>\r\n\r\n<content>\r\n
    const part = body.subarray(start + 2, next - 2);
    const split = part.indexOf('\r\n\r\n');
    if (split !== -1) {
      const headers = part.subarray(0, split).toString('utf8');
      const name = /name="([^"]*)"/i.exec(headers)?.[1];
      const filename = /filename="([^"]*)"/i.exec(headers)?.[1];
      if (name !== undefined) fields.set(name, { value: part.subarray(split + 4), filename });
    }
    at = next;
  }
  return fields;
}

export class SimulatedBatches {
  private readonly files = new Map<string, StoredFile>();
  private readonly openai = new Map<string, OpenAiBatch>();
  private readonly anthropic = new Map<string, AnthropicBatch>();

  /** `baseUrl`: the simulator's own URL, for Anthropic's results_url. */
  constructor(private readonly delayMs: number, private readonly baseUrl: () => string) {}

  /** Whether a path is one of the batch APIs'. */
  static handles(path: string): boolean {
    return path === '/v1/files' || path.startsWith('/v1/files/') || path === '/v1/batches' || path.startsWith('/v1/batches/') || path.startsWith('/v1/messages/batches');
  }

  handle(method: string, path: string, contentType: string, body: Buffer): BatchReply {
    const parts = path.split('/').filter(Boolean);
    // OpenAI files
    if (path === '/v1/files' && method === 'POST') return this.uploadFile(contentType, body);
    if (parts[1] === 'files' && parts.length === 3 && method === 'GET') return this.fileObject(parts[2]!);
    if (parts[1] === 'files' && parts.length === 4 && parts[3] === 'content' && method === 'GET') return this.fileContent(parts[2]!);
    // OpenAI batches
    if (path === '/v1/batches' && method === 'POST') return this.createOpenAi(body);
    if (path === '/v1/batches' && method === 'GET') return this.listOpenAi();
    if (parts[1] === 'batches' && parts.length === 3 && method === 'GET') return this.readOpenAi(parts[2]!);
    if (parts[1] === 'batches' && parts.length === 4 && parts[3] === 'cancel' && method === 'POST') return this.cancelOpenAi(parts[2]!);
    // Anthropic message batches
    if (path === '/v1/messages/batches' && method === 'POST') return this.createAnthropic(body);
    if (parts[1] === 'messages' && parts[2] === 'batches' && parts.length === 4 && method === 'GET') return this.readAnthropic(parts[3]!);
    if (parts[1] === 'messages' && parts[2] === 'batches' && parts.length === 5 && parts[4] === 'results' && method === 'GET') return this.anthropicResults(parts[3]!);
    if (parts[1] === 'messages' && parts[2] === 'batches' && parts.length === 5 && parts[4] === 'cancel' && method === 'POST') return this.cancelAnthropic(parts[3]!);
    return openAiError(404, `Unknown path: ${method} ${path}`, 'not_found');
  }

  // ---- OpenAI ------------------------------------------------------------------------------------------

  private storeFile(filename: string, purpose: string, bytes: Buffer): StoredFile {
    const file = { id: newId('file-'), filename, purpose, bytes, created_at: nowSeconds() };
    this.files.set(file.id, file);
    return file;
  }

  private fileView(file: StoredFile) {
    return { id: file.id, object: 'file', bytes: file.bytes.length, created_at: file.created_at, filename: file.filename, purpose: file.purpose, status: 'processed' };
  }

  private uploadFile(contentType: string, body: Buffer): BatchReply {
    const fields = parseMultipart(body, contentType);
    if (!fields) return openAiError(400, 'The request must be multipart/form-data with a file and a purpose.');
    const purpose = fields.get('purpose')?.value.toString('utf8');
    const file = fields.get('file');
    if (!purpose) return openAiError(400, "Missing required parameter: 'purpose'.");
    if (!file) return openAiError(400, "Missing required parameter: 'file'.");
    return { status: 200, body: this.fileView(this.storeFile(file.filename ?? 'upload.jsonl', purpose, file.value)) };
  }

  private fileObject(id: string): BatchReply {
    const file = this.files.get(id);
    return file ? { status: 200, body: this.fileView(file) } : openAiError(404, `No such File object: ${id}`);
  }

  private fileContent(id: string): BatchReply {
    const file = this.files.get(id);
    return file ? { status: 200, body: file.bytes, contentType: 'application/octet-stream' } : openAiError(404, `No such File object: ${id}`);
  }

  private createOpenAi(raw: Buffer): BatchReply {
    const parsed = jsonBody(raw);
    if (!parsed) return openAiError(400, 'We could not parse the JSON body of your request.');
    const body = parsed.value;
    if (!isObject(body)) return openAiError(400, 'The request body must be a JSON object.');
    const { input_file_id: inputFileId, endpoint, completion_window: window } = body;
    if (typeof endpoint !== 'string' || !OPENAI_ENDPOINTS[endpoint]) return openAiError(400, `Invalid 'endpoint': use one of ${Object.keys(OPENAI_ENDPOINTS).join(', ')}.`);
    if (window !== '24h') return openAiError(400, "Invalid 'completion_window': only 24h is supported.");
    const file = typeof inputFileId === 'string' ? this.files.get(inputFileId) : undefined;
    if (!file) return openAiError(404, `No such File object: ${String(inputFileId)}`);
    const lines = file.bytes.toString('utf8').split('\n').filter((line) => line.trim() !== '');
    const now = Date.now();
    const batch: OpenAiBatch = {
      id: newId('batch_'), endpoint, input_file_id: file.id, completion_window: '24h', status: 'in_progress', created_at: Math.floor(now / 1000), createdMs: now,
      output_file_id: null, error_file_id: null, request_counts: { total: lines.length, completed: 0, failed: 0 },
      metadata: isObject(body.metadata) ? body.metadata as Record<string, string> : null, completed_at: null, cancelled_at: null, errors: null,
    };
    this.openai.set(batch.id, batch);
    return { status: 200, body: this.openAiView(batch) };
  }

  private openAiView(batch: OpenAiBatch) {
    const { createdMs: _created, ...view } = batch;
    return {
      ...view, object: 'batch', expires_at: batch.created_at + 86_400, in_progress_at: batch.created_at, finalizing_at: batch.completed_at,
      failed_at: null, expired_at: null, expires_after: null, cancelling_at: batch.cancelled_at,
    };
  }

  /** The batch's input lines, parsed (undefined for one that is not JSON), with their custom_id (or line-<n>). */
  private inputLines(batch: OpenAiBatch): Array<{ line: unknown; customId: string }> {
    const texts = this.files.get(batch.input_file_id)!.bytes.toString('utf8').split('\n').filter((text) => text.trim() !== '');
    return texts.map((text, index) => {
      let line: unknown;
      try {
        line = JSON.parse(text);
      } catch {
        line = undefined;
      }
      return { line, customId: isObject(line) && typeof line.custom_id === 'string' ? line.custom_id : `line-${index + 1}` };
    });
  }

  /** A batch whose time has come: every line answered, into the output (2xx) and error (the rest) files. */
  private settleOpenAi(batch: OpenAiBatch): void {
    if (batch.status === 'cancelling') {
      // As OpenAI does: every request it never ran is a line of the error file, without a response.
      const lines = this.inputLines(batch);
      const notRun = lines.map(({ customId }, index) => JSON.stringify({
        id: `batch_req_${batch.id.slice(6)}${index}`, custom_id: customId, response: null, error: { code: 'batch_cancelled', message: 'This request was not executed because the batch was cancelled.' },
      }));
      if (notRun.length) batch.error_file_id = this.storeFile(`${batch.id}_error.jsonl`, 'batch_output', Buffer.from(`${notRun.join('\n')}\n`)).id;
      batch.request_counts = { total: lines.length, completed: 0, failed: lines.length };
      batch.status = 'cancelled';
      batch.cancelled_at = nowSeconds();
      return;
    }
    if (batch.status !== 'in_progress' || Date.now() - batch.createdMs < this.delayMs) return;
    const answer = OPENAI_ENDPOINTS[batch.endpoint]!;
    const output: string[] = [];
    const failed: string[] = [];
    const lines = this.inputLines(batch);
    lines.forEach(({ line, customId }, index) => {
      const requestId = `req_${createHash('sha256').update(`${batch.id}:${index}`).digest('hex').slice(0, 24)}`;
      const id = `batch_req_${requestId.slice(4)}`;
      if (!isObject(line) || line.url !== batch.endpoint || !isObject(line.body)) {
        failed.push(JSON.stringify({ id, custom_id: customId, response: null, error: { code: 'invalid_request', message: `Line ${index + 1} is not a request for ${batch.endpoint}` } }));
        return;
      }
      const reply = answer(line.body);
      const entry = JSON.stringify({ id, custom_id: customId, response: { status_code: reply.status, request_id: requestId, body: reply.body }, error: null });
      (reply.status >= 200 && reply.status < 300 ? output : failed).push(entry);
    });
    if (output.length) batch.output_file_id = this.storeFile(`${batch.id}_output.jsonl`, 'batch_output', Buffer.from(`${output.join('\n')}\n`)).id;
    if (failed.length) batch.error_file_id = this.storeFile(`${batch.id}_error.jsonl`, 'batch_output', Buffer.from(`${failed.join('\n')}\n`)).id;
    batch.request_counts = { total: lines.length, completed: output.length, failed: failed.length };
    batch.status = 'completed';
    batch.completed_at = nowSeconds();
  }

  /** GET /v1/batches: the newest 100, newest first. */
  private listOpenAi(): BatchReply {
    const data = [...this.openai.values()].reverse().slice(0, 100).map((batch) => {
      this.settleOpenAi(batch);
      return this.openAiView(batch);
    });
    return { status: 200, body: { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: this.openai.size > 100 } };
  }

  private readOpenAi(id: string): BatchReply {
    const batch = this.openai.get(id);
    if (!batch) return openAiError(404, `No batch found with id '${id}'.`);
    this.settleOpenAi(batch);
    return { status: 200, body: this.openAiView(batch) };
  }

  private cancelOpenAi(id: string): BatchReply {
    const batch = this.openai.get(id);
    if (!batch) return openAiError(404, `No batch found with id '${id}'.`);
    this.settleOpenAi(batch);
    if (batch.status !== 'in_progress') return openAiError(409, `Cannot cancel a batch with status '${batch.status}'.`);
    batch.status = 'cancelling';
    batch.cancelled_at = nowSeconds();
    return { status: 200, body: this.openAiView(batch) };
  }

  // ---- Anthropic ---------------------------------------------------------------------------------------

  private createAnthropic(raw: Buffer): BatchReply {
    const parsed = jsonBody(raw);
    if (!parsed) return anthropicError(400, 'invalid_request_error', 'The request body is not valid JSON.');
    const body = parsed.value;
    if (!isObject(body) || !Array.isArray(body.requests) || body.requests.length === 0) return anthropicError(400, 'invalid_request_error', 'requests: Field required (at least one request)');
    const seen = new Set<string>();
    for (const [index, request] of body.requests.entries()) {
      if (!isObject(request) || typeof request.custom_id !== 'string' || !ANTHROPIC_CUSTOM_ID.test(request.custom_id)) {
        return anthropicError(400, 'invalid_request_error', `requests.${index}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`);
      }
      if (seen.has(request.custom_id)) return anthropicError(400, 'invalid_request_error', `requests.${index}.custom_id: duplicate custom_id ${request.custom_id}`);
      seen.add(request.custom_id);
      if (!isObject(request.params)) return anthropicError(400, 'invalid_request_error', `requests.${index}.params: Field required`);
    }
    const now = Date.now();
    const batch: AnthropicBatch = {
      id: newId('msgbatch_'), createdMs: now, requests: body.requests as AnthropicBatch['requests'], processing_status: 'in_progress', cancelled: false, results: null,
      request_counts: { processing: body.requests.length, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
      created_at: iso(now), ended_at: null, cancel_initiated_at: null,
    };
    this.anthropic.set(batch.id, batch);
    return { status: 200, body: this.anthropicView(batch) };
  }

  private anthropicView(batch: AnthropicBatch) {
    return {
      id: batch.id, type: 'message_batch', processing_status: batch.processing_status, request_counts: batch.request_counts,
      ended_at: batch.ended_at, created_at: batch.created_at, expires_at: iso(batch.createdMs + 86_400_000), archived_at: null,
      cancel_initiated_at: batch.cancel_initiated_at,
      results_url: batch.processing_status === 'ended' ? `${this.baseUrl()}/v1/messages/batches/${batch.id}/results` : null,
    };
  }

  private settleAnthropic(batch: AnthropicBatch): void {
    if (batch.processing_status === 'ended') return;
    if (!batch.cancelled && Date.now() - batch.createdMs < this.delayMs) return;
    const counts = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
    const lines = batch.requests.map((request) => {
      if (batch.cancelled) {
        counts.canceled += 1;
        return { custom_id: request.custom_id, result: { type: 'canceled' } };
      }
      const reply = bufferedAnswer(anthropic, request.params);
      if (reply.status === 200) {
        counts.succeeded += 1;
        return { custom_id: request.custom_id, result: { type: 'succeeded', message: reply.body } };
      }
      counts.errored += 1;
      return { custom_id: request.custom_id, result: { type: 'errored', error: reply.body } };
    });
    batch.results = `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;
    batch.request_counts = counts;
    batch.processing_status = 'ended';
    batch.ended_at = iso(Date.now());
  }

  private readAnthropic(id: string): BatchReply {
    const batch = this.anthropic.get(id);
    if (!batch) return anthropicError(404, 'not_found_error', `message batch ${id} not found`);
    this.settleAnthropic(batch);
    return { status: 200, body: this.anthropicView(batch) };
  }

  private anthropicResults(id: string): BatchReply {
    const batch = this.anthropic.get(id);
    if (!batch) return anthropicError(404, 'not_found_error', `message batch ${id} not found`);
    this.settleAnthropic(batch);
    if (batch.processing_status !== 'ended') return anthropicError(400, 'invalid_request_error', `Batch ${id} is still in progress; its results are not available yet`);
    return { status: 200, body: Buffer.from(batch.results!), contentType: 'application/x-jsonl' };
  }

  private cancelAnthropic(id: string): BatchReply {
    const batch = this.anthropic.get(id);
    if (!batch) return anthropicError(404, 'not_found_error', `message batch ${id} not found`);
    this.settleAnthropic(batch);
    if (batch.processing_status === 'ended') return anthropicError(400, 'invalid_request_error', `Batch ${id} has ended and cannot be canceled`);
    batch.cancelled = true;
    batch.processing_status = 'canceling';
    batch.cancel_initiated_at = iso(Date.now());
    return { status: 200, body: this.anthropicView(batch) };
  }
}
