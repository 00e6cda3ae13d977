// Builds the catalog from configuration: the simulator (when SIMULATOR_URL is set), the providers whose
// credentials are present, and a JSON catalog file (GATEWAY_CATALOG_FILE) for anything else.
import { readFileSync } from 'node:fs';
import * as z from 'zod';
import { usdToNanos } from '../platform/money.js';
import { SPEECH_ADAPTERS, type AdapterKind, type Catalog, type CatalogEndpoint, type CatalogModel } from './types.js';

const price = z.union([z.string(), z.number()]).transform((value, ctx) => {
  try {
    return usdToNanos(value);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
    return z.NEVER;
  }
});

/** The adapter each provider batch service goes with. */
const BATCH_API_ADAPTER: Record<'openai' | 'anthropic' | 'bedrock', string> = { openai: 'openai-chat', anthropic: 'anthropic', bedrock: 'bedrock' };

const endpointConfig = z.object({
  provider: z.string().min(1),
  provider_name: z.string().optional(),
  adapter: z.enum(['openai-chat', 'openai-responses', 'anthropic', 'gemini', 'bedrock', 'openai-speech', 'elevenlabs']),
  base_url: z.string().url().optional(),
  credential: z.string().optional(),
  upstream_model: z.string().min(1),
  pricing: z.object({
    prompt: price, completion: price, request: price.optional(), input_cache_read: price.optional(),
    input_cache_write: price.optional(), internal_reasoning: price.optional(),
  }),
  context_length: z.number().int().positive(),
  max_completion_tokens: z.number().int().positive().nullable().optional(),
  supported_parameters: z.array(z.string()).optional(),
  input_modalities: z.array(z.string()).optional(),
  output_modalities: z.array(z.string()).optional(),
  service_tiers: z.array(z.string()).optional(),
  data_collection: z.enum(['allow', 'deny']).optional(),
  throughput_tps: z.number().positive().optional(),
  latency_ms: z.number().nonnegative().optional(),
  batch_api: z.enum(['openai', 'anthropic', 'bedrock']).optional(),
  batch_discount_percent: z.number().int().min(0).max(100).optional(),
  speech: z.object({
    voices: z.array(z.string().min(1)).min(1),
    any_voice: z.boolean().optional(),
    formats: z.array(z.enum(['mp3', 'pcm'])).min(1),
    speed: z.object({ min: z.number().positive(), max: z.number().positive() }).nullable().optional(),
    voice_cloning: z.boolean().optional(),
    multiple_references: z.boolean().optional(),
    image_references: z.boolean().optional(),
    max_characters: z.number().int().positive().optional(),
  }).optional(),
}).refine(
  (endpoint) => (endpoint.speech !== undefined) === SPEECH_ADAPTERS.has(endpoint.adapter as AdapterKind),
  { message: 'a speech endpoint (adapter openai-speech or elevenlabs) needs `speech` (voices, formats …), and only a speech endpoint has it', path: ['speech'] },
).refine(
  // Priced per input character (pricing.prompt); the audio itself costs nothing more.
  (endpoint) => endpoint.speech === undefined || endpoint.pricing.completion === 0n,
  { message: 'a speech endpoint is priced per input character (pricing.prompt): pricing.completion must be 0', path: ['pricing', 'completion'] },
).refine(
  (endpoint) => endpoint.batch_api === undefined || endpoint.adapter === BATCH_API_ADAPTER[endpoint.batch_api],
  { message: 'batch_api "openai" needs the openai-chat adapter, "anthropic" the anthropic adapter, "bedrock" the bedrock adapter', path: ['batch_api'] },
).refine(
  // Bedrock's batch jobs run Converse requests here (chat), not embeddings.
  (endpoint) => endpoint.batch_api !== 'bedrock' || !endpoint.output_modalities?.includes('embeddings'),
  { message: 'batch_api "bedrock" runs chat models, not embeddings', path: ['batch_api'] },
);

/** The adapters that can answer an embeddings request (OpenAI-compatible /embeddings, Gemini, Bedrock). */
const EMBEDDING_ADAPTERS: ReadonlySet<string> = new Set(['openai-chat', 'gemini', 'bedrock']);

const modelConfig = z.object({
  id: z.string().regex(/^[a-z0-9][a-z0-9._-]*\/[a-zA-Z0-9._:-]+$/, 'model ids look like vendor/name'),
  name: z.string().optional(),
  description: z.string().optional(),
  created: z.number().int().optional(),
  /** Use cases GET /models?category= finds it under (OpenRouter's: programming, roleplay, translation …). */
  categories: z.array(z.string().regex(/^[a-z0-9][a-z0-9/_-]*$/, 'categories are lowercase words (e.g. programming, marketing/seo)').max(64)).max(32).optional(),
  endpoints: z.array(endpointConfig.refine(
    // An embeddings request reserves no output: its endpoint must not price any.
    (endpoint) => !endpoint.output_modalities?.includes('embeddings') || endpoint.pricing.completion === 0n,
    { message: 'an embeddings endpoint (output_modalities ["embeddings"]) is priced by its input only: pricing.completion must be 0', path: ['pricing', 'completion'] },
  ).refine(
    (endpoint) => !endpoint.output_modalities?.includes('embeddings') || EMBEDDING_ADAPTERS.has(endpoint.adapter),
    { message: `an embeddings endpoint needs an adapter with an embeddings API: ${['openai-chat', 'gemini', 'bedrock'].join(', ')}`, path: ['adapter'] },
  )).min(1),
});

export const catalogFileSchema = z.object({ models: z.array(modelConfig) });
export type CatalogFile = z.input<typeof catalogFileSchema>;

/**
 * What an endpoint takes, by its adapter, when the catalog does not say (OpenRouter's parameter names): what
 * each adapter sends on (its `supportedParameters`; test/unit/catalog-parameters.test.ts keeps the two
 * lists together). A request's other parameters are left out for that endpoint, and
 * `provider.require_parameters` skips it.
 */
const TEXT_PARAMETERS: Record<Exclude<AdapterKind, 'openai-speech' | 'elevenlabs'>, readonly string[]> = {
  'openai-chat': ['max_tokens', 'temperature', 'top_p', 'stop', 'frequency_penalty', 'presence_penalty', 'seed', 'tools', 'tool_choice', 'parallel_tool_calls', 'response_format', 'structured_outputs', 'reasoning', 'include_reasoning', 'logprobs', 'top_logprobs', 'logit_bias', 'top_k', 'min_p', 'repetition_penalty', 'user'],
  'openai-responses': ['max_tokens', 'temperature', 'top_p', 'tools', 'tool_choice', 'parallel_tool_calls', 'response_format', 'structured_outputs', 'reasoning', 'include_reasoning', 'top_logprobs', 'user'],
  anthropic: ['max_tokens', 'temperature', 'top_p', 'top_k', 'stop', 'tools', 'tool_choice', 'parallel_tool_calls', 'response_format', 'structured_outputs', 'reasoning', 'include_reasoning', 'user'],
  gemini: ['max_tokens', 'temperature', 'top_p', 'top_k', 'stop', 'frequency_penalty', 'presence_penalty', 'seed', 'tools', 'tool_choice', 'response_format', 'structured_outputs', 'reasoning', 'include_reasoning'],
  bedrock: ['max_tokens', 'temperature', 'top_p', 'top_k', 'stop', 'tools', 'tool_choice', 'response_format', 'structured_outputs', 'reasoning', 'include_reasoning'],
};
export const defaultTextParameters = (adapter: AdapterKind): readonly string[] => TEXT_PARAMETERS[adapter as keyof typeof TEXT_PARAMETERS] ?? TEXT_PARAMETERS['openai-chat'];

/** What a speech endpoint's request may set, by what it declares. */
function speechParameters(speech: NonNullable<z.output<typeof endpointConfig>['speech']>): string[] {
  return [
    'voice', 'response_format',
    ...(speech.speed ? ['speed'] : []),
    ...(speech.voice_cloning || speech.image_references ? ['input_references'] : []),
  ];
}

export function buildCatalog(file: z.output<typeof catalogFileSchema>): Catalog {
  const models: CatalogModel[] = file.models.map((model) => ({
    id: model.id,
    name: model.name ?? model.id,
    description: model.description ?? '',
    created: model.created ?? 1767225600,
    ...(model.categories ? { categories: model.categories } : {}),
    endpoints: model.endpoints.map((endpoint): CatalogEndpoint => ({
      model: model.id,
      provider: endpoint.provider,
      provider_name: endpoint.provider_name ?? endpoint.provider,
      adapter: endpoint.adapter as AdapterKind,
      ...(endpoint.base_url ? { base_url: endpoint.base_url } : {}),
      ...(endpoint.credential ? { credential: endpoint.credential } : {}),
      upstream_model: endpoint.upstream_model,
      pricing: {
        prompt: endpoint.pricing.prompt,
        completion: endpoint.pricing.completion,
        request: endpoint.pricing.request ?? 0n,
        input_cache_read: endpoint.pricing.input_cache_read ?? endpoint.pricing.prompt,
        input_cache_write: endpoint.pricing.input_cache_write ?? endpoint.pricing.prompt,
        internal_reasoning: endpoint.pricing.internal_reasoning ?? endpoint.pricing.completion,
      },
      context_length: endpoint.context_length,
      max_completion_tokens: endpoint.max_completion_tokens ?? null,
      supported_parameters: endpoint.supported_parameters ?? (endpoint.speech ? speechParameters(endpoint.speech) : [...defaultTextParameters(endpoint.adapter as AdapterKind)]),
      input_modalities: endpoint.input_modalities ?? ['text'],
      output_modalities: endpoint.output_modalities ?? ['text'],
      service_tiers: endpoint.service_tiers ?? ['default'],
      data_collection: endpoint.data_collection ?? 'deny',
      throughput_tps: endpoint.throughput_tps ?? 50,
      latency_ms: endpoint.latency_ms ?? 500,
      ...(endpoint.batch_api ? { batch_api: endpoint.batch_api } : {}),
      ...(endpoint.batch_api ? { batch_discount_percent: endpoint.batch_discount_percent ?? 50 } : {}),
      ...(endpoint.speech ? {
        speech: {
          voices: endpoint.speech.voices,
          any_voice: endpoint.speech.any_voice ?? false,
          formats: endpoint.speech.formats,
          speed: endpoint.speech.speed ?? null,
          voice_cloning: endpoint.speech.voice_cloning ?? false,
          multiple_references: endpoint.speech.multiple_references ?? false,
          image_references: endpoint.speech.image_references ?? false,
          max_characters: endpoint.speech.max_characters ?? 4096,
        },
      } : {}),
    })),
  }));
  const byId = new Map<string, CatalogModel>();
  for (const model of models) {
    if (byId.has(model.id)) throw new Error(`catalog lists model ${model.id} twice`);
    byId.set(model.id, model);
  }
  return { models, byId };
}

/** The simulator's models as `npm start` offers them: every one priced so that cost is non-zero. */
export function simulatorCatalog(baseUrl: string): CatalogFile {
  const url = baseUrl.replace(/\/+$/, '');
  const endpoint = (upstream: string, adapter: AdapterKind = 'openai-chat', provider = 'simulator', batchApi?: 'openai' | 'anthropic' | 'bedrock') => ({
    ...(batchApi ? { batch_api: batchApi } : {}),
    provider,
    provider_name: provider === 'simulator' ? 'Simulator' : `Simulator (${adapter})`,
    adapter,
    base_url: adapter === 'gemini' ? `${url}/v1beta` : adapter === 'bedrock' ? `${url}/bedrock` : `${url}/v1`,
    upstream_model: upstream,
    pricing: { prompt: '0.000001', completion: '0.000002', request: '0' },
    context_length: 131072,
    max_completion_tokens: 16384,
    input_modalities: ['text', 'image'],
    service_tiers: ['default', 'priority', 'flex'],
  });
  const embeddings = (upstream: string, adapter: AdapterKind = 'openai-chat', provider = 'simulator') => ({
    ...endpoint(upstream, adapter, provider),
    pricing: { prompt: '0.0000001', completion: '0', request: '0' },
    context_length: 8192,
    max_completion_tokens: null,
    supported_parameters: ['dimensions', 'encoding_format', 'user'],
    input_modalities: ['text'],
    output_modalities: ['embeddings'],
    service_tiers: ['default'],
  });
  const speech = (upstream: string, adapter: AdapterKind, provider = 'simulator', capabilities: Partial<z.input<typeof endpointConfig>['speech']> = {}) => ({
    ...endpoint(upstream, adapter, provider),
    // $15 per million characters, as OpenAI's tts-1.
    pricing: { prompt: '0.000015', completion: '0', request: '0' },
    context_length: 4096,
    max_completion_tokens: null,
    input_modalities: ['text'],
    output_modalities: ['audio'],
    service_tiers: ['default'],
    speech: { voices: ['alloy', 'echo', 'nova', 'shimmer'], formats: ['mp3', 'pcm'] as Array<'mp3' | 'pcm'>, max_characters: 4096, ...capabilities },
  });
  const model = (id: string, description: string, endpoints: Array<ReturnType<typeof endpoint> | ReturnType<typeof embeddings> | ReturnType<typeof speech>>) => ({ id, name: `Simulator: ${id.split('/')[1]}`, description, endpoints });
  return {
    models: [
      model('simulator/echo', 'Replies with the last user message verbatim.', [endpoint('echo')]),
      model('simulator/echo-anthropic', 'Echo through the Anthropic Messages wire format.', [endpoint('echo', 'anthropic', 'simulator-anthropic')]),
      model('simulator/echo-gemini', 'Echo through the Gemini wire format.', [endpoint('echo', 'gemini', 'simulator-gemini')]),
      model('simulator/echo-responses', 'Echo through the OpenAI Responses wire format.', [endpoint('echo', 'openai-responses', 'simulator-responses')]),
      model('simulator/echo-batch', 'Echo; batches of it run through the simulator\'s OpenAI Batch API, at half price.', [endpoint('echo', 'openai-chat', 'simulator-batch', 'openai')]),
      model('simulator/echo-anthropic-batch', 'Echo through the Anthropic wire format; batches of it run through the simulator\'s Message Batches, at half price.', [endpoint('echo', 'anthropic', 'simulator-anthropic-batch', 'anthropic')]),
      model('simulator/echo-bedrock-batch', 'Echo through Bedrock Converse (not streamed); batches of 100 or more run as Bedrock batch inference jobs, at half price.', [endpoint('echo', 'bedrock', 'simulator-bedrock-batch', 'bedrock')]),
      model('simulator/tool-call', 'Calls the first declared tool with the last user message.', [endpoint('tool-call')]),
      model('simulator/error-429', 'Always rate limited (429 with Retry-After).', [endpoint('error-429')]),
      model('simulator/error-500', 'Always fails with 500.', [endpoint('error-500')]),
      model('simulator/timeout', 'Accepts the request and never answers.', [endpoint('timeout')]),
      model('simulator/cut-stream', 'Drops the connection in the middle of the reply.', [endpoint('cut-stream')]),
      model('simulator/embed', 'Embeddings: a deterministic unit vector per text (OpenAI embeddings wire format).', [embeddings('embed')]),
      model('simulator/embed-gemini', 'Embeddings through Gemini\'s batchEmbedContents.', [embeddings('embed', 'gemini', 'simulator-gemini')]),
      model('simulator/tts', 'Text to speech (OpenAI\'s audio/speech wire format): MP3 or PCM of about 60 ms a character; speed 0.25-4.', [speech('tts-echo', 'openai-speech', 'simulator', { speed: { min: 0.25, max: 4 } })]),
      model('simulator/tts-clone', 'Text to speech with stateless voice cloning from one to three reference clips, or a voice from one reference image.', [speech('tts-echo', 'openai-speech', 'simulator', { speed: { min: 0.25, max: 4 }, voice_cloning: true, multiple_references: true, image_references: true })]),
      model('simulator/tts-elevenlabs', 'Text to speech through ElevenLabs\' streaming wire format (MP3 44.1 kHz, PCM 24 kHz); speed 0.7-1.2; any voice id.', [speech('tts-echo', 'elevenlabs', 'simulator-elevenlabs', { speed: { min: 0.7, max: 1.2 }, any_voice: true })]),
      model('simulator/tts-fixed-speed', 'Text to speech without speed control.', [speech('tts-echo', 'openai-speech', 'simulator', { speed: null })]),
      model('simulator/tts-error-500', 'Text to speech that always fails with 500.', [speech('error-500', 'openai-speech')]),
    ],
  };
}

const OPENAI_VOICES = ['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer', 'verse'];

/** Real providers enabled by their credentials: a small default set each; extend with GATEWAY_CATALOG_FILE. */
export function providerCatalog(env: NodeJS.ProcessEnv): CatalogFile {
  const models: CatalogFile['models'] = [];
  const chat = (id: string, provider: string, adapter: AdapterKind, baseUrl: string | undefined, credential: string | undefined, upstream: string, prompt: string, completion: string, context: number, maxOut: number) => ({
    id, endpoints: [{
      provider, adapter, ...(baseUrl ? { base_url: baseUrl } : {}), ...(credential ? { credential } : {}), upstream_model: upstream, pricing: { prompt, completion }, context_length: context, max_completion_tokens: maxOut, input_modalities: ['text', 'image'],
      // OpenAI's, Anthropic's and Bedrock's own endpoints run batches through their batch services (half price).
      ...(provider === 'openai' && adapter === 'openai-chat' ? { batch_api: 'openai' as const } : provider === 'anthropic' ? { batch_api: 'anthropic' as const } : adapter === 'bedrock' ? { batch_api: 'bedrock' as const } : {}),
    }],
  });
  const tts = (id: string, provider: string, adapter: AdapterKind, baseUrl: string, credential: string, upstream: string, perCharacter: string, voices: string[], speed: { min: number; max: number }, maxCharacters: number, anyVoice = false) => ({
    id, endpoints: [{
      provider, adapter, base_url: baseUrl, credential, upstream_model: upstream, pricing: { prompt: perCharacter, completion: '0' }, context_length: maxCharacters, max_completion_tokens: null,
      input_modalities: ['text'], output_modalities: ['audio'],
      speech: { voices, any_voice: anyVoice, formats: ['mp3' as const, 'pcm' as const], speed, max_characters: maxCharacters },
    }],
  });
  const embed = (id: string, provider: string, adapter: AdapterKind, baseUrl: string | undefined, credential: string | undefined, upstream: string, prompt: string, context: number) => ({
    id, endpoints: [{
      provider, adapter, ...(baseUrl ? { base_url: baseUrl } : {}), ...(credential ? { credential } : {}), upstream_model: upstream, pricing: { prompt, completion: '0' },
      context_length: context, max_completion_tokens: null, supported_parameters: ['dimensions', 'encoding_format', 'user'], input_modalities: ['text'], output_modalities: ['embeddings'],
    }],
  });
  if (env.OPENAI_API_KEY) {
    const base = env.OPENAI_BASE_URL || 'https://api.openai.com/v1';
    models.push(chat('openai/gpt-4.1-mini', 'openai', 'openai-chat', base, 'OPENAI_API_KEY', 'gpt-4.1-mini', '0.0000004', '0.0000016', 1047576, 32768));
    models.push(chat('openai/gpt-4o-mini', 'openai', 'openai-chat', base, 'OPENAI_API_KEY', 'gpt-4o-mini', '0.00000015', '0.0000006', 128000, 16384));
    models.push(embed('openai/text-embedding-3-small', 'openai', 'openai-chat', base, 'OPENAI_API_KEY', 'text-embedding-3-small', '0.00000002', 8191));
    models.push(tts('openai/tts-1', 'openai', 'openai-speech', base, 'OPENAI_API_KEY', 'tts-1', '0.000015', OPENAI_VOICES, { min: 0.25, max: 4 }, 4096));
    models.push(tts('openai/gpt-4o-mini-tts', 'openai', 'openai-speech', base, 'OPENAI_API_KEY', 'gpt-4o-mini-tts', '0.000012', OPENAI_VOICES, { min: 0.25, max: 4 }, 4096));
  }
  if (env.ELEVENLABS_API_KEY) {
    // Voice ids of ElevenLabs' default voices (Rachel, Adam, Bella); any voice id of the account works.
    models.push(tts('elevenlabs/flash-v2.5', 'elevenlabs', 'elevenlabs', env.ELEVENLABS_BASE_URL || 'https://api.elevenlabs.io/v1', 'ELEVENLABS_API_KEY', 'eleven_flash_v2_5', '0.00005', ['21m00Tcm4TlvDq8ikWAM', 'pNInz6obpgDQGcFmaJgB', 'EXAVITQu4vr4xnSDxMaL'], { min: 0.7, max: 1.2 }, 40000, true));
  }
  if (env.ANTHROPIC_API_KEY) {
    models.push(chat('anthropic/claude-sonnet-4.5', 'anthropic', 'anthropic', env.ANTHROPIC_BASE_URL || 'https://api.anthropic.com/v1', 'ANTHROPIC_API_KEY', 'claude-sonnet-4-5', '0.000003', '0.000015', 200000, 64000));
    models.push(chat('anthropic/claude-haiku-4.5', 'anthropic', 'anthropic', env.ANTHROPIC_BASE_URL || 'https://api.anthropic.com/v1', 'ANTHROPIC_API_KEY', 'claude-haiku-4-5', '0.000001', '0.000005', 200000, 64000));
  }
  const geminiKey = env.GEMINI_API_KEY ? 'GEMINI_API_KEY' : env.GOOGLE_API_KEY ? 'GOOGLE_API_KEY' : undefined;
  if (geminiKey) {
    models.push(chat('google/gemini-2.5-flash', 'google-ai-studio', 'gemini', env.GEMINI_BASE_URL || 'https://generativelanguage.googleapis.com/v1beta', geminiKey, 'gemini-2.5-flash', '0.0000003', '0.0000025', 1048576, 65535));
    models.push(embed('google/gemini-embedding-001', 'google-ai-studio', 'gemini', env.GEMINI_BASE_URL || 'https://generativelanguage.googleapis.com/v1beta', geminiKey, 'gemini-embedding-001', '0.00000015', 2048));
  }
  if (env.GATEWAY_BEDROCK_ENABLED === 'true') {
    models.push(chat('amazon/nova-lite-v1', 'amazon-bedrock', 'bedrock', undefined, undefined, 'amazon.nova-lite-v1:0', '0.00000006', '0.00000024', 300000, 5120));
    models.push(embed('amazon/titan-embed-text-v2', 'amazon-bedrock', 'bedrock', undefined, undefined, 'amazon.titan-embed-text-v2:0', '0.00000002', 8192));
  }
  return { models };
}

/** What the catalog is built from, read from the environment once per process (app/config.ts). */
export interface CatalogConfig {
  /** SIMULATOR_URL: the simulator's models, when set. */
  simulatorUrl: string | undefined;
  /** The real providers the environment has credentials for (OPENAI_API_KEY …, GATEWAY_BEDROCK_ENABLED). */
  providers: CatalogFile;
  /** GATEWAY_CATALOG_FILE: more models and endpoints. */
  catalogFile: string | undefined;
}

export function catalogConfigFromEnv(env: NodeJS.ProcessEnv): CatalogConfig {
  return { simulatorUrl: env.SIMULATOR_URL || undefined, providers: providerCatalog(env), catalogFile: env.GATEWAY_CATALOG_FILE || undefined };
}

export function catalogOf(config: CatalogConfig): Catalog {
  const files: CatalogFile[] = [];
  if (config.simulatorUrl) files.push(simulatorCatalog(config.simulatorUrl));
  files.push(config.providers);
  if (config.catalogFile) files.push(JSON.parse(readFileSync(config.catalogFile, 'utf8')) as CatalogFile);
  const merged = { models: files.flatMap((file) => file.models) };
  const parsed = catalogFileSchema.safeParse(merged);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`invalid model catalog at ${issue.path.join('.')}: ${issue.message}`);
  }
  return buildCatalog(parsed.data);
}

export function loadCatalog(env: NodeJS.ProcessEnv = process.env): Catalog {
  return catalogOf(catalogConfigFromEnv(env));
}
