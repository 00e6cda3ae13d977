// npm start's Step Functions: the batch state machine's own definition (the one CDK deploys), run in process
// by aws-local-stepfunctions, with the batch steps function's Tasks replaced by direct calls of its handler.
// Executions live in memory, one per batch at most (a second start of a batch's is a no-op, as an execution
// name is on AWS); at start-up the runtime starts one again for every batch that had not ended.
import { StateMachine } from 'aws-local-stepfunctions';
import { BATCH_STATES, batchStateMachineDefinition, type BatchExecutions, type BatchStepInput, type BatchStepOutput } from '../../lambdas/batches/index.js';
import type { Logger } from '../../lambdas/platform/logger.js';

// aws-local-stepfunctions uses Promise.withResolvers (Node 22); Node 20 lacks it.
const promises = Promise as unknown as { withResolvers?: () => unknown };
promises.withResolvers ??= <T>() => {
  let resolve!: (value: T | PromiseLike<T>) => void;
  let reject!: (reason?: unknown) => void;
  const promise = new Promise<T>((res, rej) => { resolve = res; reject = rej; });
  return { promise, resolve, reject };
};

/** The steps function's ARN as the local definition names it (nothing is invoked through it). */
const LOCAL_STEPS_ARN = 'arn:aws:lambda:us-east-1:000000000000:function:gateway-batch-steps';

export interface LocalStepFunctions extends BatchExecutions {
  /** Stops every execution (each stops between two states; a step running finishes). */
  stop(): Promise<void>;
}

export function startLocalStepFunctions(options: { step: (input: BatchStepInput) => Promise<BatchStepOutput>; log: Logger; retryIntervalMs?: number }): LocalStepFunctions {
  const machine = new StateMachine(batchStateMachineDefinition(LOCAL_STEPS_ARN) as never);
  const running = new Map<string, { abort: () => void; done: Promise<unknown> }>();
  const step = (input: unknown) => options.step(input as BatchStepInput) as unknown as Promise<never>;
  const retries = options.retryIntervalMs ?? 1000;
  let stopped = false;
  return {
    async start(batchId, startOptions = {}) {
      if (stopped || running.has(batchId)) return;
      const execution = machine.run({ batch_id: batchId, requeue: startOptions.requeue === true }, {
        overrides: {
          taskResourceLocalHandlers: { [BATCH_STATES.validate]: step, [BATCH_STATES.check]: step, [BATCH_STATES.fail]: step },
          retryIntervalOverrides: { [BATCH_STATES.validate]: retries, [BATCH_STATES.check]: retries, [BATCH_STATES.fail]: retries },
        },
        noThrowOnAbort: true,
      });
      const done = execution.result.then(
        (output) => options.log.info('batch state machine ended', { batch_id: batchId, output: output as never }),
        (err: unknown) => options.log.error('batch state machine failed', { batch_id: batchId, error: String(err) }),
      ).finally(() => running.delete(batchId));
      running.set(batchId, { abort: execution.abort, done });
    },
    async stop() {
      stopped = true;
      const executions = [...running.values()];
      for (const execution of executions) execution.abort();
      await Promise.all(executions.map((execution) => execution.done));
    },
  };
}
