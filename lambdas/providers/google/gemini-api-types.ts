// What the Gemini API (generateContent / streamGenerateContent) returns: responses, stream chunks and errors.
// Part kinds the adapter does not translate (executableCode, inlineData output …) are accepted and skipped.
import * as z from 'zod';

const part = z.object({
  text: z.string().nullish(),
  /** true on a part that carries the model's thought summary, not the answer. */
  thought: z.boolean().nullish(),
  thoughtSignature: z.string().nullish(),
  functionCall: z.object({
    id: z.string().nullish(),
    name: z.string(),
    args: z.record(z.string(), z.unknown()).nullish(),
  }).nullish(),
});

export type GeminiPart = z.infer<typeof part>;

const candidate = z.object({
  content: z.object({
    role: z.string().nullish(),
    parts: z.array(part).nullish(),
  }).nullish(),
  finishReason: z.string().nullish(),
  finishMessage: z.string().nullish(),
  index: z.number().int().nullish(),
});

const usageMetadata = z.object({
  /** All prompt tokens, cached ones included. */
  promptTokenCount: z.number().nullish(),
  /** Answer tokens, thoughts excluded. */
  candidatesTokenCount: z.number().nullish(),
  thoughtsTokenCount: z.number().nullish(),
  cachedContentTokenCount: z.number().nullish(),
  /** Prompt tokens of built-in tool results (search, code execution); billed as input. */
  toolUsePromptTokenCount: z.number().nullish(),
  totalTokenCount: z.number().nullish(),
}).nullish();

export type GeminiUsageMetadata = z.infer<typeof usageMetadata>;

const promptFeedback = z.object({
  blockReason: z.string().nullish(),
  blockReasonMessage: z.string().nullish(),
}).nullish();

const errorBody = z.object({
  code: z.number().int().nullish(),
  message: z.string().nullish(),
  status: z.string().nullish(),
  details: z.array(z.record(z.string(), z.unknown())).nullish(),
});

const responseFields = {
  candidates: z.array(candidate).nullish(),
  promptFeedback,
  usageMetadata,
  modelVersion: z.string().nullish(),
  responseId: z.string().nullish(),
};

/** A whole reply: candidates, or no candidates because the prompt was blocked. */
export const geminiResponseSchema = z.object(responseFields).refine(
  (body) => (body.candidates?.length ?? 0) > 0 || Boolean(body.promptFeedback?.blockReason),
  { message: 'a reply needs candidates or a promptFeedback.blockReason' },
);

/** One `data:` event of streamGenerateContent?alt=sse; an error can arrive in place of a chunk. */
export const geminiChunkSchema = z.object({ ...responseFields, error: errorBody.nullish() });

export const geminiErrorSchema = z.object({ error: errorBody });

export type GeminiErrorBody = z.infer<typeof errorBody>;

/** google.rpc.RetryInfo.retryDelay ("34.4s") in milliseconds, when the error carries one. */
export function geminiRetryDelayMs(error: GeminiErrorBody): number | undefined {
  for (const detail of error.details ?? []) {
    if (detail['@type'] !== 'type.googleapis.com/google.rpc.RetryInfo') continue;
    const delay = detail.retryDelay;
    if (typeof delay === 'string' && /^\d+(\.\d+)?s$/.test(delay)) return Math.ceil(Number(delay.slice(0, -1)) * 1000);
  }
  return undefined;
}

export function describeGeminiError(body: unknown): { message?: string; code?: string; retryAfterMs?: number } | undefined {
  const parsed = geminiErrorSchema.safeParse(body);
  if (!parsed.success) return undefined;
  const { message, status, code } = parsed.data.error;
  const retryAfterMs = geminiRetryDelayMs(parsed.data.error);
  return {
    ...(message ? { message } : {}),
    ...(status ? { code: status } : code !== null && code !== undefined ? { code: String(code) } : {}),
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  };
}

/** HTTP status of a google.rpc.Code name, for errors that arrive inside a stream without a usable `code`. */
export function geminiStatusCode(status: string | null | undefined): number {
  switch (status) {
    case 'INVALID_ARGUMENT':
    case 'FAILED_PRECONDITION':
    case 'OUT_OF_RANGE':
      return 400;
    case 'UNAUTHENTICATED': return 401;
    case 'PERMISSION_DENIED': return 403;
    case 'NOT_FOUND': return 404;
    case 'ABORTED':
    case 'ALREADY_EXISTS':
      return 409;
    case 'RESOURCE_EXHAUSTED': return 429;
    case 'CANCELLED': return 499;
    case 'UNIMPLEMENTED': return 501;
    case 'UNAVAILABLE': return 503;
    case 'DEADLINE_EXCEEDED': return 504;
    case 'INTERNAL':
    case 'UNKNOWN':
    case 'DATA_LOSS':
      return 500;
    default: return 502;
  }
}
