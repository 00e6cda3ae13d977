// The presets feature as other folders see it: storage, the cached source inference reads, the config a
// version keeps, and the routes.
export type { Preset, PresetConfig, PresetScope, PresetVersion } from './types.js';
export { PresetRepository } from './preset-repository.js';
export { PresetSource, type ResolvedPreset } from './preset-source.js';
export type { AppliedPresetConfig } from './preset-config.js';
export { presetRoutes, type PresetOperations } from './routes.js';
export { createPresetOperations, type PresetPorts } from './operations.js';
