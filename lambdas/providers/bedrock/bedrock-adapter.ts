// Adapter for Amazon Bedrock Converse / ConverseStream through the AWS SDK. Credentials come from the
// SDK's default chain (the function's IAM role); the SDK does not retry, the gateway decides that.
import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand, InvokeModelCommand } from '@aws-sdk/client-bedrock-runtime';
import { embeddingResult } from '../embeddings.js';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { CallOptions, GenerationRequest, GenerationResult, ProviderAdapter, StreamEvent, Usage } from '../types.js';
import { emptyUsage } from '../types.js';
import { parseJsonText, parseUpstream } from '../http.js';
import { ProviderError } from '../provider-error.js';
import { bedrockSupportedParameters, convertToBedrockConverse } from './convert-to-bedrock-converse.js';
import { mapBedrockStopReason } from './map-bedrock-stop-reason.js';
import { STREAM_EXCEPTION_MEMBERS, converseResponseSchema, converseStreamEventSchema } from './bedrock-converse-api-types.js';
import { isLocalFake, LOCAL_FAKE_CREDENTIALS } from './local-fake.js';
import { withoutSdkLogging } from '../../platform/aws/quiet-client.js';
import { bedrockError, converseResult, mapBedrockUsage } from './bedrock-results.js';

export { bedrockError, converseResult, mapBedrockUsage };

export const supportedParameters: readonly string[] = bedrockSupportedParameters;

export interface BedrockSettings {
  /** Provider slug reported in metadata. */
  provider?: string;
  /** AWS region; the SDK's default (AWS_REGION) when omitted. */
  region?: string;
  /** Endpoint override, for tests and local fakes; a plain http:// endpoint is spoken to over HTTP/1.1. */
  endpoint?: string;
  /** A ready client (tests, custom credentials); otherwise one is created for this adapter. */
  client?: BedrockRuntimeClient;
}

/** Texts in one Cohere embeddings call on Bedrock (its limit). */
const COHERE_EMBED_BATCH = 96;
const COHERE_INPUT_TYPES = new Set(['search_document', 'search_query', 'classification', 'clustering']);
/** Titan embeddings: calls at once, and attempts of one text (a throttle is retried for that text alone). */
const TITAN_CONCURRENCY = 4;
const TITAN_ATTEMPTS = 3;

export function createBedrockAdapter(settings: BedrockSettings = {}): ProviderAdapter {
  const provider = settings.provider ?? 'amazon-bedrock';
  const client = settings.client ?? withoutSdkLogging(new BedrockRuntimeClient({
    ...(settings.region ? { region: settings.region } : {}),
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
    // The client's default HTTP/2 handler needs TLS (ALPN); plain-http fakes speak HTTP/1.1, and sign with
    // any key (npm start has no AWS account: the SDK's credential chain would find nothing).
    ...(isLocalFake(settings.endpoint) ? { requestHandler: new NodeHttpHandler(), credentials: LOCAL_FAKE_CREDENTIALS } : {}),
    maxAttempts: 1,
  }));

  /** InvokeModel with a JSON body; the reply's JSON. */
  async function invoke(modelId: string, body: unknown, options: CallOptions): Promise<Record<string, unknown>> {
    let output;
    try {
      output = await client.send(new InvokeModelCommand({ modelId, contentType: 'application/json', accept: 'application/json', body: JSON.stringify(body) }), { abortSignal: options.signal });
    } catch (err) {
      throw bedrockError(provider, err, options.signal);
    }
    const parsed = parseJsonText(provider, Buffer.from(output.body).toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null) throw new ProviderError({ provider, kind: 'invalid-response', status: 502, message: 'Upstream reply is not a JSON object' });
    return parsed as Record<string, unknown>;
  }

  /**
   * Embeddings through InvokeModel. Cohere's models take up to 96 texts a call (and count no tokens).
   * Titan's take one text a call (and count its tokens): four calls at a time, a throttled or failed call
   * tried again alone (up to TITAN_ATTEMPTS), so that the texts already embedded, which Bedrock has billed,
   * are not embedded again by a retry of the whole request; the first call that fails for good stops the rest.
   */
  async function embed(request: GenerationRequest, options: CallOptions): Promise<GenerationResult> {
    const { input, dimensions, inputType } = request.embedding!;
    if (/(^|\.)cohere\.embed/.test(request.model)) {
      const vectors: number[][] = [];
      const type = inputType && COHERE_INPUT_TYPES.has(inputType) ? inputType : 'search_document';
      for (let start = 0; start < input.length; start += COHERE_EMBED_BATCH) {
        const texts = input.slice(start, start + COHERE_EMBED_BATCH);
        const reply = await invoke(request.model, { texts, input_type: type, truncate: 'END' }, options);
        const embeddings = Array.isArray(reply.embeddings) ? reply.embeddings as number[][] : (reply.embeddings as { float?: number[][] } | undefined)?.float ?? [];
        if (embeddings.length !== texts.length) throw new ProviderError({ provider, kind: 'invalid-response', status: 502, message: `Upstream returned ${embeddings.length} embeddings for ${texts.length} texts` });
        vectors.push(...embeddings);
      }
      return embeddingResult(provider, input, vectors, undefined);
    }
    const stop = new AbortController();
    const onAbort = () => stop.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const embeddings: number[][] = new Array(input.length);
    let tokens = 0;
    let counted = true;
    const one = async (index: number) => {
      for (let attempt = 1; ; attempt += 1) {
        try {
          const reply = await invoke(request.model, { inputText: input[index], ...(dimensions !== undefined ? { dimensions } : {}), normalize: true }, { signal: stop.signal });
          if (!Array.isArray(reply.embedding)) throw new ProviderError({ provider, kind: 'invalid-response', status: 502, message: 'Upstream reply has no embedding' });
          embeddings[index] = reply.embedding as number[];
          if (typeof reply.inputTextTokenCount === 'number') tokens += reply.inputTextTokenCount;
          else counted = false;
          return;
        } catch (err) {
          const retry = err instanceof ProviderError && err.retryable && attempt < TITAN_ATTEMPTS && !stop.signal.aborted;
          if (!retry) throw err;
          await new Promise((resolve) => setTimeout(resolve, Math.min(2000, err.retryAfterMs ?? 100 * 2 ** attempt)));
        }
      }
    };
    try {
      let next = 0;
      const lane = async () => {
        while (next < input.length && !stop.signal.aborted) await one(next++);
      };
      await Promise.all(Array.from({ length: Math.min(TITAN_CONCURRENCY, input.length) }, () => lane().catch((err: unknown) => {
        stop.abort(err);
        throw err;
      })));
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
    }
    return embeddingResult(provider, input, embeddings, counted ? tokens : undefined);
  }

  return {
    provider,

    async generate(request: GenerationRequest, options: CallOptions = {}): Promise<GenerationResult> {
      if (request.embedding) return embed(request, options);
      const input = convertToBedrockConverse(request, provider);
      let output: unknown;
      try {
        output = await client.send(new ConverseCommand(input), { abortSignal: options.signal });
      } catch (err) {
        throw bedrockError(provider, err, options.signal);
      }
      return converseResult(parseUpstream(provider, converseResponseSchema, output), request.reasoning?.exclude === true);
    },

    async *stream(request: GenerationRequest, options: CallOptions = {}): AsyncGenerator<StreamEvent> {
      const input = convertToBedrockConverse(request, provider);
      options.onBody?.(input);
      const excludeReasoning = request.reasoning?.exclude === true;
      let stopReason: string | undefined;
      let usage: Usage | undefined;
      let serviceTier: string | undefined;
      let requestId: string | undefined;
      let sawMetadata = false;
      /** Content block index → tool call index, in order of appearance. */
      const toolIndexes = new Map<number, number>();
      try {
        const output = await client.send(new ConverseStreamCommand(input), { abortSignal: options.signal });
        requestId = output.$metadata.requestId;
        if (!output.stream) throw new ProviderError({ provider, kind: 'invalid-response', status: 502, message: 'Upstream stream has no body' });
        for await (const raw of output.stream) {
          for (const [member, name] of Object.entries(STREAM_EXCEPTION_MEMBERS)) {
            const exception = (raw as unknown as Record<string, unknown>)[member];
            if (exception) throw bedrockError(provider, { name, ...(exception as object), message: (exception as { message?: string }).message });
          }
          const event = parseUpstream(provider, converseStreamEventSchema, raw);
          const start = event.contentBlockStart;
          if (start?.start?.toolUse) {
            const index = toolIndexes.size;
            toolIndexes.set(start.contentBlockIndex ?? index, index);
            yield { type: 'tool-call-delta', index, id: start.start.toolUse.toolUseId, name: start.start.toolUse.name, arguments_delta: '' };
          }
          const delta = event.contentBlockDelta?.delta;
          if (delta?.text) yield { type: 'text-delta', delta: delta.text };
          if (delta?.reasoningContent?.text && !excludeReasoning) yield { type: 'reasoning-delta', delta: delta.reasoningContent.text };
          if (delta?.reasoningContent?.signature) yield { type: 'reasoning-signature', signature: delta.reasoningContent.signature };
          if (delta?.toolUse) {
            const block = event.contentBlockDelta?.contentBlockIndex ?? -1;
            let index = toolIndexes.get(block);
            if (index === undefined) {
              index = toolIndexes.size;
              toolIndexes.set(block, index);
            }
            yield { type: 'tool-call-delta', index, arguments_delta: delta.toolUse.input };
          }
          if (event.messageStop) stopReason = event.messageStop.stopReason;
          if (event.metadata) {
            sawMetadata = true;
            usage = mapBedrockUsage(event.metadata.usage);
            serviceTier = event.metadata.serviceTier?.type ?? undefined;
          }
        }
      } catch (err) {
        throw bedrockError(provider, err, options.signal);
      }
      // The reply is complete only with both the stop reason and the usage.
      if (stopReason === undefined || !sawMetadata) {
        throw new ProviderError({ provider, kind: 'network', status: 502, message: 'Upstream stream ended before it finished' });
      }
      yield {
        type: 'finish',
        finish_reason: mapBedrockStopReason(stopReason, toolIndexes.size > 0),
        native_finish_reason: stopReason,
        usage: usage ?? emptyUsage(),
        ...(requestId ? { provider_id: requestId } : {}),
        ...(serviceTier ? { service_tier: serviceTier } : {}),
      };
    },
  };
}
