// npm start's parts in processes of their own (bin/local/child.ts): the upstream simulator, the batch runner
// and the S3, SQS and KMS stand-ins, each started again when it dies.
import type { SimulatorOptions } from '../simulator/server.js';
import type { PartHealth } from '../../lambdas/app/system-operations.js';
import type { BatchExecutions } from '../../lambdas/batches/index.js';
import { localModule, startChild, supervise, type FromChild } from './child.js';
import type { BatchChildOptions } from './batch-child.js';
import type { AwsChildOptions, AwsStandIns } from './aws-child.js';

export interface SimulatorProcess {
  url: string;
  port: number;
  /** Where Bedrock batch jobs find the S3 stand-in (it starts beside the simulator). */
  useS3(endpoint: string): Promise<void>;
  health(): PartHealth;
  close(): Promise<void>;
}

/** The simulator in its own process, restarted on the same port when it dies. */
export async function startSimulatorProcess(options: SimulatorOptions & { host: string }, output: (line: string) => void): Promise<SimulatorProcess> {
  let port = options.port;
  let s3Endpoint: string | undefined;
  const { s3Endpoint: _s3, ...settings } = options;
  const supervised = await supervise<{ url: string; port: number }>(
    () => startChild({
      name: 'the upstream simulator', entry: localModule('./simulator-child.ts'),
      env: { ...process.env, SIMULATOR_CHILD_OPTIONS: JSON.stringify({ ...settings, port }) },
      output,
    }),
    {
      name: 'the upstream simulator',
      log: output,
      restartNote: 'the provider batches it had in memory are gone: batches there fail after their retries',
      onStart: async (child) => {
        port = child.info.port;
        if (s3Endpoint) await child.ask({ type: 's3', endpoint: s3Endpoint }, 5000, false);
      },
    },
  );
  const { url } = supervised.current()!.info;
  return {
    url,
    port,
    async useS3(endpoint) {
      s3Endpoint = endpoint;
      await supervised.current()?.ask({ type: 's3', endpoint }, 5000, false);
    },
    health: () => ({ status: supervised.status(), required: false }),
    close: () => supervised.stop(5000),
  };
}

/**
 * The batch runner's V8 limits. A heap limit below V8's 4 GB default (this machine's) makes V8 grow the heap
 * by a smaller factor after each collection (about 1.6 instead of 4): measured on a 50 MiB bench:batch, the
 * runner peaked at 176 MiB instead of 268–281 MiB, at the same items per second. 1 GiB still holds the
 * largest batch the runner keeps in memory (a provider batch: 10,000 items, 150 MB). A 4 MiB semi-space
 * (16 by default) keeps the young generation small: items live for a provider call, long enough to be copied
 * once or twice whatever its size.
 */
export const BATCH_RUNNER_NODE_FLAGS = ['--max-old-space-size=1024', '--max-semi-space-size=4'];

export interface BatchRunner {
  /** Starts a batch's state machine in the runner (a batch submitted while it restarts is started by its scan of unfinished batches when it is back). */
  executions: BatchExecutions;
  health(): PartHealth;
  /** Stops it as stop() does and starts it again (it queues the shards of unfinished batches again). */
  restart(timeoutMs: number): Promise<void>;
  /** Tells it to stop: no new item starts, those running get `graceMs` (then are told to end) and settle; killed after `timeoutMs`. */
  stop(timeoutMs: number): Promise<void>;
}

export async function startBatchRunner(
  options: BatchChildOptions & { leaseOwner: string | undefined; nodeFlags?: string[] },
  wiring: { log: (line: string) => void; generation: (record: unknown, timestamp: number) => void; beforeRestart?: () => Promise<unknown> },
): Promise<BatchRunner> {
  const { leaseOwner, nodeFlags, ...settings } = options;
  const supervised = await supervise(
    () => startChild({
      name: 'the batch runner', entry: localModule('./batch-child.ts'),
      env: {
        ...process.env,
        BATCH_CHILD_OPTIONS: JSON.stringify(settings),
        // Its leases and holds are its own: a restart takes back exactly what it held.
        ...(leaseOwner ? { GATEWAY_LEASE_OWNER: `${leaseOwner}-batches` } : {}),
      },
      nodeFlags: nodeFlags ?? BATCH_RUNNER_NODE_FLAGS,
      background: true,
      output: wiring.log,
      onMessage: (message: FromChild) => {
        if (message.type === 'log') wiring.log(message.line as string);
        else if (message.type === 'generation') wiring.generation(message.record, message.timestamp as number);
      },
    }),
    // Before a runner that died is replaced, the meter aggregator applies the records it wrote, so that the new
    // one takes back exactly what its leases did not spend.
    { name: 'the batch runner', log: wiring.log, ...(wiring.beforeRestart ? { beforeRestart: wiring.beforeRestart } : {}) },
  );
  return {
    executions: {
      async start(batchId, startOptions = {}) {
        await supervised.current()?.ask({ type: 'start', batchId, requeue: startOptions.requeue === true }, 10_000, undefined);
      },
    },
    health: () => ({
      status: supervised.status(), required: false,
      ...(supervised.status() === 'ok' ? {} : { message: 'the batch runner is not running: batches wait until it is back' }),
    }),
    restart: (timeoutMs) => supervised.restart(timeoutMs),
    stop: (timeoutMs) => supervised.stop(timeoutMs),
  };
}

export interface AwsStandInsProcess extends AwsStandIns {
  health(): PartHealth;
  /** Called after the stand-ins were started again (their queue is empty: what was queued is gone). */
  onRestart(handler: () => void): void;
  close(): Promise<void>;
}

/** S3, SQS and KMS stand-ins in their own process, restarted on the same ports when it dies. */
export async function startAwsStandIns(options: AwsChildOptions, output: (line: string) => void): Promise<AwsStandInsProcess> {
  let ports: Pick<AwsChildOptions, 's3Port' | 'sqsPort' | 'kmsPort'> = {};
  let first = true;
  let restarted: () => void = () => undefined;
  const supervised = await supervise<AwsStandIns>(
    () => startChild({ name: 'the S3, SQS and KMS stand-ins', entry: localModule('./aws-child.ts'), env: { ...process.env, AWS_CHILD_OPTIONS: JSON.stringify({ ...options, ...ports }) }, output }),
    {
      name: 'the S3, SQS and KMS stand-ins',
      log: output,
      onStart: (child) => {
        const port = (url: string) => Number(new URL(url).port);
        ports = { s3Port: port(child.info.s3Endpoint), sqsPort: port(child.info.sqsEndpoint), kmsPort: port(child.info.kmsUrl) };
        if (!first) setImmediate(() => restarted());
        first = false;
      },
    },
  );
  return {
    ...supervised.current()!.info,
    // Required: without KMS the vault and BYOK cannot serve.
    health: () => ({ status: supervised.status(), required: true, ...(supervised.status() === 'ok' ? {} : { message: 'the S3, SQS and KMS stand-ins are not running' }) }),
    onRestart: (handler) => { restarted = handler; },
    close: () => supervised.stop(5000),
  };
}
