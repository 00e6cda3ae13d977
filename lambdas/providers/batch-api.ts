// The providers' own batch services: OpenAI's Batch API (a JSON Lines file uploaded, a batch over it, an
// output and an error file) and Anthropic's Message Batches (the requests inline, results as JSON Lines).
// Each request goes in the provider's wire format, made by the same converters as a live call, and each
// answer comes back as the internal result the live adapter would have given (or the ProviderError it
// would have thrown). Results files are read line by line as they arrive, never whole.
import * as z from 'zod';
import { randomBytes } from 'node:crypto';
import { ProviderError } from './provider-error.js';
import { callUpstream, parseUpstream } from './http.js';
import { bodyLines } from './json-lines.js';
import { emptyUsage, type FetchLike, type GenerationRequest, type GenerationResult } from './types.js';
import { convertToOpenAIChat } from './openai/convert-to-openai-chat.js';
import { chatCompletionResult } from './openai/openai-chat-adapter.js';
import { describeOpenAIError, openAIChatResponseSchema, openAIEmbeddingsResponseSchema } from './openai/openai-chat-api-types.js';
import { convertToAnthropicMessages } from './anthropic/convert-to-anthropic-messages.js';
import { ANTHROPIC_VERSION, messageResult } from './anthropic/anthropic-adapter.js';
import { anthropicErrorStatus, anthropicMessageSchema, describeAnthropicError } from './anthropic/anthropic-api-types.js';

export type BatchApiKind = 'openai' | 'anthropic' | 'bedrock';

/** One request of a provider batch: its id there (letters, digits, _ and -, at most 64) and the request. */
export interface ProviderBatchLine {
  customId: string;
  request: GenerationRequest;
}

/** How one request of an ended provider batch came out. */
export type ProviderBatchOutcome =
  | { kind: 'result'; result: GenerationResult }
  | { kind: 'error'; error: ProviderError }
  /** The provider never ran it: the batch was cancelled or expired first. */
  | { kind: 'not_run'; reason: string };

export interface ProviderBatchStatus {
  /** No request of it will run any more (completed, failed, expired, cancelled; Anthropic's "ended"). */
  ended: boolean;
  /** The provider's own word for it. */
  status: string;
}

export interface ProviderBatchApi {
  readonly kind: BatchApiKind;
  /** The fewest requests a batch of it takes (Bedrock's jobs: 100); a smaller batch runs through the gateway. */
  readonly minItems?: number;
  /** Makes the request's body in the provider's wire format, throwing the ProviderError a live call would (what it cannot carry). */
  check(request: GenerationRequest): void;
  /**
   * Why this service's batches cannot carry a request that a live call can (Bedrock's jobs: tools, embeddings);
   * undefined when they can. A batch with such an item runs through the gateway instead.
   */
  unbatchable?(request: GenerationRequest): string | undefined;
  /** Submits the requests; the provider's id of the batch. */
  submit(lines: readonly ProviderBatchLine[], metadata: Record<string, string>): Promise<string>;
  /**
   * The provider's id of a batch submitted earlier with this `metadata.gateway_batch_id`, among its recent
   * ones; undefined when there is none, or the provider keeps no metadata to find it by (Anthropic).
   */
  find(gatewayBatchId: string): Promise<string | undefined>;
  status(id: string): Promise<ProviderBatchStatus>;
  /** Every request's outcome by customId, once the batch has ended. */
  results(id: string): Promise<Map<string, ProviderBatchOutcome>>;
  cancel(id: string): Promise<void>;
}

export interface BatchApiSettings {
  provider: string;
  baseURL: string;
  apiKey?: string | undefined;
  fetch: FetchLike;
}

const openAiBatchSchema = z.object({
  id: z.string(),
  status: z.string(),
  metadata: z.record(z.string(), z.string()).nullish(),
  output_file_id: z.string().nullish(),
  error_file_id: z.string().nullish(),
});
const openAiFileSchema = z.object({ id: z.string() });
const openAiLineSchema = z.object({
  custom_id: z.string(),
  response: z.object({ status_code: z.number().int(), body: z.unknown() }).nullish(),
  error: z.object({ code: z.string().nullish(), message: z.string().nullish() }).nullish(),
});
const OPENAI_ENDED = new Set(['completed', 'failed', 'expired', 'cancelled']);

/** A JSON line of a provider's results file; a line that is not JSON is the provider's fault (502). */
function parseLine(provider: string, line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    throw new ProviderError({ provider, kind: 'invalid-response', status: 502, message: 'The provider\'s batch results file has a line that is not JSON' });
  }
}

export function createOpenAIBatchApi(settings: BatchApiSettings): ProviderBatchApi {
  const { provider, fetch } = settings;
  const base = settings.baseURL.replace(/\/+$/, '');
  const auth: Record<string, string> = settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {};
  const call = (path: string, { headers, ...options }: { method?: 'GET' | 'POST'; body?: unknown; text?: string; headers?: Record<string, string> } = {}) =>
    callUpstream({ provider, fetch, url: `${base}${path}`, ...options, headers: { ...auth, ...headers }, describeError: describeOpenAIError });

  return {
    kind: 'openai',

    check(request) {
      if (!request.embedding) convertToOpenAIChat(request, false);
    },

    async submit(lines, metadata) {
      const embeddings = lines.some((line) => line.request.embedding);
      const endpoint = embeddings ? '/v1/embeddings' : '/v1/chat/completions';
      const input = lines.map(({ customId, request }) => JSON.stringify({
        custom_id: customId, method: 'POST', url: endpoint,
        body: request.embedding
          ? { model: request.model, input: request.embedding.input, encoding_format: 'float', ...(request.embedding.dimensions !== undefined ? { dimensions: request.embedding.dimensions } : {}) }
          : convertToOpenAIChat(request, false),
      })).join('\n');
      const boundary = `gateway-${randomBytes(12).toString('hex')}`;
      const form = `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n`
        + `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="batch.jsonl"\r\nContent-Type: application/jsonl\r\n\r\n${input}\n\r\n--${boundary}--\r\n`;
      const file = parseUpstream(provider, openAiFileSchema, await (await call('/files', { text: form, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } })).json());
      const batch = parseUpstream(provider, openAiBatchSchema, await (await call('/batches', { body: { input_file_id: file.id, endpoint, completion_window: '24h', metadata } })).json());
      return batch.id;
    },

    async status(id) {
      const batch = parseUpstream(provider, openAiBatchSchema, await (await call(`/batches/${encodeURIComponent(id)}`, { method: 'GET' })).json());
      return { ended: OPENAI_ENDED.has(batch.status), status: batch.status };
    },

    async find(gatewayBatchId) {
      const list = parseUpstream(provider, z.object({ data: z.array(openAiBatchSchema) }), await (await call('/batches?limit=100', { method: 'GET' })).json());
      return list.data.find((batch) => batch.metadata?.gateway_batch_id === gatewayBatchId)?.id;
    },

    async results(id) {
      const batch = parseUpstream(provider, openAiBatchSchema, await (await call(`/batches/${encodeURIComponent(id)}`, { method: 'GET' })).json());
      const outcomes = new Map<string, ProviderBatchOutcome>();
      for (const fileId of [batch.output_file_id, batch.error_file_id]) {
        if (!fileId) continue;
        const file = await call(`/files/${encodeURIComponent(fileId)}/content`, { method: 'GET' });
        for await (const text of bodyLines(file.body)) {
          const line = parseUpstream(provider, openAiLineSchema, parseLine(provider, text));
          outcomes.set(line.custom_id, openAiOutcome(provider, line));
        }
      }
      return outcomes;
    },

    async cancel(id) {
      await call(`/batches/${encodeURIComponent(id)}/cancel`, { body: {} });
    },
  };
}

/** OpenAI's error codes for a request of a batch that ended before running it. */
const OPENAI_NOT_RUN: Record<string, string> = { batch_cancelled: 'cancelled', batch_expired: 'expired' };

function openAiOutcome(provider: string, line: z.output<typeof openAiLineSchema>): ProviderBatchOutcome {
  const response = line.response;
  const notRun = !response && line.error?.code ? OPENAI_NOT_RUN[line.error.code] : undefined;
  if (notRun) return { kind: 'not_run', reason: notRun };
  if (response && response.status_code >= 200 && response.status_code < 300) {
    const body = response.body as { object?: unknown };
    if (body && body.object === 'list') {
      const embeddings = parseUpstream(provider, openAIEmbeddingsResponseSchema, body);
      const ordered = [...embeddings.data].sort((a, b) => a.index - b.index).map((item) => item.embedding);
      return { kind: 'result', result: { text: '', tool_calls: [], finish_reason: 'stop', usage: { ...emptyUsage(), input_tokens: embeddings.usage?.prompt_tokens ?? 0 }, embeddings: ordered } };
    }
    return { kind: 'result', result: chatCompletionResult(parseUpstream(provider, openAIChatResponseSchema, body)) };
  }
  const described = response ? describeOpenAIError(response.body) : undefined;
  const status = response?.status_code ?? 500;
  return {
    kind: 'error',
    error: new ProviderError({ provider, kind: 'http', status, message: described?.message ?? line.error?.message ?? `HTTP ${status}`, ...(described?.code ?? line.error?.code ? { providerCode: (described?.code ?? line.error?.code)! } : {}) }),
  };
}

const anthropicBatchSchema = z.object({ id: z.string(), processing_status: z.string(), results_url: z.string().nullish() });
const anthropicResultSchema = z.object({
  custom_id: z.string(),
  result: z.discriminatedUnion('type', [
    z.object({ type: z.literal('succeeded'), message: z.unknown() }),
    z.object({ type: z.literal('errored'), error: z.unknown() }),
    z.object({ type: z.literal('canceled') }),
    z.object({ type: z.literal('expired') }),
  ]),
});

export function createAnthropicBatchApi(settings: BatchApiSettings): ProviderBatchApi {
  const { provider, fetch } = settings;
  const base = settings.baseURL.replace(/\/+$/, '');
  const headers: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION, ...(settings.apiKey ? { 'x-api-key': settings.apiKey } : {}) };
  const call = (url: string, options: { method?: 'GET' | 'POST'; body?: unknown } = {}) =>
    callUpstream({ provider, fetch, url, ...options, headers, describeError: describeAnthropicError });
  const read = async (id: string) => parseUpstream(provider, anthropicBatchSchema, await (await call(`${base}/messages/batches/${encodeURIComponent(id)}`, { method: 'GET' })).json());

  return {
    kind: 'anthropic',

    check(request) {
      convertToAnthropicMessages(request, { stream: false, provider, emulateJson: false });
    },

    async submit(lines) {
      const requests = lines.map(({ customId, request }) => ({ custom_id: customId, params: convertToAnthropicMessages(request, { stream: false, provider, emulateJson: false }) }));
      const batch = parseUpstream(provider, anthropicBatchSchema, await (await call(`${base}/messages/batches`, { body: { requests } })).json());
      return batch.id;
    },

    async status(id) {
      const batch = await read(id);
      return { ended: batch.processing_status === 'ended', status: batch.processing_status };
    },

    async find() {
      // Message batches carry no metadata to be found by.
      return undefined;
    },

    async results(id) {
      const batch = await read(id);
      const outcomes = new Map<string, ProviderBatchOutcome>();
      if (!batch.results_url) return outcomes;
      for await (const text of bodyLines((await call(batch.results_url, { method: 'GET' })).body)) {
        const line = parseUpstream(provider, anthropicResultSchema, parseLine(provider, text));
        const { result } = line;
        if (result.type === 'succeeded') outcomes.set(line.custom_id, { kind: 'result', result: messageResult(parseUpstream(provider, anthropicMessageSchema, result.message)) });
        else if (result.type === 'errored') {
          const described = describeAnthropicError(result.error);
          outcomes.set(line.custom_id, { kind: 'error', error: new ProviderError({ provider, kind: 'http', status: anthropicErrorStatus(described?.code ?? 'api_error'), message: described?.message ?? 'The request failed at the provider', ...(described?.code ? { providerCode: described.code } : {}) }) });
        } else outcomes.set(line.custom_id, { kind: 'not_run', reason: result.type === 'canceled' ? 'cancelled' : 'expired' });
      }
      return outcomes;
    },

    async cancel(id) {
      await call(`${base}/messages/batches/${encodeURIComponent(id)}/cancel`, { body: {} });
    },
  };
}
