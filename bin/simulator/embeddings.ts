// Embeddings: OpenAI's POST /v1/embeddings and Gemini's POST /v1beta/models/{model}:batchEmbedContents.
// The `embed` model gives each text a deterministic unit vector (16 values unless `dimensions` /
// `outputDimensionality` asks for another length): the same text always gets the same vector, different
// texts different ones. `error-429` and `error-500` fail as the chat models do.
import { createHash } from 'node:crypto';
import { isObject, tokens, upstreamName } from './common.js';

export const DEFAULT_DIMENSIONS = 16;
const MAX_DIMENSIONS = 4096;

export interface EmbeddingsReply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** A unit vector from the text's SHA-256 chain: values in [-1, 1], then scaled to length 1. */
export function simulatedVector(text: string, dimensions = DEFAULT_DIMENSIONS): number[] {
  const values: number[] = [];
  let digest = createHash('sha256').update(text).digest();
  while (values.length < dimensions) {
    for (let i = 0; i + 1 < digest.length && values.length < dimensions; i += 2) values.push(digest.readUInt16BE(i) / 32767.5 - 1);
    digest = createHash('sha256').update(digest).digest();
  }
  const norm = Math.sqrt(values.reduce((sum, value) => sum + value * value, 0)) || 1;
  return values.map((value) => value / norm);
}

function dimensionsOf(value: unknown): number | undefined | null {
  if (value === undefined || value === null) return undefined;
  return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= MAX_DIMENSIONS ? value as number : null;
}

/** A scripted failure for the error models, or undefined for `embed`; a 404 for any other model. */
function scripted(model: string, openai: boolean): EmbeddingsReply | undefined {
  switch (upstreamName(model)) {
    case 'embed': return undefined;
    case 'error-429': return openai
      ? { status: 429, body: { error: { message: 'Rate limit reached', type: 'requests', param: null, code: 'rate_limit_exceeded' } }, headers: { 'retry-after': '1' } }
      : { status: 429, body: { error: { code: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' } }, headers: { 'retry-after': '1' } };
    case 'error-500': return openai
      ? { status: 500, body: { error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } } }
      : { status: 500, body: { error: { code: 500, message: 'An internal error has occurred.', status: 'INTERNAL' } } };
    default: return openai
      ? { status: 404, body: { error: { message: `The model \`${model}\` does not exist or you do not have access to it.`, type: 'invalid_request_error', param: null, code: 'model_not_found' } } }
      : { status: 404, body: { error: { code: 404, message: `models/${model} is not found for API version v1beta, or is not supported for embedContent.`, status: 'NOT_FOUND' } } };
  }
}

const openAiInvalid = (message: string): EmbeddingsReply => ({ status: 400, body: { error: { message, type: 'invalid_request_error', param: null, code: null } } });

/** POST /v1/embeddings. */
export function openAiEmbeddings(body: unknown): EmbeddingsReply {
  if (!isObject(body)) return openAiInvalid('The request body must be a JSON object.');
  if (typeof body.model !== 'string' || !body.model) return openAiInvalid("you must provide a model parameter");
  const input = typeof body.input === 'string' ? [body.input] : body.input;
  if (!Array.isArray(input) || input.length === 0 || !input.every((text) => typeof text === 'string' && text.length > 0)) {
    return openAiInvalid("'input' must be a non-empty string or a non-empty array of non-empty strings.");
  }
  const dimensions = dimensionsOf(body.dimensions);
  if (dimensions === null) return openAiInvalid(`'dimensions' must be an integer from 1 to ${MAX_DIMENSIONS}.`);
  const failure = scripted(body.model, true);
  if (failure) return failure;
  const texts = input as string[];
  const promptTokens = texts.reduce((sum, text) => sum + tokens(text.length), 0);
  const base64 = body.encoding_format === 'base64';
  return {
    status: 200,
    body: {
      object: 'list',
      data: texts.map((text, index) => {
        const vector = simulatedVector(text, dimensions);
        return { object: 'embedding', index, embedding: base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector };
      }),
      model: body.model,
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
    },
  };
}

/** POST /v1beta/models/{model}:batchEmbedContents (and :embedContent, one content). */
export function geminiEmbeddings(body: unknown, model: string, batch: boolean): EmbeddingsReply {
  const invalid = (message: string): EmbeddingsReply => ({ status: 400, body: { error: { code: 400, message, status: 'INVALID_ARGUMENT' } } });
  if (!isObject(body)) return invalid('Invalid JSON payload received. The request body must be a JSON object.');
  const requests = batch ? body.requests : [body];
  if (!Array.isArray(requests) || requests.length === 0) return invalid('* BatchEmbedContentsRequest.requests: requests is not specified');
  const texts: string[] = [];
  const lengths: Array<number | undefined> = [];
  for (const request of requests) {
    if (!isObject(request) || !isObject(request.content) || !Array.isArray(request.content.parts)) return invalid('* EmbedContentRequest.content: content is not specified');
    const text = request.content.parts.map((part: unknown) => (isObject(part) && typeof part.text === 'string' ? part.text : '')).join('');
    if (!text) return invalid('* EmbedContentRequest.content: content must have text');
    const dimensions = dimensionsOf(request.outputDimensionality ?? request.output_dimensionality);
    if (dimensions === null) return invalid(`* EmbedContentRequest.output_dimensionality: must be from 1 to ${MAX_DIMENSIONS}`);
    texts.push(text);
    lengths.push(dimensions);
  }
  const failure = scripted(model, false);
  if (failure) return failure;
  const embeddings = texts.map((text, i) => ({ values: simulatedVector(text, lengths[i]) }));
  return { status: 200, body: batch ? { embeddings } : { embedding: embeddings[0] } };
}
