// Starting a batch's state machine (batches/state-machine.ts): on AWS an execution of the deployed Step
// Functions state machine, named after the batch (a second start of it is refused by name, and that is fine);
// under npm start the same definition run in process (bin/local/step-functions.ts).
import { ExecutionAlreadyExists, StartExecutionCommand, type SFNClient } from '@aws-sdk/client-sfn';

export interface BatchExecutions {
  /** Starts the batch's lifecycle; `requeue`: its shards are queued again (see BatchStepInput). */
  start(batchId: string, options?: { requeue?: boolean }): Promise<void>;
}

export class StepFunctionsExecutions implements BatchExecutions {
  constructor(private readonly sfn: SFNClient, private readonly stateMachineArn: string) {}

  async start(batchId: string, options: { requeue?: boolean } = {}): Promise<void> {
    try {
      await this.sfn.send(new StartExecutionCommand({
        stateMachineArn: this.stateMachineArn,
        name: batchId,
        input: JSON.stringify({ batch_id: batchId, requeue: options.requeue === true }),
      }));
    } catch (err) {
      // Started already (a retried create): its execution runs it.
      if (err instanceof ExecutionAlreadyExists) return;
      throw err;
    }
  }
}
