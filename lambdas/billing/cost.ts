// What a generation cost, exactly, from the provider's token counts and the endpoint's prices.
import type { Usage } from '../providers/types.js';
import { nanosToUsd, type Nanos } from '../platform/money.js';

/** Nano-dollars per token (per request for `request`), as the catalog lists an endpoint's prices. */
export interface Pricing {
  prompt: Nanos;
  completion: Nanos;
  request: Nanos;
  input_cache_read: Nanos;
  input_cache_write: Nanos;
  internal_reasoning: Nanos;
}

export interface CostBreakdown {
  prompt: Nanos;
  completion: Nanos;
  cache_read: Nanos;
  cache_write: Nanos;
  reasoning: Nanos;
  request: Nanos;
  total: Nanos;
}

const n = (value: number) => BigInt(Math.max(0, Math.trunc(value)));

export function computeCost(usage: Usage, pricing: Pricing): CostBreakdown {
  const uncachedInput = n(usage.input_tokens - usage.cached_input_tokens - usage.cache_write_tokens);
  const plainOutput = n(usage.output_tokens - usage.reasoning_tokens);
  const prompt = uncachedInput * pricing.prompt;
  const cache_read = n(usage.cached_input_tokens) * pricing.input_cache_read;
  const cache_write = n(usage.cache_write_tokens) * pricing.input_cache_write;
  const completion = plainOutput * pricing.completion;
  const reasoning = n(usage.reasoning_tokens) * pricing.internal_reasoning;
  const request = pricing.request;
  return { prompt, completion, cache_read, cache_write, reasoning, request, total: prompt + completion + cache_read + cache_write + reasoning + request };
}

/** The `usage` cost fields of a reply (`usage` of POST /chat/completions and /responses replies). */
export function costFields(cost: CostBreakdown, isByok: boolean) {
  return {
    cost: nanosToUsd(cost.total),
    is_byok: isByok,
    cost_details: {
      upstream_inference_cost: isByok ? nanosToUsd(cost.total) : null,
      upstream_inference_prompt_cost: nanosToUsd(cost.prompt + cost.cache_read + cost.cache_write),
      upstream_inference_completions_cost: nanosToUsd(cost.completion + cost.reasoning),
    },
  };
}
