// A preset: a named, versioned request configuration of one workspace. Versions are immutable and numbered
// 1, 2, 3 … without gaps; the latest one is the designated version that requests through the preset use.

/**
 * What a version keeps of the request it was made from, in Chat Completions' names (a Messages body's
 * `stop_sequences` is kept as `stop`, its `fallbacks` as `models` …). Plain JSON, as the caller sent it
 * (provider prices stay as the caller wrote them); `presetConfigSchema` reads it back for inference.
 */
export type PresetConfig = Record<string, unknown>;

export interface PresetVersion {
  id: string;
  preset_id: string;
  version: number;
  config: PresetConfig;
  system_prompt: string | null;
  creator_id: string;
  created_at: string;
  updated_at: string;
}

export interface Preset {
  id: string;
  name: string;
  slug: string;
  description: string | null;
  status: 'active';
  status_updated_at: string | null;
  created_at: string;
  updated_at: string;
  creator_user_id: string | null;
  workspace_id: string;
  designated_version_id: string;
  /** The designated version, inline: a request through the preset reads one item. */
  designated_version: PresetVersion;
}

/** Where a preset lives: its organization and workspace (a preset of another workspace does not exist for a caller). */
export interface PresetScope {
  orgId: string;
  workspaceId: string;
}
