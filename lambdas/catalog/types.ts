// The model catalog: gateway models, each served by one or more provider endpoints with their own prices.
import type { Nanos } from '../platform/money.js';
import type { Pricing } from '../billing/cost.js';

export type AdapterKind = 'openai-chat' | 'openai-responses' | 'anthropic' | 'gemini' | 'bedrock' | 'openai-speech' | 'elevenlabs';

/** The speech adapters: their endpoints answer POST /audio/speech only. */
export const SPEECH_ADAPTERS: ReadonlySet<AdapterKind> = new Set(['openai-speech', 'elevenlabs']);

export type AudioFormat = 'mp3' | 'pcm';

/** What a text-to-speech endpoint can do (its pricing.prompt is per input character). */
export interface SpeechCapabilities {
  /** Voices it knows; the first is used when a request names none. */
  voices: string[];
  /** Any voice id goes (an account's own voices, as ElevenLabs'): `voices` are then only the known ones. */
  any_voice: boolean;
  formats: AudioFormat[];
  /** The playback speeds it honours; null: no speed control (a non-default speed is refused). */
  speed: { min: number; max: number } | null;
  /** Stateless voice cloning from one reference clip (input_references with input_audio). */
  voice_cloning: boolean;
  /** Up to three reference clips in one request. */
  multiple_references: boolean;
  /** A voice designed from one reference image (input_references with image_url). */
  image_references: boolean;
  /** Longest input, in characters. */
  max_characters: number;
}

/** Prices per token (or per request) in nano-dollars; exact, possibly zero. */
/** What an endpoint charges (billing/cost.ts prices a generation from it). */
export type EndpointPricing = Pricing;

export interface CatalogEndpoint {
  /** Gateway model id this endpoint serves, e.g. simulator/echo. */
  model: string;
  /** Provider slug, e.g. simulator, openai, anthropic. */
  provider: string;
  provider_name: string;
  adapter: AdapterKind;
  /** Base URL of the provider API (unused for Bedrock). */
  base_url?: string;
  /** Name of the credential (environment variable locally, secret key on AWS); none for Bedrock (IAM role). */
  credential?: string;
  upstream_model: string;
  pricing: EndpointPricing;
  context_length: number;
  max_completion_tokens: number | null;
  /** OpenRouter parameter names this endpoint honours (max_tokens, temperature, tools …). */
  supported_parameters: string[];
  input_modalities: string[];
  output_modalities: string[];
  service_tiers: string[];
  data_collection: 'allow' | 'deny';
  /** Typical tokens per second and first-token latency, for sort by throughput / latency. */
  throughput_tps: number;
  latency_ms: number;
  /**
   * The provider's own batch service for this endpoint (OpenAI's Batch API on an openai-chat endpoint,
   * Anthropic's Message Batches on an anthropic one): a batch of this model runs there, at its discount.
   */
  batch_api?: 'openai' | 'anthropic' | 'bedrock';
  /** Percent off every price for requests run through batch_api (both providers: 50; none when absent). */
  batch_discount_percent?: number;
  /** Set on text-to-speech endpoints (output_modalities ["audio"]): what they can do. */
  speech?: SpeechCapabilities;
}

export interface CatalogModel {
  id: string;
  name: string;
  description: string;
  created: number;
  /** Use cases it is listed under (GET /models?category=); none: listed under none. */
  categories?: string[];
  endpoints: CatalogEndpoint[];
}

export interface Catalog {
  models: CatalogModel[];
  byId: Map<string, CatalogModel>;
}

export function endpointKey(endpoint: Pick<CatalogEndpoint, 'model' | 'provider'>): string {
  return `${endpoint.model}@${endpoint.provider}`;
}

/** The endpoint an endpointKey names, if the catalog still has it. */
export function endpointByKey(catalog: Catalog, key: string): CatalogEndpoint | undefined {
  const at = key.lastIndexOf('@');
  return catalog.byId.get(key.slice(0, at))?.endpoints.find((endpoint) => endpoint.provider === key.slice(at + 1));
}
