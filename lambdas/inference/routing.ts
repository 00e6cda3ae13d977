// Resolve: which endpoints may serve a request, in which order. Fallback models in order; provider
// preferences (order, only, ignore, allow_fallbacks, require_parameters, sort with partition, max_price,
// data_collection); default choice weighted by price; cooled-down endpoints last; sticky sessions first.
import { InvalidInputError, NotFoundError } from '../platform/errors.js';
import { endpointKey, type Catalog, type CatalogEndpoint } from '../catalog/index.js';
import type { PrivateEndpoint } from '../private-endpoints/index.js';
import type { ByokCredential } from '../byok/index.js';
import type { GenerationRequest } from '../providers/types.js';
import { estimatePromptTokens } from './estimate.js';
import { requestedParameters, type InferenceRequest } from './inference-request.js';
import { isClaudeEndpoint, losesStopOnClaude } from '../providers/anthropic/sampling-limits.js';
import type { EndpointHealth } from './endpoint-health.js';

export interface Candidate {
  endpoint: CatalogEndpoint;
  key: string;
  /** Requested parameters this endpoint does not support: left out of its request and reported. */
  ignoredParameters: string[];
  /** The upstream service tier to ask for, if the endpoint offers the requested one. */
  serviceTier: string | undefined;
  /** Set when this attempt uses the customer's own provider credential (BYOK) instead of the gateway's. */
  byok?: ByokCredential;
  /** Set for the workspace's own deployment (a private endpoint): called with its key, billed to it as BYOK is. */
  privateEndpoint?: PrivateEndpoint;
}

/** An endpoint left out because the request cannot fit it (reported in service_metadata). */
export interface SkippedEndpoint {
  key: string;
  reason: 'context length';
  context_length: number;
  /** Estimated prompt tokens plus max_tokens. */
  requested_tokens: number;
}

export interface RoutingPlan {
  candidates: Candidate[];
  /** Every endpoint of the requested models, for service_metadata. */
  considered: CatalogEndpoint[];
  /** Endpoints of the requested models the request cannot fit. */
  skipped: SkippedEndpoint[];
  strategy: 'direct' | 'fallback' | 'sorted' | 'ordered';
  notes: string[];
}

export interface RoutingInput {
  request: InferenceRequest;
  catalog: Catalog;
  health: EndpointHealth;
  stickyEndpoint: string | undefined;
  now: number;
  random: () => number;
}

const TIER_PREFERENCE: Record<string, string[]> = {
  ultrafast: ['ultrafast', 'priority', 'default'],
  fast: ['priority'],
  priority: ['priority'],
  flex: ['flex'],
  scale: ['scale'],
  default: ['default'],
};

function totalPrice(endpoint: CatalogEndpoint): bigint {
  return endpoint.pricing.prompt + endpoint.pricing.completion;
}

/** An endpoint of an embeddings model (its output is vectors, not text). */
export function producesEmbeddings(endpoint: CatalogEndpoint): boolean {
  return endpoint.output_modalities.includes('embeddings');
}

type EndpointKind = 'text' | 'embeddings' | 'speech';

function kindOf(endpoint: CatalogEndpoint): EndpointKind {
  return endpoint.speech ? 'speech' : producesEmbeddings(endpoint) ? 'embeddings' : 'text';
}

const KIND_OUTPUT: Record<EndpointKind, string> = { text: 'text output', embeddings: 'embeddings output', speech: 'audio output' };

/** Each route goes to models of its kind (text, embeddings, speech): the 400 for models of another kind. */
function wrongKindError(wrong: Array<{ id: string; kind: EndpointKind }>, wanted: EndpointKind): InvalidInputError {
  const names = wrong.map(({ id }) => `"${id}"`).join(', ');
  const one = wrong.length === 1;
  let message: string;
  if (wanted === 'embeddings') message = `${names} ${one ? 'is not an embeddings model' : 'are not embeddings models'}; pick one whose output_modalities include "embeddings" (GET /models?output_modalities=embeddings)`;
  else if (wanted === 'speech') message = `${names} ${one ? 'is not a text-to-speech model' : 'are not text-to-speech models'}; pick one whose output_modalities include "audio" (GET /models?output_modalities=audio)`;
  else if (wrong.every(({ kind }) => kind === 'embeddings')) message = `${names} ${one ? 'is an embeddings model' : 'are embeddings models'}; call POST /embeddings with ${one ? 'it' : 'them'}`;
  else if (wrong.every(({ kind }) => kind === 'speech')) message = `${names} ${one ? 'is a text-to-speech model' : 'are text-to-speech models'}; call POST /audio/speech with ${one ? 'it' : 'them'}`;
  else message = `${names} are not text models; call POST /embeddings or POST /audio/speech with them`;
  return new InvalidInputError(message, { metadata: { models: wrong.map(({ id }) => id) } });
}

/** Why a speech endpoint cannot serve the request (a routing removal reason), or undefined when it can. */
function speechMismatch(endpoint: CatalogEndpoint, speech: NonNullable<InferenceRequest['params']['speech']>): string | undefined {
  const can = endpoint.speech!;
  const clips = speech.references.filter((part) => part.type === 'input_audio').length;
  const image = speech.references.some((part) => part.type === 'image_url');
  if (image && !can.image_references) return 'image references';
  if (clips > 0 && !can.voice_cloning) return 'voice cloning';
  if (clips > 1 && !can.multiple_references) return 'multiple references';
  if (!can.formats.includes(speech.format)) return 'response_format';
  if (speech.voice !== undefined && !image && !clips && !can.any_voice && !can.voices.includes(speech.voice)) return 'voice';
  if (speech.instructions !== undefined && endpoint.adapter !== 'openai-speech') return 'instructions';
  if (speech.speed !== undefined && speech.speed !== 1) {
    if (!can.speed) return 'speed control';
    if (speech.speed < can.speed.min || speech.speed > can.speed.max) return 'speed range';
  }
  if (speech.input.length > can.max_characters) return 'input length';
  return undefined;
}

/** What a speech model lacks, said plainly with what it has, when every endpoint was removed for it (a 400, not a 404). */
function speechRefusal(reason: string, endpoints: CatalogEndpoint[], speech: NonNullable<InferenceRequest['params']['speech']>): string {
  const can = endpoints.map((endpoint) => endpoint.speech).filter((capabilities) => capabilities !== undefined);
  const ranges = can.flatMap((capabilities) => (capabilities.speed ? [`${capabilities.speed.min}-${capabilities.speed.max}`] : []));
  switch (reason) {
    case 'image references': return 'supports no image reference (input_references with image_url)';
    case 'voice cloning': return 'supports no voice cloning (input_references with input_audio)';
    case 'multiple references': return 'takes one reference clip, not several';
    case 'response_format': return `cannot produce ${speech.format} (it makes ${[...new Set(can.flatMap((capabilities) => capabilities.formats))].join(', ')})`;
    case 'voice': return `has no voice "${speech.voice}" (its voices: ${[...new Set(can.flatMap((capabilities) => capabilities.voices))].join(', ')}; GET /models lists them as supported_voices)`;
    case 'speed control': return 'has no speed control: send no speed, or 1';
    case 'speed range': return `cannot play at speed ${speech.speed} (its range: ${ranges.join(', ')})`;
    case 'instructions': return 'takes no instructions (only OpenAI\'s speech models do)';
    case 'input length': return `takes at most ${Math.max(...can.map((capabilities) => capabilities.max_characters))} characters of input, got ${speech.input.length}`;
    default: return `cannot serve this request (${reason})`;
  }
}

function hasImages(params: InferenceRequest['params']): boolean {
  return params.messages.some((message) => message.content.some((part) => part.type === 'image'));
}

const SPEECH_REASONS: ReadonlySet<string> = new Set(['image references', 'voice cloning', 'multiple references', 'response_format', 'voice', 'speed control', 'speed range', 'instructions', 'input length']);

/**
 * The request's checks of one endpoint, worked out once per request: the candidate it makes, or why it
 * cannot serve the request (a routing removal reason). planRoute runs them over the requested models'
 * endpoints, and the private endpoints' middleware over a workspace's own deployments.
 */
export class EndpointRules {
  readonly wanted: EndpointKind;
  readonly prompt: { text: number; images: number };
  readonly outputTokens: number;
  /** Estimated prompt tokens plus max_tokens (0 for speech, whose limit is its max_characters). */
  readonly requestedTokens: number;
  readonly order: string[];
  readonly sortBy: string | undefined;
  readonly allowFallbacks: boolean;
  readonly tierPreference: string[] | undefined;
  private readonly prefs: NonNullable<InferenceRequest['provider']>;
  private readonly requested: ReturnType<typeof requestedParameters>;
  private readonly only: Set<string> | undefined;
  private readonly ignore: Set<string>;
  private readonly needsImages: boolean;
  private readonly speech: InferenceRequest['params']['speech'];
  /** A stop sequence of whitespace only, which Claude's endpoints leave out. */
  private readonly losesStopOnClaude: boolean;

  constructor(request: InferenceRequest) {
    const prefs = request.provider ?? {};
    this.prefs = prefs;
    this.wanted = request.format === 'embeddings' ? 'embeddings' : request.format === 'speech' ? 'speech' : 'text';
    this.speech = request.params.speech;
    this.requested = requestedParameters(request.params);
    this.losesStopOnClaude = losesStopOnClaude(request.params.stop);
    this.only = prefs.only ? new Set(prefs.only.map((slug) => slug.toLowerCase())) : undefined;
    this.ignore = new Set((prefs.ignore ?? []).map((slug) => slug.toLowerCase()));
    this.order = (prefs.order ?? []).map((slug) => slug.toLowerCase());
    this.sortBy = typeof prefs.sort === 'string' ? prefs.sort : prefs.sort?.by ?? undefined;
    this.allowFallbacks = prefs.allow_fallbacks !== false;
    this.tierPreference = request.serviceTier ? TIER_PREFERENCE[request.serviceTier] : undefined;
    this.needsImages = hasImages(request.params);
    // A realistic estimate, not the reservation's bound (one token per UTF-8 byte): a prompt that really
    // fits must not be refused. Without max_tokens only the prompt counts (the output then gets what is left).
    // Embeddings models take each input on its own: the longest one has to fit, not all of them together.
    const embedded = request.params.embedding?.input;
    this.prompt = embedded
      ? estimatePromptTokens({ messages: [{ role: 'user', content: [{ type: 'text', text: embedded.reduce((longest, text) => (text.length > longest.length ? text : longest), '') }] }] })
      : estimatePromptTokens(request.params);
    this.outputTokens = request.params.max_output_tokens ?? 0;
    this.requestedTokens = this.speech ? 0 : this.prompt.text + this.prompt.images + this.outputTokens;
  }

  /** `provider`: the name the request's provider preferences know the endpoint by (lower case). */
  check(endpoint: CatalogEndpoint, provider = endpoint.provider.toLowerCase()): Candidate | string {
    const { prefs } = this;
    if (kindOf(endpoint) !== this.wanted) return KIND_OUTPUT[this.wanted];
    if (this.only && !this.only.has(provider)) return 'provider.only';
    if (this.ignore.has(provider)) return 'provider.ignore';
    if (!this.allowFallbacks && this.order.length && !this.order.includes(provider)) return 'provider.order without fallbacks';
    if (prefs.data_collection === 'deny' && endpoint.data_collection === 'allow') return 'provider.data_collection';
    const maxPrice = prefs.max_price;
    if (maxPrice) {
      if (maxPrice.prompt !== undefined && endpoint.pricing.prompt * 1_000_000n > maxPrice.prompt) return 'provider.max_price';
      if (maxPrice.completion !== undefined && endpoint.pricing.completion * 1_000_000n > maxPrice.completion) return 'provider.max_price';
      if (maxPrice.request !== undefined && endpoint.pricing.request > maxPrice.request) return 'provider.max_price';
    }
    if (this.needsImages && !endpoint.input_modalities.includes('image')) return 'image input';
    const mismatch = this.speech ? speechMismatch(endpoint, this.speech) : undefined;
    if (mismatch) return mismatch;
    if (this.requestedTokens > endpoint.context_length) return 'context length';
    const unsupported = [...this.requested.keys()].filter((name) => !endpoint.supported_parameters.includes(name));
    if (prefs.require_parameters && (unsupported.length || (this.losesStopOnClaude && isClaudeEndpoint(endpoint.adapter, endpoint.upstream_model)))) return 'provider.require_parameters';
    const serviceTier = this.tierPreference?.find((tier) => endpoint.service_tiers.includes(tier));
    return { endpoint, key: endpointKey(endpoint), ignoredParameters: unsupported, serviceTier };
  }
}

export function planRoute(input: RoutingInput): RoutingPlan {
  const { request, catalog } = input;
  const prefs = request.provider ?? {};
  const unknown = request.models.filter((id) => !catalog.byId.has(id));
  if (unknown.length) throw new InvalidInputError(`${unknown.map((id) => `"${id}"`).join(', ')} ${unknown.length === 1 ? 'is not a valid model ID' : 'are not valid model IDs'}`, { metadata: { models: unknown } });
  const rules = new EndpointRules(request);
  const { wanted, prompt, outputTokens, requestedTokens, order, sortBy, allowFallbacks, tierPreference } = rules;
  const { speech } = request.params;
  const partition = (typeof prefs.sort === 'object' ? prefs.sort?.partition : undefined) ?? request.routePartition ?? 'model';
  const skipped: SkippedEndpoint[] = [];
  const notes: string[] = [];
  const considered: CatalogEndpoint[] = [];
  const removed = new Map<string, number>();
  const remove = (reason: string) => removed.set(reason, (removed.get(reason) ?? 0) + 1);

  const perModel: Candidate[][] = [];
  const wrongKind: Array<{ id: string; kind: EndpointKind }> = [];
  for (const modelId of request.models) {
    const model = catalog.byId.get(modelId)!;
    const eligible: Candidate[] = [];
    let ofKind = false;
    for (const endpoint of model.endpoints) {
      considered.push(endpoint);
      const checked = rules.check(endpoint);
      if (typeof checked !== 'string') {
        ofKind = true;
        eligible.push(checked);
        continue;
      }
      remove(checked);
      if (checked === KIND_OUTPUT[wanted]) continue;
      ofKind = true;
      if (checked === 'context length') skipped.push({ key: endpointKey(endpoint), reason: 'context length', context_length: endpoint.context_length, requested_tokens: requestedTokens });
    }
    if (!ofKind) wrongKind.push({ id: modelId, kind: model.endpoints[0] ? kindOf(model.endpoints[0]) : 'text' });
    perModel.push(orderWithinModel(eligible, { sortBy, order, tierPreference, input }));
  }
  if (wrongKind.length) throw wrongKindError(wrongKind, wanted);

  let candidates: Candidate[];
  if (sortBy && partition === 'none') {
    candidates = sortCandidates(perModel.flat(), sortBy);
  } else {
    // Without fallbacks only the primary endpoint of each model is tried, or, when an order is given, the
    // listed providers (the others were filtered out above), still in that order.
    candidates = perModel.flatMap((list) => (allowFallbacks || order.length ? list : list.slice(0, 1)));
  }
  if (input.stickyEndpoint && !input.health.isCoolingDown(input.stickyEndpoint, input.now)) {
    const index = candidates.findIndex((candidate) => candidate.key === input.stickyEndpoint);
    if (index > 0) candidates.unshift(...candidates.splice(index, 1));
    if (index >= 0) notes.push('sticky session endpoint first');
  }
  if (!candidates.length && skipped.length) {
    // The request itself is too long for every endpoint that is left: a 400 the caller can act on.
    const longest = Math.max(...skipped.map((entry) => entry.context_length));
    const parts = [`${prompt.text} of text input`, ...(prompt.images ? [`${prompt.images} of image input`] : []), `${outputTokens} in the output`];
    throw new InvalidInputError(
      `This endpoint's maximum context length is ${longest} tokens. However, you requested about ${requestedTokens} tokens (${parts.join(', ')}). Please reduce the length of either one.`,
      { metadata: { context_length: longest, requested_tokens: requestedTokens, prompt_tokens: prompt.text + prompt.images, max_tokens: outputTokens } },
    );
  }
  if (!candidates.length && speech && [...removed.keys()].every((reason) => SPEECH_REASONS.has(reason))) {
    const reasons = [...removed.keys()].map((reason) => speechRefusal(reason, considered, speech));
    throw new InvalidInputError(`${request.models.join(', ')} ${reasons.join('; ')}`, { metadata: { excluded_by: Object.fromEntries(removed) } });
  }
  if (!candidates.length) {
    const reasons = [...removed.keys()].join(', ');
    throw new NotFoundError(`No endpoints found for ${request.models.join(', ')} that satisfy ${reasons || 'the request'}`, { metadata: { excluded_by: Object.fromEntries(removed) } });
  }
  const strategy = sortBy ? 'sorted' : order.length ? 'ordered' : request.models.length > 1 ? 'fallback' : 'direct';
  return { candidates, considered, skipped, strategy, notes };
}

function sortCandidates(list: Candidate[], sortBy: string): Candidate[] {
  const sorted = [...list];
  if (sortBy === 'throughput') sorted.sort((a, b) => b.endpoint.throughput_tps - a.endpoint.throughput_tps);
  else if (sortBy === 'latency') sorted.sort((a, b) => a.endpoint.latency_ms - b.endpoint.latency_ms);
  else sorted.sort((a, b) => (totalPrice(a.endpoint) < totalPrice(b.endpoint) ? -1 : totalPrice(a.endpoint) > totalPrice(b.endpoint) ? 1 : 0));
  return sorted;
}

function orderWithinModel(
  eligible: Candidate[],
  options: { sortBy: string | undefined; order: string[]; tierPreference: string[] | undefined; input: RoutingInput },
): Candidate[] {
  const { input } = options;
  const healthy = eligible.filter((candidate) => !input.health.isCoolingDown(candidate.key, input.now));
  const cooling = eligible.filter((candidate) => input.health.isCoolingDown(candidate.key, input.now));
  let ordered: Candidate[];
  if (options.sortBy) {
    ordered = sortCandidates(healthy, options.sortBy);
  } else if (options.order.length) {
    const rank = (candidate: Candidate) => {
      const index = options.order.indexOf(candidate.endpoint.provider.toLowerCase());
      return index === -1 ? options.order.length : index;
    };
    const listed = healthy.filter((candidate) => rank(candidate) < options.order.length).sort((a, b) => rank(a) - rank(b));
    ordered = [...listed, ...weightedByPrice(healthy.filter((candidate) => rank(candidate) === options.order.length), input.random)];
  } else {
    ordered = weightedByPrice(healthy, input.random);
  }
  if (options.tierPreference) {
    // Endpoints offering the requested tier (in preference order) come first; stable otherwise.
    const tierRank = (candidate: Candidate) => (candidate.serviceTier ? options.tierPreference!.indexOf(candidate.serviceTier) : options.tierPreference!.length);
    ordered = ordered.map((candidate, index) => ({ candidate, index }))
      .sort((a, b) => tierRank(a.candidate) - tierRank(b.candidate) || a.index - b.index)
      .map((entry) => entry.candidate);
  }
  return [...ordered, ...cooling];
}

/** Weighted random order without replacement, weight ∝ 1 / price² (cheaper endpoints first more often). */
function weightedByPrice(list: Candidate[], random: () => number): Candidate[] {
  const pool = list.map((candidate) => {
    const price = Number(totalPrice(candidate.endpoint));
    return { candidate, weight: price > 0 ? 1 / (price * price) : 1 };
  });
  const result: Candidate[] = [];
  while (pool.length) {
    const total = pool.reduce((sum, entry) => sum + entry.weight, 0);
    let pick = random() * total;
    let index = pool.findIndex((entry) => (pick -= entry.weight) < 0);
    if (index === -1) index = pool.length - 1;
    result.push(pool.splice(index, 1)[0]!.candidate);
  }
  return result;
}

/** The request as one endpoint gets it: its upstream model, without the parameters it does not support. */
export function requestFor(candidate: Candidate, params: InferenceRequest['params']): GenerationRequest {
  // The tier as a field of the literal (undefined for none, which adapters skip like an absent one), not
  // deleted after: a deleted property turns the object into a slow dictionary for every later read.
  const serviceTier = candidate.serviceTier && candidate.serviceTier !== 'default' ? candidate.serviceTier : undefined;
  // Object.assign, not a literal opening with a spread (slow under Node 20: README, "Hot-path style").
  const request: GenerationRequest = Object.assign({}, params, { model: candidate.endpoint.upstream_model, service_tier: serviceTier } satisfies Partial<GenerationRequest>);
  const { speech } = params;
  if (speech) {
    // The endpoint's default voice when none was named; only this provider's options go upstream.
    const options = speech.optionsByProvider?.[candidate.endpoint.provider];
    request.speech = Object.assign({}, speech, { voice: speech.voice ?? candidate.endpoint.speech?.voices[0] }, options ? { options } : {});
  }
  if (candidate.ignoredParameters.length > 0) {
    const requested = requestedParameters(params);
    for (const name of candidate.ignoredParameters) {
      const field = requested.get(name);
      // `dimensions` is part of the embeddings request: only it is left out, never the request itself.
      if (field === 'embedding' && request.embedding) request.embedding = { input: request.embedding.input, ...(request.embedding.inputType ? { inputType: request.embedding.inputType } : {}) };
      else if (field) delete (request as unknown as Record<string, unknown>)[field];
    }
  }
  return request;
}
