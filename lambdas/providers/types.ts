// The one internal model every inbound format (Chat Completions, Responses) is translated into, and
// every provider adapter translates out of: N inbound formats + M providers, not N × M.

export interface CacheControl {
  type: 'ephemeral';
  ttl?: string;
}

export type ContentPart =
  | { type: 'text'; text: string; cache_control?: CacheControl }
  /** An image by https URL or data URL (data:image/png;base64,...). */
  | { type: 'image'; url: string; detail?: 'auto' | 'low' | 'high' }
  /** Audio given inline, base64. */
  | { type: 'audio'; data: string; format: string }
  /** A file (e.g. PDF) by data URL or URL. */
  | { type: 'file'; filename?: string; url: string };

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text of the arguments, as the model produced it. */
  arguments: string;
}

export type Message =
  | { role: 'system'; content: ContentPart[] }
  | { role: 'user'; content: ContentPart[]; name?: string }
  | { role: 'assistant'; content: ContentPart[]; tool_calls?: ToolCall[]; reasoning?: string; reasoning_signature?: string; name?: string }
  | { role: 'tool'; tool_call_id: string; content: ContentPart[] };

export interface FunctionTool {
  name: string;
  description?: string;
  /** JSON Schema of the arguments object. */
  parameters?: Record<string, unknown>;
  strict?: boolean;
}

export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean; description?: string };

export type ReasoningEffort = 'max' | 'xhigh' | 'high' | 'medium' | 'low' | 'minimal' | 'none';

export interface ReasoningConfig {
  effort?: ReasoningEffort;
  max_tokens?: number;
  exclude?: boolean;
  summary?: 'auto' | 'concise' | 'detailed';
}

/** An embeddings request: the texts, in order, and the vectors' length where the model can choose it. */
export interface EmbeddingInput {
  input: string[];
  dimensions?: number;
  /** What the texts are for (search_query, search_document, classification, clustering), where a model distinguishes. */
  inputType?: string;
}

/** A reference part of a speech request (SPEC's reference content), as the caller sent it. */
export type SpeechReferencePart =
  | { type: 'input_audio'; input_audio: { data: string; format?: string | undefined } }
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string } };

/** A text-to-speech request (POST /audio/speech): the text, how to voice it, and any reference content. */
export interface SpeechInput {
  input: string;
  /** The endpoint's voice id (its default one when the request named none). */
  voice: string | undefined;
  format: 'mp3' | 'pcm';
  speed?: number;
  /** How to say it (OpenAI's gpt-4o-mini-tts); routing sends it only to endpoints that take it. */
  instructions?: string;
  /** Reference clips (with their transcripts) or one image; empty: none. */
  references: SpeechReferencePart[];
  /** The caller's provider-specific options, by provider slug (provider.options). */
  optionsByProvider?: Record<string, Record<string, unknown>>;
  /** The serving provider's options of those (set per endpoint when the request goes out). */
  options?: Record<string, unknown>;
}

export interface GenerationRequest {
  /** The provider's own model id (the router has resolved it). */
  model: string;
  /**
   * Set for an embeddings request (POST /embeddings): the adapter's generate() asks the provider's embeddings
   * API for one vector per input and answers with `embeddings`; `messages` then hold the inputs as text (so
   * the prompt estimate and the reservation count them like any prompt).
   */
  embedding?: EmbeddingInput;
  /**
   * Set for a speech request (POST /audio/speech): the adapter's stream() yields the audio as it arrives
   * (`audio` events); `messages` then hold the input as text, so the reservation counts its characters.
   */
  speech?: SpeechInput;
  messages: Message[];
  tools?: FunctionTool[];
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean;
  max_output_tokens?: number;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  repetition_penalty?: number;
  min_p?: number;
  seed?: number;
  stop?: string[];
  logprobs?: boolean;
  top_logprobs?: number;
  logit_bias?: Record<string, number>;
  response_format?: ResponseFormat;
  reasoning?: ReasoningConfig;
  /** Hashed end-user identity; never a raw user id. */
  user?: string;
  service_tier?: string;
}

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  /** Input tokens read from the provider's prompt cache (part of input_tokens). */
  cached_input_tokens: number;
  /** Input tokens written to the provider's prompt cache (part of input_tokens). */
  cache_write_tokens: number;
  /** Output tokens spent on reasoning (part of output_tokens). */
  reasoning_tokens: number;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'error';

export interface GenerationResult {
  /** The provider's id of the generation, if it gave one. */
  provider_id?: string;
  text: string;
  reasoning?: string;
  /** The provider's signature over the reasoning (Anthropic thinking, Gemini thought signature, Bedrock): sent back on the next turn. */
  reasoning_signature?: string;
  tool_calls: ToolCall[];
  finish_reason: FinishReason;
  /** The provider's own finish reason, before mapping. */
  native_finish_reason?: string;
  usage: Usage;
  service_tier?: string;
  /** An embeddings request's vectors, one per input in input order. */
  embeddings?: number[][];
  /** The provider reported no token count: usage.input_tokens is the gateway's estimate (about 4 characters a token). */
  usage_estimated?: boolean;
}

export type StreamEvent =
  | { type: 'text-delta'; delta: string }
  /** Bytes of a speech reply's audio, as the provider sent them. */
  | { type: 'audio'; data: Uint8Array }
  | { type: 'reasoning-delta'; delta: string }
  | { type: 'reasoning-signature'; signature: string }
  /** A tool call starts (id and name known) or continues (arguments fragment); `index` orders calls in the reply. */
  | { type: 'tool-call-delta'; index: number; id?: string; name?: string; arguments_delta: string }
  | { type: 'finish'; finish_reason: FinishReason; native_finish_reason?: string; usage: Usage; provider_id?: string; service_tier?: string };

export interface CallOptions {
  signal?: AbortSignal;
  /** Given the JSON body the adapter sends upstream, just before it goes (a request's debug.echo_upstream_body). */
  onBody?: (body: unknown) => void;
}

/** A provider adapter: one wire format, translated both ways. Factories take settings and an injectable fetch. */
export interface ProviderAdapter {
  /** Provider slug, e.g. openai, anthropic, google, amazon-bedrock, groq. */
  readonly provider: string;
  generate(request: GenerationRequest, options?: CallOptions): Promise<GenerationResult>;
  /** Events in order; ends after one `finish`. Throws ProviderError on failure (also mid-stream). */
  stream(request: GenerationRequest, options?: CallOptions): AsyncIterable<StreamEvent>;
}

/** What adapters need of an HTTP response: the global fetch's Response satisfies it, and so does the lean node:http client. */
export interface UpstreamResponse {
  status: number;
  ok: boolean;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
  json(): Promise<unknown>;
  /** The body as bytes arriving; a WHATWG ReadableStream (fetch) or a Node stream, both async-iterable. */
  body: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array> | null;
}

export interface UpstreamRequestInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal | undefined;
}

export type FetchLike = (input: string | URL, init?: UpstreamRequestInit) => Promise<UpstreamResponse>;

export const emptyUsage = (): Usage => ({ input_tokens: 0, output_tokens: 0, cached_input_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 });
