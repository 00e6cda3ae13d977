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

/** What the function runs as: the same for every invocation of a process, so read once. */
export interface FunctionSettings {
  memoryMb: number;
  architecture: Architecture;
  region: string;
}

/**
 * On Lambda the memory and region come from the runtime's environment; locally (npm start) from
 * GATEWAY_LAMBDA_MEMORY_MB / GATEWAY_LAMBDA_ARCHITECTURE / AWS_REGION, defaulting to what `cdk deploy`
 * would configure, so local figures estimate the AWS bill.
 */
export function functionSettingsFromEnv(env: NodeJS.ProcessEnv): FunctionSettings {
  const onLambda = Boolean(env.AWS_LAMBDA_FUNCTION_NAME);
  return {
    memoryMb: Number(env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE ?? env.GATEWAY_LAMBDA_MEMORY_MB ?? 1024) || 1024,
    architecture: onLambda
      ? (process.arch === 'arm64' ? 'arm64' : 'x86_64')
      : (env.GATEWAY_LAMBDA_ARCHITECTURE === 'x86_64' ? 'x86_64' : 'arm64'),
    region: env.AWS_REGION || 'local',
  };
}

let processSettings: FunctionSettings | undefined;

/** Starts the accounting of an invocation, with the process's function settings (read on first use). */
export function startInvocation(settings: FunctionSettings = processSettings ??= functionSettingsFromEnv(process.env)): Invocation {
  invocations += 1;
  const coldStart = invocations === 1;
  return {
    startedAt: performance.now(),
    coldStart,
    initMs: coldStart ? Math.round(INIT_MS) : null,
    memoryMb: settings.memoryMb,
    architecture: settings.architecture,
    region: settings.region,
    responseBytes: 0,
  };
}
