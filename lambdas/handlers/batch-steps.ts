// Batch steps Lambda: the Tasks of the batch state machine (batches/state-machine.ts) — validate, check,
// fail — each one call of the batch worker. A step that throws is retried by the state machine.
import type { BatchStepInput, BatchStepOutput } from '../batches/state-machine.js';
import { defaultDeps } from '../app/deps.js';
import { batchDepsOf } from '../app/batch-deps.js';

export const handler = async (input: BatchStepInput): Promise<BatchStepOutput> => {
  if (!['validate', 'check', 'fail'].includes(input?.step) || typeof input.batch_id !== 'string') throw new Error(`not a batch step: ${JSON.stringify(input).slice(0, 200)}`);
  const deps = await defaultDeps();
  const worker = batchDepsOf(deps).worker;
  if (!worker) throw new Error('batch steps invoked without GATEWAY_BATCH_BUCKET and GATEWAY_BATCH_QUEUE_URL');
  return worker.step(input);
};
