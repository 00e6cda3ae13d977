// Presets as inference reads them: cached per warm function like API keys (RecordCache), so a request through
// a preset reads the store at most once a cache lifetime. A new version written through this process
// replaces the cached copy at once; other instances take it up within one lifetime.
import { RecordCache } from '../platform/record-cache.js';
import { presetConfigSchema, type AppliedPresetConfig } from './preset-config.js';
import type { PresetRepository } from './preset-repository.js';
import type { Preset, PresetScope } from './types.js';

export interface ResolvedPreset {
  preset: Preset;
  /** The designated version's config, read back with the request schemas (provider prices in nano-dollars …). */
  config: AppliedPresetConfig;
}

const cacheKey = (scope: PresetScope, slug: string) => `${scope.orgId}/${scope.workspaceId}/${slug}`;

export function resolvedOf(preset: Preset): ResolvedPreset {
  return { preset, config: presetConfigSchema.parse(preset.designated_version.config) };
}

export class PresetSource {
  private readonly cache: RecordCache<ResolvedPreset>;
  /**
   * The newest version written through this process, per preset: a read that started before the write (or
   * an eventually consistent one) must not bring back an older version once the newer one was served.
   */
  private readonly written = new Map<string, ResolvedPreset>();

  constructor(private readonly repository: Pick<PresetRepository, 'get'>, ttlMs = 2000) {
    this.cache = new RecordCache<ResolvedPreset>(ttlMs);
  }

  /** The preset of this workspace with that slug, or undefined (never another workspace's). */
  resolve(scope: PresetScope, slug: string): Promise<ResolvedPreset | undefined> {
    const key = cacheKey(scope, slug);
    return this.cache.getOrLoad(key, async () => {
      const preset = await this.repository.get(scope, slug);
      const written = this.written.get(key);
      if (written && (!preset || preset.designated_version.version < written.preset.designated_version.version)) return written;
      return preset ? resolvedOf(preset) : undefined;
    });
  }

  /** A version just written here: the next request uses it. */
  saved(scope: PresetScope, preset: Preset): void {
    const key = cacheKey(scope, preset.slug);
    const written = this.written.get(key);
    // Two saves of one process may finish out of order: the higher version stays.
    if (written && written.preset.designated_version.version > preset.designated_version.version) return;
    const resolved = resolvedOf(preset);
    this.written.set(key, resolved);
    this.cache.set(key, resolved);
  }
}
