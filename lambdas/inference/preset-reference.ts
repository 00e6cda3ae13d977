// How a request names a preset: `"model": "@preset/<slug>"`, `"<model>@preset/<slug>"`, or `"preset": "<slug>"`
// (the inbound translators read it; presets.ts applies the preset).
import { InvalidInputError } from '../platform/errors.js';
import { PRESET_SLUG, PRESET_SLUG_RULE } from './formats/common-schema.js';
import type { PresetReference } from './inference-request.js';

const MARK = '@preset/';

/** `model` without any preset it names, and the preset (from `model` or from `preset`). */
export function presetOf(model: string | undefined, preset: string | undefined): { model: string | undefined; preset: PresetReference | undefined } {
  const at = model === undefined ? -1 : model.indexOf(MARK);
  if (at === -1) return { model, preset: preset === undefined ? undefined : { slug: preset, fixedModel: model !== undefined } };
  const slug = model!.slice(at + MARK.length);
  if (!PRESET_SLUG.test(slug)) throw new InvalidInputError(`Invalid body.model: "${model}" names a preset, and a preset slug is ${PRESET_SLUG_RULE}`);
  if (preset !== undefined && preset !== slug) throw new InvalidInputError(`Invalid body.preset: "${preset}" differs from the preset "${slug}" that model names`);
  const named = model!.slice(0, at);
  return { model: named || undefined, preset: { slug, fixedModel: named !== '' } };
}
