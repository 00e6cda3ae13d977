// What Converse and ConverseStream return, as the AWS SDK hands it over (already JSON-decoded and, for
// the stream, event-stream-decoded). Validated all the same: the SDK does not check shapes.
import * as z from 'zod';

const usage = z.object({
  /** Input tokens neither read from nor written to the prompt cache. */
  inputTokens: z.number().nullish(),
  outputTokens: z.number().nullish(),
  totalTokens: z.number().nullish(),
  cacheReadInputTokens: z.number().nullish(),
  cacheWriteInputTokens: z.number().nullish(),
}).nullish();

export type BedrockUsage = z.infer<typeof usage>;

const serviceTier = z.object({ type: z.string().nullish() }).nullish();

/** Content blocks the adapter reads; others (citations, images …) pass validation and are skipped. */
const contentBlock = z.object({
  text: z.string().nullish(),
  toolUse: z.object({ toolUseId: z.string(), name: z.string(), input: z.unknown() }).nullish(),
  reasoningContent: z.object({
    reasoningText: z.object({ text: z.string(), signature: z.string().nullish() }).nullish(),
    redactedContent: z.unknown().optional(),
  }).nullish(),
});

export const converseResponseSchema = z.object({
  output: z.object({
    message: z.object({ role: z.string().nullish(), content: z.array(contentBlock) }),
  }),
  stopReason: z.string(),
  usage,
  serviceTier,
  $metadata: z.object({ requestId: z.string().nullish() }).nullish(),
});
export type ConverseResponse = z.output<typeof converseResponseSchema>;

export const converseStreamEventSchema = z.object({
  messageStart: z.object({ role: z.string().nullish() }).nullish(),
  contentBlockStart: z.object({
    contentBlockIndex: z.number().int().nullish(),
    start: z.object({
      toolUse: z.object({ toolUseId: z.string(), name: z.string() }).nullish(),
    }).nullish(),
  }).nullish(),
  contentBlockDelta: z.object({
    contentBlockIndex: z.number().int().nullish(),
    delta: z.object({
      text: z.string().nullish(),
      toolUse: z.object({ input: z.string() }).nullish(),
      reasoningContent: z.object({
        text: z.string().nullish(),
        signature: z.string().nullish(),
        redactedContent: z.unknown().optional(),
      }).nullish(),
    }).nullish(),
  }).nullish(),
  contentBlockStop: z.object({ contentBlockIndex: z.number().int().nullish() }).nullish(),
  messageStop: z.object({ stopReason: z.string() }).nullish(),
  metadata: z.object({ usage, serviceTier }).nullish(),
});

/** Exceptions ConverseStream can send in place of an event (the SDK usually throws them instead). */
export const STREAM_EXCEPTION_MEMBERS = {
  internalServerException: 'InternalServerException',
  modelStreamErrorException: 'ModelStreamErrorException',
  serviceUnavailableException: 'ServiceUnavailableException',
  throttlingException: 'ThrottlingException',
  validationException: 'ValidationException',
} as const;
