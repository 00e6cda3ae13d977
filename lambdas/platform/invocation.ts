// One Lambda invocation as the handler sees it (start time, cold start, memory, architecture, region, bytes
// streamed): the facts billing/infrastructure.ts prices a request's infrastructure cost from.
import { performance } from 'node:perf_hooks';

export type Architecture = 'arm64' | 'x86_64';

/** One Lambda invocation as the handler sees it; the stream producer adds to responseBytes. */
export interface Invocation {
  /** performance.now() when the handler started. */
  startedAt: number;
  coldStart: boolean;
  /** The INIT phase this invocation paid for (billed since August 2025); null when warm. */
  initMs: number | null;
  memoryMb: number;
  architecture: Architecture;
  region: string;
  responseBytes: number;
}

let invocations = 0;
/**
 * Time from process start until this module was evaluated, i.e. the function's INIT phase (runtime start
 * plus module loading), which Lambda reports as Init Duration. Locally it also holds npm start's own start-up.
 */
const INIT_MS = performance.now();

/**
 * Starts the accounting of an invocation. On Lambda the memory and region come from the runtime's
 * environment; locally (npm start) from GATEWAY_LAMBDA_MEMORY_MB / GATEWAY_LAMBDA_ARCHITECTURE /
 * AWS_REGION, defaulting to what `cdk deploy` would configure, so local figures estimate the AWS bill.
 */
export function startInvocation(env: NodeJS.ProcessEnv = process.env): Invocation {
  invocations += 1;
  const startedAt = performance.now();
  const onLambda = Boolean(env.AWS_LAMBDA_FUNCTION_NAME);
  const memoryMb = Number(env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE ?? env.GATEWAY_LAMBDA_MEMORY_MB ?? 1024) || 1024;
  const architecture: Architecture = onLambda
    ? (process.arch === 'arm64' ? 'arm64' : 'x86_64')
    : (env.GATEWAY_LAMBDA_ARCHITECTURE === 'x86_64' ? 'x86_64' : 'arm64');
  const coldStart = invocations === 1;
  return {
    startedAt,
    coldStart,
    initMs: coldStart ? Math.round(INIT_MS) : null,
    memoryMb,
    architecture,
    region: env.AWS_REGION || 'local',
    responseBytes: 0,
  };
}

