// The preset routes' operations: versions made from request bodies, and reads of the key's workspace's presets.
import { ConflictError, NotFoundError } from '../platform/errors.js';
import type { Principal } from '../platform/http/auth.js';
import { listPage } from '../platform/http/list-page.js';
import type { PresetOperations } from './routes.js';
import type { PresetRepository } from './preset-repository.js';
import type { PresetSource } from './preset-source.js';
import { fromChatBody, fromMessagesBody, fromResponsesBody, type PresetContent } from './preset-config.js';
import type { Preset, PresetScope } from './types.js';

export interface PresetPorts {
  presets: PresetRepository;
  /** Inference's cached presets in this process: a new version applies to the next request. */
  source: Pick<PresetSource, 'saved'>;
  clock: () => Date;
}

const DEFAULT_PAGE = 50;

const scopeOf = (principal: Principal): PresetScope => ({ orgId: principal.key.org_id, workspaceId: principal.key.workspace_id });

/** A preset as listed: without its designated version. */
function listed(preset: Preset): Omit<Preset, 'designated_version'> {
  const { designated_version: _version, ...rest } = preset;
  return rest;
}

export function createPresetOperations(deps: PresetPorts): PresetOperations {
  async function find(principal: Principal, slug: string): Promise<Preset> {
    const preset = await deps.presets.get(scopeOf(principal), slug, true);
    if (!preset) throw new NotFoundError(`Preset "${slug}" not found`);
    return preset;
  }

  async function save(principal: Principal, slug: string, content: PresetContent) {
    const scope = scopeOf(principal);
    const outcome = await deps.presets.addVersion(scope, slug, { ...content, creator: principal.key.hash, now: deps.clock().toISOString() });
    if (outcome.kind === 'contended') {
      throw new ConflictError(`Preset "${slug}" was changed by concurrent writes ${outcome.attempts} times while this version was being saved; send it again`);
    }
    deps.source.saved(scope, outcome.preset);
    return { body: { data: outcome.preset } };
  }

  return {
    async listPresets({ principal, query }) {
      return { body: listPage(await deps.presets.list(scopeOf(principal)), query, listed) };
    },
    async getPreset({ principal, params }) {
      return { body: { data: await find(principal, params.slug) } };
    },
    async listPresetVersions({ principal, params, query }) {
      const preset = await find(principal, params.slug);
      const { versions, total } = await deps.presets.versions(preset, { offset: query.offset ?? 0, limit: query.limit ?? DEFAULT_PAGE });
      return { body: { data: versions, total_count: total } };
    },
    async getPresetVersion({ principal, params }) {
      const preset = await find(principal, params.slug);
      const version = await deps.presets.version(preset, Number(params.version));
      if (!version) throw new NotFoundError(`Preset "${params.slug}" has no version ${params.version} (it has ${preset.designated_version.version})`);
      return { body: { data: version } };
    },
    createPresetFromMessages: async ({ principal, params, body }) => save(principal, params.slug, fromMessagesBody(body)),
    createPresetFromChatCompletions: async ({ principal, params, body }) => save(principal, params.slug, fromChatBody(body)),
    createPresetFromResponses: async ({ principal, params, body }) => save(principal, params.slug, fromResponsesBody(body)),
  };
}
