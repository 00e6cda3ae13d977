// A batch's lifecycle as a Step Functions state machine (Amazon States Language, JSONPath). CDK deploys this
// definition; npm start runs the very same one in process (bin/local/step-functions.ts). Each Task invokes
// the batch steps function (handlers/batch-steps.ts) with one step of batches/worker.ts:
//
//   Validate ──► Ended? ──(not ended)──► Wait ──► Check ──► Ended? …      (Check: expiry, cancel, finalize)
//                  └──(ended)──► Done
//   any step failing after its retries ──► Fail batch ──► Failed
//
// The items themselves go through SQS to the worker function (Validate queues the shards): the machine only
// paces the checks, so its history stays small (a check every wait_seconds, which grows to a minute).

/** The state names, which npm start's runner also uses to put local functions in place of the Tasks. */
export const BATCH_STATES = { validate: 'Validate', check: 'Check', fail: 'Fail batch', wait: 'Wait' } as const;

/** What a step is asked to do (the Task's payload). */
export interface BatchStepInput {
  step: 'validate' | 'check' | 'fail';
  batch_id: string;
  /** validate: queue every shard again, also for a batch whose shards were queued (a local queue lost them). */
  requeue?: boolean;
  /** fail: why the step that failed did (Step Functions' error and cause). */
  error?: { Error?: string; Cause?: string };
  /** check: the wait before it (the next one grows from it). */
  wait_seconds?: number;
}

/** What a step answers: the batch's state, and how long to wait before the next check. */
export interface BatchStepOutput {
  batch_id: string;
  status: string;
  ended: boolean;
  wait_seconds: number;
}

/** Where the steps function's ARN goes in the definition (CDK's definitionSubstitutions fill it in). */
export const STEPS_FUNCTION_PLACEHOLDER = '${BatchStepsFunctionArn}';

/** Retries of a step that failed (the function throttled, DynamoDB or S3 refusing for a while). */
const RETRY = [{ ErrorEquals: ['States.ALL'], IntervalSeconds: 2, BackoffRate: 2, MaxAttempts: 6 }];
const CATCH = [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: BATCH_STATES.fail }];

export function batchStateMachineDefinition(stepsFunctionArn: string = STEPS_FUNCTION_PLACEHOLDER): Record<string, unknown> {
  const task = (step: BatchStepInput['step'], extra: Record<string, string>) => ({
    Type: 'Task',
    Resource: stepsFunctionArn,
    Parameters: { step, 'batch_id.$': '$.batch_id', ...extra },
    Retry: RETRY,
  });
  return {
    Comment: 'A batch of the model gateway: validate, then check until it ends (completed, failed, cancelled or expired)',
    StartAt: BATCH_STATES.validate,
    States: {
      [BATCH_STATES.validate]: { ...task('validate', { 'requeue.$': '$.requeue' }), Catch: CATCH, Next: 'Ended?' },
      'Ended?': {
        Type: 'Choice',
        Choices: [{ Variable: '$.ended', BooleanEquals: true, Next: 'Done' }],
        Default: BATCH_STATES.wait,
      },
      [BATCH_STATES.wait]: { Type: 'Wait', SecondsPath: '$.wait_seconds', Next: BATCH_STATES.check },
      [BATCH_STATES.check]: { ...task('check', { 'wait_seconds.$': '$.wait_seconds' }), Catch: CATCH, Next: 'Ended?' },
      [BATCH_STATES.fail]: { ...task('fail', { 'error.$': '$.error' }), Next: 'Failed' },
      Done: { Type: 'Succeed' },
      Failed: { Type: 'Fail', Error: 'BatchStepFailed', Cause: 'A step of the batch failed after its retries; the batch is marked failed' },
    },
  };
}
