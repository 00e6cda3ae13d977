// The preset routes (any valid key; a preset belongs to the key's workspace). A preset is made from a
// request body of any inbound format, and named in inference as `@preset/<slug>`.
import type { OperationsFor, RouteDef } from '../platform/http/route.js';
import { presetFromChatBody, presetFromMessagesBody, presetFromResponsesBody } from './preset-config.js';
import { presetListReply, presetPageQuery, presetReply, presetSlugParam, presetVersionListReply, presetVersionParam, presetVersionReply } from './schemas.js';

const slug = presetSlugParam;
const created = 'Create a preset, or a new version of it (designated at once), from a request body; only the fields that are request settings are kept';

export const presetRoutes = [
  {
    operationId: 'listPresets', method: 'GET', path: '/presets', fn: 'management', auth: 'any',
    tag: 'Presets', summary: 'Presets of the key\'s workspace, most recently updated first', query: presetPageQuery, response: presetListReply,
  },
  {
    operationId: 'getPreset', method: 'GET', path: '/presets/{slug}', params: { slug }, fn: 'management', auth: 'any',
    tag: 'Presets', summary: 'A preset with its designated version', response: presetReply,
  },
  {
    operationId: 'listPresetVersions', method: 'GET', path: '/presets/{slug}/versions', params: { slug }, fn: 'management', auth: 'any',
    tag: 'Presets', summary: 'Versions of a preset, oldest (1) first', query: presetPageQuery, response: presetVersionListReply,
  },
  {
    operationId: 'getPresetVersion', method: 'GET', path: '/presets/{slug}/versions/{version}', params: { slug, version: presetVersionParam }, fn: 'management', auth: 'any',
    tag: 'Presets', summary: 'One version of a preset', response: presetVersionReply,
  },
  {
    operationId: 'createPresetFromMessages', method: 'POST', path: '/presets/{slug}/messages', params: { slug }, fn: 'management', auth: 'any',
    tag: 'Presets', summary: `${created} (Messages format: system, max_tokens, fallbacks (at most 3), output_config, speed …)`, body: presetFromMessagesBody, nullFieldsAbsent: true, response: presetReply,
  },
  {
    operationId: 'createPresetFromChatCompletions', method: 'POST', path: '/presets/{slug}/chat/completions', params: { slug }, fn: 'management', auth: 'any',
    tag: 'Presets', summary: `${created} (Chat Completions format; the leading system messages become the system prompt)`, body: presetFromChatBody, nullFieldsAbsent: true, response: presetReply,
  },
  {
    operationId: 'createPresetFromResponses', method: 'POST', path: '/presets/{slug}/responses', params: { slug }, fn: 'management', auth: 'any',
    tag: 'Presets', summary: `${created} (Responses format; instructions become the system prompt)`, body: presetFromResponsesBody, nullFieldsAbsent: true, response: presetReply,
  },
] as const satisfies readonly RouteDef[];

export type PresetOperations = OperationsFor<typeof presetRoutes>;
