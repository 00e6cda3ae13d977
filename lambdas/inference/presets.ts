// Presets in inference, the pipeline's resolve step: a request that names a preset (`"model":
// "@preset/<slug>"`, `"<model>@preset/<slug>"`, or `"preset": "<slug>"`) runs with the preset's designated
// version beneath it. The request wins field by field; the preset's system prompt comes first; its models
// (model, then its fallbacks) are tried unless the request names its own model. A preset of another
// workspace does not exist for the caller (404).
import { InvalidInputError, NotFoundError } from '../platform/errors.js';
import type { InferenceRequest, PresetReference } from './inference-request.js';
import type { GenerationRequest, Message } from '../providers/types.js';
import type { AppliedPresetConfig, PresetScope, PresetSource } from '../presets/index.js';
import { toReasoning, toResponseFormat } from './formats/from-chat.js';
import { MAX_CHAT_STOP_SEQUENCES } from './formats/chat-schema.js';

/** The generation settings a config holds, in the internal names. */
function paramsOf(config: AppliedPresetConfig): Partial<Omit<GenerationRequest, 'model' | 'messages'>> {
  const responseFormat = config.response_format ? toResponseFormat(config.response_format, 'preset response_format') : undefined;
  const reasoning = toReasoning(config.reasoning);
  const params: Partial<Omit<GenerationRequest, 'model' | 'messages'>> = {
    max_output_tokens: config.max_tokens, temperature: config.temperature, top_p: config.top_p, top_k: config.top_k,
    frequency_penalty: config.frequency_penalty, presence_penalty: config.presence_penalty, repetition_penalty: config.repetition_penalty,
    min_p: config.min_p, seed: config.seed, stop: config.stop, response_format: responseFormat, reasoning,
  };
  for (const key of Object.keys(params) as Array<keyof typeof params>) if (params[key] === undefined) delete params[key];
  return params;
}

/** The request with the preset's config beneath it. */
export function withPreset(request: InferenceRequest, reference: PresetReference, config: AppliedPresetConfig, systemPrompt: string | null): InferenceRequest {
  const models = reference.fixedModel ? request.models : [...new Set([...(config.model ? [config.model] : []), ...(request.models.length ? request.models : config.models ?? [])])];
  if (models.length === 0) throw new InvalidInputError(`Invalid body.model: preset "${reference.slug}" names no model; name one (e.g. "vendor/model@preset/${reference.slug}")`);
  const system: Message[] = systemPrompt ? [{ role: 'system', content: [{ type: 'text', text: systemPrompt }] }] : [];
  const plugins = request.plugins.length ? request.plugins : config.plugins ?? [];
  const active = plugins.filter((plugin) => (plugin as { enabled?: boolean }).enabled !== false);
  if (active.length) throw new InvalidInputError(`Invalid preset "${reference.slug}": its plugins (${active.map((plugin) => `"${plugin.id}"`).join(', ')}) are not available on this gateway`);
  // A preset made from a Messages body may hold up to 16 stop sequences; a chat completion takes 4, as its own
  // `stop` would (the request's `stop` replaces the preset's).
  const stops = config.stop?.length ?? 0;
  if (request.format === 'chat' && request.params.stop === undefined && stops > MAX_CHAT_STOP_SEQUENCES) {
    throw new InvalidInputError(`Invalid preset "${reference.slug}": its stop has ${stops} sequences and a chat completion takes at most ${MAX_CHAT_STOP_SEQUENCES}; send "stop" to replace them`, { metadata: { param: 'stop' } });
  }
  // Object.assign, not literals opening with a spread (slow under Node 20: README, "Hot-path style").
  return Object.assign({}, request, {
    models,
    // The request's own settings are set keys only (the inbound translators leave unset ones out), so they win.
    params: Object.assign({}, paramsOf(config), request.params, { messages: [...system, ...request.params.messages] }),
    provider: request.provider ? Object.assign({}, config.provider, request.provider) : config.provider,
    routePartition: request.routePartition ?? (config.route === 'fallback' ? 'model' : config.route === 'sort' ? 'none' : undefined),
    // `speed: fast` (a Messages body's) is the priority tier.
    serviceTier: request.serviceTier ?? config.service_tier ?? (config.speed === 'fast' ? 'fast' : null),
    plugins,
  } satisfies Partial<InferenceRequest>);
}

/** The request as it runs: with its preset applied, or as it is when it names none. */
export async function resolvePreset(request: InferenceRequest, scope: PresetScope, presets: Pick<PresetSource, 'resolve'> | undefined): Promise<InferenceRequest> {
  const reference = request.preset;
  if (!reference) return request;
  const resolved = presets ? await presets.resolve(scope, reference.slug) : undefined;
  if (!resolved) throw new NotFoundError(`Preset "${reference.slug}" not found`);
  return withPreset(request, reference, resolved.config, resolved.preset.designated_version.system_prompt);
}
