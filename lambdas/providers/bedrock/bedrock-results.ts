// What Bedrock answers, as the gateway's own terms: a Converse response as the internal result, its usage,
// and its errors as ProviderErrors. Apart from the adapter (which loads the runtime SDK) so that the batch
// steps can read a batch job's output without it.
import { ProviderError, parseRetryAfter } from '../provider-error.js';
import { transportError } from '../http.js';
import type { GenerationResult, ToolCall, Usage } from '../types.js';
import { mapBedrockStopReason } from './map-bedrock-stop-reason.js';
import type { BedrockUsage, ConverseResponse } from './bedrock-converse-api-types.js';

/**
 * Bedrock reports inputTokens without the cached part: prompt-cache reads and writes come separately
 * (cacheReadInputTokens, cacheWriteInputTokens) and are billed at their own rates. Internal input_tokens
 * counts all three. Bedrock does not break reasoning tokens out of outputTokens.
 */
export function mapBedrockUsage(usage: BedrockUsage): Usage {
  const cacheRead = usage?.cacheReadInputTokens ?? 0;
  const cacheWrite = usage?.cacheWriteInputTokens ?? 0;
  return {
    input_tokens: (usage?.inputTokens ?? 0) + cacheRead + cacheWrite,
    output_tokens: usage?.outputTokens ?? 0,
    cached_input_tokens: cacheRead,
    cache_write_tokens: cacheWrite,
    reasoning_tokens: 0,
  };
}

/** HTTP status of each Bedrock Runtime exception (from the API reference), for errors without one (stream exceptions). */
export const EXCEPTION_STATUS: Record<string, number> = {
  ValidationException: 400,
  ServiceQuotaExceededException: 400,
  ConflictException: 400,
  AccessDeniedException: 403,
  ResourceNotFoundException: 404,
  ModelTimeoutException: 408,
  ThrottlingException: 429,
  ModelNotReadyException: 429,
  ModelErrorException: 424,
  InternalServerException: 500,
  ServiceUnavailableException: 503,
  // Documented as 424 with "retry your request": reported as an upstream failure so it stays retryable.
  ModelStreamErrorException: 502,
};

interface SdkError {
  name?: string;
  message?: string;
  $fault?: 'client' | 'server';
  $metadata?: { httpStatusCode?: number };
  $response?: { headers?: Record<string, string> };
}

/** An SDK error (thrown, or sent as a stream exception) → ProviderError with Bedrock's message and exception name. */
export function bedrockError(provider: string, err: unknown, signal?: AbortSignal): ProviderError {
  if (err instanceof ProviderError) return err;
  if (signal?.aborted) return transportError(provider, err, signal);
  const sdk = (err ?? {}) as SdkError;
  const httpStatus = sdk.$metadata?.httpStatusCode;
  const name = sdk.name ?? '';
  const status = httpStatus !== undefined && httpStatus >= 400
    ? httpStatus
    : EXCEPTION_STATUS[name] ?? (sdk.$fault === 'client' ? 400 : sdk.$fault === 'server' ? 500 : undefined);
  if (status !== undefined) {
    const headers = sdk.$response?.headers;
    const retryAfterMs = headers ? parseRetryAfter(new Headers(headers)) : undefined;
    return new ProviderError({
      provider, kind: 'http', status, message: sdk.message || `Bedrock ${name || 'error'}`,
      ...(name ? { providerCode: name } : {}),
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      cause: err,
    });
  }
  // A 2xx whose body the SDK could not decode.
  if (name === 'SyntaxError' || (httpStatus !== undefined && httpStatus < 300)) {
    return new ProviderError({ provider, kind: 'invalid-response', status: 502, message: `Upstream reply could not be decoded: ${(sdk.message ?? name).split('\n')[0]}`, cause: err });
  }
  return transportError(provider, err, signal);
}

/** A Converse response (live, or a Bedrock batch job's modelOutput) as the internal result. */
export function converseResult(body: ConverseResponse, excludeReasoning: boolean): GenerationResult {
  let text = '';
  let reasoning = '';
  const toolCalls: ToolCall[] = [];
  let signature: string | undefined;
  for (const block of body.output.message.content) {
    if (block.text) text += block.text;
    if (block.reasoningContent?.reasoningText) {
      reasoning += block.reasoningContent.reasoningText.text;
      signature = block.reasoningContent.reasoningText.signature ?? signature;
    }
    if (block.toolUse) toolCalls.push({ id: block.toolUse.toolUseId, name: block.toolUse.name, arguments: JSON.stringify(block.toolUse.input ?? {}) });
  }
  const requestId = body.$metadata?.requestId;
  const serviceTier = body.serviceTier?.type;
  return {
    text,
    ...(requestId ? { provider_id: requestId } : {}),
    ...(reasoning && !excludeReasoning ? { reasoning } : {}),
    ...(signature ? { reasoning_signature: signature } : {}),
    tool_calls: toolCalls,
    finish_reason: mapBedrockStopReason(body.stopReason, toolCalls.length > 0),
    native_finish_reason: body.stopReason,
    usage: mapBedrockUsage(body.usage),
    ...(serviceTier ? { service_tier: serviceTier } : {}),
  };
}
