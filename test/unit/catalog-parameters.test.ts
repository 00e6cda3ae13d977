// An endpoint's supported_parameters, when the catalog does not list them, are what its adapter sends on:
// GET /models says so, a request's other parameters are left out for it, and provider.require_parameters
// skips it (so a dropped stop sequence or seed is never a silent change under require_parameters).
import { describe, expect, it } from '@jest/globals';
import { buildCatalog, catalogFileSchema, defaultTextParameters } from '../../lambdas/catalog/catalog-config.js';
import { PARAMETER_NAMES, requestedParameters } from '../../lambdas/inference/inference-request.js';
import { supportedParameters as anthropic } from '../../lambdas/providers/anthropic/anthropic-adapter.js';
import { supportedParameters as bedrock } from '../../lambdas/providers/bedrock/bedrock-adapter.js';
import { supportedParameters as gemini } from '../../lambdas/providers/google/gemini-adapter.js';
import { supportedParameters as responses } from '../../lambdas/providers/openai/openai-responses-adapter.js';
import type { GenerationRequest } from '../../lambdas/providers/types.js';

/** The names a request's parameters are checked by (routing's requestedParameters). */
const CHECKED = new Set(Object.values(PARAMETER_NAMES));
const checkedOf = (names: readonly string[]) => names.filter((name) => CHECKED.has(name)).sort();
const fromAdapter = (fields: readonly string[]) => fields.map((field) => PARAMETER_NAMES[field as keyof GenerationRequest]).filter((name): name is string => name !== undefined).sort();

describe('supported parameters by adapter', () => {
  it.each([
    ['openai-responses', responses],
    ['anthropic', anthropic],
    ['gemini', gemini],
    ['bedrock', bedrock],
  ] as const)('%s: the catalog\'s default is what the adapter sends on', (adapter, fields) => {
    expect(checkedOf(defaultTextParameters(adapter))).toEqual(fromAdapter(fields));
  });

  it('a parameter sent with the value that asks for nothing (as clients that send every default do) is not requested', () => {
    const messages = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }] }];
    const defaults = { messages, logprobs: false, top_logprobs: 0, frequency_penalty: 0, presence_penalty: 0, repetition_penalty: 1, min_p: 0, parallel_tool_calls: true, logit_bias: {}, stop: [] };
    expect([...requestedParameters(defaults).keys()]).toEqual([]);
    // Values that ask for something are requested.
    expect([...requestedParameters({ ...defaults, logprobs: true, frequency_penalty: 0.5, parallel_tool_calls: false, logit_bias: { 42: 1 }, seed: 7 }).keys()].sort())
      .toEqual(['frequency_penalty', 'logit_bias', 'logprobs', 'parallel_tool_calls', 'seed']);
  });

  it('an OpenAI-compatible endpoint takes every checked parameter; a catalog\'s own list wins', () => {
    expect(checkedOf(defaultTextParameters('openai-chat'))).toEqual([...CHECKED].sort());
    const catalog = buildCatalog(catalogFileSchema.parse({
      models: [{
        id: 'a/b',
        endpoints: [
          { provider: 'x', adapter: 'anthropic', upstream_model: 'm', pricing: { prompt: '0.000001', completion: '0.000001' }, context_length: 1000 },
          { provider: 'y', adapter: 'anthropic', upstream_model: 'm', pricing: { prompt: '0.000001', completion: '0.000001' }, context_length: 1000, supported_parameters: ['max_tokens', 'seed'] },
        ],
      }],
    }));
    const [byAdapter, listed] = catalog.byId.get('a/b')!.endpoints;
    expect(byAdapter!.supported_parameters).not.toContain('seed');
    expect(byAdapter!.supported_parameters).toContain('stop');
    expect(listed!.supported_parameters).toEqual(['max_tokens', 'seed']);
  });
});
