// Wires the inference engine once per process from the environment.
import { setTimeout as delay } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { loadCatalog } from '../catalog/catalog-config.js';
import { AdapterRegistry, envCredentials } from '../providers/registry.js';
import { GenerationRepository } from '../store/generation-repository.js';
import { EndpointHealth, StickySessions } from './endpoint-health.js';
import { GenerationRecorder } from './generation-recorder.js';
import { DEFAULT_ENGINE_CONFIG, type EngineConfig, type EngineDeps } from './engine.js';

function positiveInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer (milliseconds), got "${raw}"`);
  return value;
}

export function engineConfigFromEnv(env: NodeJS.ProcessEnv = process.env): EngineConfig {
  return {
    ...DEFAULT_ENGINE_CONFIG,
    firstByteTimeoutMs: positiveInt(env, 'GATEWAY_UPSTREAM_TIMEOUT_MS', DEFAULT_ENGINE_CONFIG.firstByteTimeoutMs),
    streamIdleTimeoutMs: positiveInt(env, 'GATEWAY_STREAM_IDLE_TIMEOUT_MS', DEFAULT_ENGINE_CONFIG.streamIdleTimeoutMs),
    keepAliveMs: positiveInt(env, 'GATEWAY_KEEPALIVE_MS', DEFAULT_ENGINE_CONFIG.keepAliveMs),
    region: env.AWS_REGION || DEFAULT_ENGINE_CONFIG.region,
  };
}

/** On Lambda one invocation serves one request, so records are written at once; a local process batches over a few ms. */
function recordWindowMs(env: NodeJS.ProcessEnv): number {
  if (env.GATEWAY_RECORD_BATCH_WINDOW_MS !== undefined && env.GATEWAY_RECORD_BATCH_WINDOW_MS !== '') {
    const value = Number(env.GATEWAY_RECORD_BATCH_WINDOW_MS);
    if (!Number.isInteger(value) || value < 0) throw new Error(`GATEWAY_RECORD_BATCH_WINDOW_MS must be a non-negative integer, got "${env.GATEWAY_RECORD_BATCH_WINDOW_MS}"`);
    return value;
  }
  return env.AWS_LAMBDA_FUNCTION_NAME ? 0 : 5;
}

export function createEngineDeps(db: DynamoDBDocumentClient, tableName: string, env: NodeJS.ProcessEnv = process.env, log: (line: string) => void = console.log): EngineDeps {
  const generations = new GenerationRepository(db, tableName);
  return {
    catalog: loadCatalog(env),
    adapters: new AdapterRegistry(envCredentials(env)),
    health: new EndpointHealth(),
    sessions: new StickySessions(),
    generations,
    recorder: new GenerationRecorder(generations, recordWindowMs(env), log),
    config: engineConfigFromEnv(env),
    now: () => performance.now(),
    random: Math.random,
    sleep: (ms, signal) => delay(ms, undefined, { signal }).catch(() => undefined),
    log,
  };
}
