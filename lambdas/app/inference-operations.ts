// The composition root of the inference function's operations: the inference routes over the engine, the
// one port they use (apart from the management composition, which the inference function never builds).
import type { GatewayDeps } from './deps.js';
import { createInferenceOperations } from '../inference/operations.js';
import type { InferenceOperations } from '../inference/routes.js';

const composed = new WeakMap<GatewayDeps, InferenceOperations>();

/** The inference operations over these deps, composed on first use (one WeakMap lookup per request). */
export function inferenceOperationsOf(deps: GatewayDeps): InferenceOperations {
  let operations = composed.get(deps);
  if (!operations) composed.set(deps, operations = createInferenceOperations({ engine: deps.engine }));
  return operations;
}
