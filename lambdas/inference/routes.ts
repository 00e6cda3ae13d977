// The inference routes (regular keys), served by the inference function.
import type { OperationsFor, RouteDef } from '../platform/http/route.js';
import { chatRequestSchema } from './formats/chat-schema.js';
import { responsesRequestSchema } from './formats/responses-schema.js';
import { messagesRequestSchema } from './formats/messages-schema.js';
import { embeddingsRequestSchema } from './formats/embeddings-schema.js';
import { speechRequestSchema } from './formats/speech-schema.js';

/** Lambda Function URLs accept request payloads up to 6 MB. */
export const INFERENCE_MAX_BODY_BYTES = 6 * 1024 * 1024;

export const inferenceRoutes = [
  {
    operationId: 'chatCompletions', method: 'POST', path: '/chat/completions', fn: 'inference', auth: 'inference',
    tag: 'Inference', summary: 'Chat completion (JSON, or SSE with stream: true)', body: chatRequestSchema, maxBodyBytes: INFERENCE_MAX_BODY_BYTES, nullFieldsAbsent: true,
  },
  {
    operationId: 'createResponse', method: 'POST', path: '/responses', fn: 'inference', auth: 'inference',
    tag: 'Inference', summary: 'Responses-format generation (JSON, or SSE with stream: true); stateless', body: responsesRequestSchema, maxBodyBytes: INFERENCE_MAX_BODY_BYTES, nullFieldsAbsent: true,
  },
  {
    operationId: 'createMessage', method: 'POST', path: '/messages', fn: 'inference', auth: 'inference', errorMetadata: 'anthropic',
    tag: 'Inference', summary: 'Anthropic Messages-format generation (JSON, or SSE with stream: true), for Anthropic SDKs', body: messagesRequestSchema, maxBodyBytes: INFERENCE_MAX_BODY_BYTES, nullFieldsAbsent: true,
  },
  {
    operationId: 'createEmbeddings', method: 'POST', path: '/embeddings', fn: 'inference', auth: 'inference',
    tag: 'Inference', summary: 'Embeddings of one text or a list of texts (OpenAI format: float or base64 vectors)', body: embeddingsRequestSchema, maxBodyBytes: INFERENCE_MAX_BODY_BYTES, nullFieldsAbsent: true,
  },
  {
    operationId: 'createSpeech', method: 'POST', path: '/audio/speech', fn: 'inference', auth: 'inference',
    tag: 'Inference', summary: 'Text to speech: raw audio streamed as it is produced (audio/mpeg for mp3, audio/pcm 24 kHz 16-bit little-endian for pcm); priced per input character',
    body: speechRequestSchema, maxBodyBytes: INFERENCE_MAX_BODY_BYTES, nullFieldsAbsent: true,
  },
] as const satisfies readonly RouteDef[];

export type InferenceOperations = OperationsFor<typeof inferenceRoutes>;
